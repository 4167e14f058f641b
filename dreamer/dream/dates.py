"""Dates a note mentions, read against when it was written ("Friday" in a Tuesday note).

Used to keep what lies ahead in view: an event or deadline with a date still to come is never
"fading", and leaves Active Context only once its date has passed. English forms only:
``2026-03-16``, ``March 16``, ``16 March``, ``Mar 16``, a range (``April 9 to 13``,
``April 9-13``), weekdays (the next one after the note; "every Friday" and "on Thursdays" are
habits, not dates, and so are "on a Tuesday", "any Friday", a span of the week ("Monday to
Thursday") and a weekday in a weekly rhythm), ``today``, ``tomorrow``,
``next week``. A month and day without a year take the year that puts them nearest the note
(a note of December 30 saying "January 4" means the next year).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DAY = re.compile(
    rf"\b(?P<month>{_MONTH})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"(?:\s*(?:-|–|to|until|through)\s*(?:(?P<month2>{_MONTH})\.?\s+)?(?P<day2>\d{{1,2}})\b)?",
    re.IGNORECASE,
)
_DAY_MONTH = re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<month>{_MONTH})\b", re.I)
_WEEKDAY = re.compile(
    r"\b(?P<every>(?:every|each|a|any)\s+)?(?P<next>next\s+)?(?P<day>" + "|".join(WEEKDAYS) + r")"
    r"(?P<plural>s)?\b",
    re.I,
)
_DAYS = "|".join(WEEKDAYS)
# "Monday to Thursday", "Tuesday-Friday", "weekly on Friday": a pattern of the week, not an event.
_SPAN = re.compile(
    rf"\b(?:{_DAYS})s?\s*(?:-|–|to|through|until|till)\s*(?:{_DAYS})s?\b", re.IGNORECASE
)
_RHYTHM = re.compile(r"\b(?:weekly|fortnightly|every (?:other )?week|each week)\b", re.I)
_RELATIVE = re.compile(r"\b(today|tonight|tomorrow|next week)\b", re.IGNORECASE)


def _on(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _nearest(month: int, day: int, written: date) -> date | None:
    options = [
        d for y in (written.year - 1, written.year, written.year + 1) if (d := _on(y, month, day))
    ]
    if not options:
        return None
    # Prefer a date up to ~10 months ahead over one long past.
    return min(options, key=lambda d: abs((d - written).days - 60))


def names_a_date(text: str) -> bool:
    """Whether ``text`` holds anything ``mentioned`` reads as a date (when not, it finds none,
    whatever day the text was written: a caller need not look that day up)."""
    return any(
        pattern.search(text) for pattern in (_ISO, _MONTH_DAY, _DAY_MONTH, _WEEKDAY, _RELATIVE)
    )


def mentioned(text: str, written: datetime | date) -> list[date]:
    """Every date ``text`` names, read against the day it was written, in text order."""
    day = written.date() if isinstance(written, datetime) else written
    found: list[tuple[int, date]] = []
    taken: list[tuple[int, int]] = []
    for match in _ISO.finditer(text):
        if when := _on(int(match[1]), int(match[2]), int(match[3])):
            found.append((match.start(), when))
            taken.append(match.span())
    for match in _MONTH_DAY.finditer(text):
        month = MONTHS[match["month"].lower()]
        if when := _nearest(month, int(match["day"]), day):
            found.append((match.start(), when))
        if match["day2"]:
            month2 = MONTHS[match["month2"].lower()] if match["month2"] else month
            if end := _nearest(month2, int(match["day2"]), day):
                found.append((match.start() + 1, end))
        taken.append(match.span())
    for match in _DAY_MONTH.finditer(text):
        if any(a <= match.start() < b for a, b in taken):
            continue
        if when := _nearest(MONTHS[match["month"].lower()], int(match["day"]), day):
            found.append((match.start(), when))
    spans = [match.span() for match in _SPAN.finditer(text)]
    rhythm = _RHYTHM.search(text) is not None
    for match in _WEEKDAY.finditer(text):
        after = text[match.end() :].lstrip(" ,")
        if any(a <= match.start() < b for a, b in taken) or _MONTH_DAY.match(after):
            continue  # "Monday March 16": the date already says it
        if rhythm or any(a <= match.start() < b for a, b in spans):
            continue  # "on site Monday to Thursday", "weekly on Friday": the week's pattern
        if match["every"] or match["plural"]:
            continue  # "every Friday", "on Thursdays", "on a Tuesday": a habit, not an event
        ahead = (WEEKDAYS.index(match["day"].lower()) - day.weekday()) % 7 or 7
        found.append((match.start(), day + timedelta(days=ahead)))
    for match in _RELATIVE.finditer(text):
        word = match[1].lower()
        shift = {"today": 0, "tonight": 0, "tomorrow": 1, "next week": 7}[word]
        found.append((match.start(), day + timedelta(days=shift)))
    return [when for _, when in sorted(found, key=lambda pair: pair[0])]


def ahead(text: str, written: datetime | date, now: datetime) -> date | None:
    """The last date ``text`` names that is today or later (None when all have passed)."""
    today = now.date()
    coming = [when for when in mentioned(text, written) if when >= today]
    return max(coming) if coming else None
