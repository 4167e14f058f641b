"""Routine: what stays a searchable crystal and never takes a line of Active Context or a pointer.

A note rated below ``ROUTINE_BELOW`` is chatter whatever it says. A note rated up to
``PLAIN_UP_TO`` is routine too when it names no calendar date and no one (no capitalised word
after its first): a step of work ("Place cards for tables 4 to 6 are done", "Packed the study:
9 boxes") that matters as a searchable record, not as something to hold in mind. A date or a
name lifts it: "Dentist for Daan on April 3" at 0.5 is an event ahead.
"""

from __future__ import annotations

import re

from dreamer.dream.rules.skills import ROUTINE_BELOW
from dreamer.dream.rules.values import CALENDAR

PLAIN_UP_TO = 0.5
_NAMED = re.compile(r"(?<=\s)[A-Z][\w'’-]+|\b[A-Z]{2,}\b")


def is_routine(text: str, importance: float) -> bool:
    """Whether a note is routine: below ROUTINE_BELOW, or plain (no date, no name) up to 0.5."""
    if importance < ROUTINE_BELOW:
        return True
    if importance > PLAIN_UP_TO:
        return False
    return not CALENDAR.search(text) and not _NAMED.search(text)
