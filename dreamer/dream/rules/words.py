"""Words of notes and state lines: labels, list items, topic names (content words and stems
are ``dreamer.support.words``)."""

from __future__ import annotations

import re

from dreamer.dream import dates
from dreamer.support.words import NOTE_STOP_WORDS


def _first_line(text: str, words: int = 10) -> str:
    line = text.strip().split("\n", 1)[0]
    parts = line.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


LABELS = frozenset(
    "past friction breakthrough deadline goal task note decided decision update todo done open "
    "question upcoming auto hormonal event spike peaked correction clipped characters memory_get "
    "whole".split()
)


def nameable(word: str) -> bool:
    """A word that may name a topic: not a label, a date, a number or a generic word."""
    lower = word.lower()
    return not (
        lower in LABELS
        or lower in dates.MONTHS
        or lower.rstrip("s") in dates.WEEKDAYS
        or any(ch.isdigit() for ch in lower)
        or lower in NOTE_STOP_WORDS
    )


def context_lines(body: str) -> list[str]:
    """The items of an Active Context body: bullet lines, else non-empty lines."""
    lines = [line for line in body.split("\n") if line.strip()]
    bullets = [line for line in lines if re.match(r"^\s*([-*•]|\d+[.)])\s+", line)]
    return bullets or lines


def topic_of(line: str) -> str:
    """A short topic name for an Active Context line."""
    text = re.sub(r"^\s*([-*•]|\d+[.)])\s+", "", line).strip()
    text = re.sub(r"[*_`]+", "", text)
    text = re.sub(r"^(Friction|Breakthrough|Deadline|Goal|Task|Note):\s*", "", text)
    text = re.split(r"\s+[—–-]\s+|:\s|;\s|\.\s", text, maxsplit=1)[0].strip().rstrip(".:")
    return _first_line(text, 8)


_CAPTURE = re.compile(r"(?m)^(?:User|Task for subagent [\w-]+):\s")


def is_capture(text: str) -> bool:
    """Whether text is an exchange captured from a session transcript ("User: …")."""
    return bool(_CAPTURE.search(text))
