"""Day digests: the lines of one busy day that leave Active Context together, as one dated
pointer of what they established ("22 October 2023: Ana: I passed the agency interviews last
Friday (20 October); …") instead of a pointer per line that names a topic and not its facts."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from dreamer.dream import dates
from dreamer.dream.rules.lines import LABEL_PREFIX
from dreamer.dream.rules.words import LABELS
from dreamer.memory.state import Pointer
from dreamer.support.times import parse_iso
from dreamer.support.words import keywords, stems

DIGEST_LINES = 4  # lines of one day leaving at once that make one digest, not a pointer each
DIGEST_WORDS = 20  # words of a digest's clauses (whole clauses only)
CLAUSE_WORDS = 18  # a longer clause is left out of a digest rather than cut
MIN_GAIN = 2  # new content words a clause must bring to join a digest

_MONTH = "|".join(sorted(dates.MONTHS, key=len, reverse=True))
# A date with its year heading a line, after an optional time of day ("9:55 am on 22 October,
# 2023", "2026-03-12", "March 12, 2026 14:30"): the day the line was written.
_STAMP = re.compile(
    r"^(?:\d{1,2}(?::\d{2})?\s*(?:am|pm)?\s+(?:on\s+)?)?"
    r"(?:(?P<iso>\d{4}-\d{2}-\d{2})"
    rf"|(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<m>{_MONTH})\.?,?\s+(?P<y>\d{{4}})"
    rf"|(?P<m2>{_MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{{4}}))"
    r"(?:[T ]\d{1,2}:\d{2}(?::\d{2})?Z?)?\s*[:,—–-]?\s+",
    re.IGNORECASE,
)
# Who said it, heading the rest of a line ("Ana: …", "Ana Lima: …"); a label is no speaker.
_SPEAKER = re.compile(r"^(?P<who>[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?):\s+")
# A sentence ends at ".", "!", "?" or ";" before a space, not after a title or an initial
# ("Dr. Okafor", "J. Lee", "Mrs. Diaz") or "e.g." / "i.e.", which would leave a torn clause.
_CLAUSE = re.compile(r"(?<![A-Z][a-z]\.)(?<![A-Z]\.)(?<!Mrs\.)(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?;])\s+")
# Words that say how a moment felt, not what happened: they make no clause worth keeping.
_CHATTER = frozenset(
    "awesome amazing great glad cool nice lovely wow yeah yes hey hi hello thanks thank sure "
    "totally super happy fun wonderful fantastic incredible hear sounds sound feel feeling "
    "felt good best love loved oh ok okay haha lol pretty true agree absolutely exactly "
    "appreciate means meant mean inspiring proud stuff kinda sorry oops whoa stunning beautiful "
    "cute wish hope glad cheers congrats congratulations dear gosh omg yay".split()
)
_RELATIVE = re.compile(
    r"\b(?P<word>yesterday|last night|last (?P<day>" + "|".join(dates.WEEKDAYS) + r"))\b(?! \()",
    re.IGNORECASE,
)


def stamp(line: str) -> tuple[date | None, str]:
    """The day a date stamp heading a line names (None without one) and the line after it."""
    text = LABEL_PREFIX.sub("", re.sub(r"^\s*[-*•]\s+", "", line).strip())
    found = _STAMP.match(text)
    if not found:
        return None, text
    try:
        if found["iso"]:
            day = date.fromisoformat(found["iso"])
        elif found["d"]:
            day = date(int(found["y"]), dates.MONTHS[found["m"].lower()], int(found["d"]))
        else:
            day = date(int(found["y2"]), dates.MONTHS[found["m2"].lower()], int(found["d2"]))
    except ValueError:
        return None, text
    return day, text[found.end() :]


def day_label(day: date) -> str:
    """A day as a digest names it: "22 October 2023"."""
    return f"{day.day} {day:%B %Y}"


def resolved(clause: str, day: date) -> str:
    """A clause with its relative days dated ("yesterday" → "yesterday (21 October)")."""

    def when(match: re.Match[str]) -> str:
        if match["day"]:
            back = (day.weekday() - dates.WEEKDAYS.index(match["day"].lower())) % 7 or 7
        else:
            back = 1
        then = day - timedelta(days=back)
        return f"{match[0]} ({then.day} {then:%B})"

    return _RELATIVE.sub(when, clause)


def _clauses(text: str) -> list[str]:
    """The whole sentences of a line; a last one cut with "…" is no sentence."""
    parts = [p.strip() for p in _CLAUSE.split(text.strip()) if p.strip()]
    if parts and parts[-1].endswith("…"):
        parts.pop()
    return [p for p in parts if not p.endswith("?") and "[" not in p]


def _facts(clause: str, common: set[str]) -> dict[str, int]:
    """The content stems of a clause that say what happened (no labels, feelings, dates or the
    speakers' names), each weighing 2 when it names something (a capitalised word inside the
    clause, a number) and 1 otherwise."""
    named = {w.lower() for w in re.findall(r"(?<=\s)[A-Z][\w'’-]+|\b\w*\d\w*", clause)}
    out: dict[str, int] = {}
    for word in keywords(clause):
        if word in _CHATTER or word in LABELS or word in common or word in dates.MONTHS:
            continue
        if word.rstrip("s") in dates.WEEKDAYS:
            continue
        for s in stems(word):
            out[s] = max(out.get(s, 0), 2 if word in named else 1)
    return out


def _gain(facts: dict[str, int], have: set[str]) -> int:
    return sum(weight for s, weight in facts.items() if s not in have)


def digest(day: date, lines: list[str]) -> Pointer | None:
    """One pointer for a day's lines: the clauses that bring the most new facts for their
    length, in the order they were said, each speaker named once per run; None when no clause
    says enough."""
    said: list[tuple[int, str, str]] = []  # (order, speaker, clause)
    for line in lines:
        _, text = stamp(line)
        who = _SPEAKER.match(text)
        speaker = who["who"] if who and who["who"].lower() not in LABELS else ""
        body = text[who.end() :] if who and speaker else text
        for clause in _clauses(body):
            if len(clause.split()) <= CLAUSE_WORDS:
                said.append((len(said), speaker, clause))
    # The speakers' names and their short forms ("Mel" for Melanie) are in every line.
    names = {w for _, speaker, _ in said for w in keywords(speaker)}
    every = {w for _, _, clause in said for w in keywords(clause)}
    common = names | {w for w in every if len(w) >= 3 and any(n.startswith(w) for n in names)}
    facts = {s: _facts(s[2], common) for s in said}
    chosen: list[tuple[int, str, str]] = []
    have: set[str] = set()
    used = 0
    while True:
        best = max(
            (s for s in said if s not in chosen and used + len(s[2].split()) <= DIGEST_WORDS),
            key=lambda s: (_gain(facts[s], have) / len(s[2].split()) ** 0.5, -s[0]),
            default=None,
        )
        if best is None or _gain(facts[best], have) < MIN_GAIN:
            break
        chosen.append(best)
        have |= set(facts[best])
        used += len(best[2].split())
    if not chosen:
        return None
    parts, last = [], None
    for _, speaker, clause in sorted(chosen):
        text = resolved(clause.rstrip(".;"), day)
        parts.append(f"{speaker}: {text}" if speaker and speaker != last else text)
        last = speaker or last
    richest = max(chosen, key=lambda s: (sum(facts[s].values()), -s[0]))
    words = [w for w in keywords(richest[2]) if w not in _CHATTER and w not in common]
    words = (words or keywords(richest[2]))[:4]
    return Pointer(f"{day_label(day)}: {'; '.join(parts)}", " ".join(words))


def is_digest(pointer: Pointer) -> bool:
    """Whether a pointer is a day digest (its topic headed by a day and a colon)."""
    day, _ = stamp(pointer.topic)
    return day is not None and pointer.topic.startswith(day_label(day) + ":")


def day_of(
    line: str,
    fading: dict[str, dict[str, Any]],
    known: dict[str, dict[str, float]],
    key: str,
    now: datetime,
) -> date | None:
    """The day a leaving line was written: its stamp, else when its note was last seen (a
    fading line) or how old its note is (a new note that did not fit)."""
    day, _ = stamp(line)
    if day is not None:
        return day
    if line in fading and fading[line].get("last_seen"):
        try:
            return parse_iso(fading[line]["last_seen"]).date()
        except ValueError:
            return None
    if key in known:
        return (now - timedelta(days=known[key]["age_days"])).date()
    return None
