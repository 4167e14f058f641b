"""Words of notes and state lines: content words, stems, labels, list items, topic names."""

from __future__ import annotations

import re

from dreamer.dream import dates
from dreamer.retrieval.embed import _stem

WORD = re.compile(r"[^\W_][\w'’-]*[^\W_]|[^\W_]", re.UNICODE)


STOP = frozenset(
    "a about above after again against all also am an and any are as at be because been before "
    "being below between both but by can could did do does doing done down during each else "
    "even ever few for from further get gets got had has have having he her here hers herself "
    "him himself his how i if in into is it its itself just let lets like me more most much must "
    "my myself need needs new no nor not now of off on once one only or other our ours out over "
    "own per please same she should so some still such than that the their theirs them then there "
    "these they this those through to too under until up upon us use very via was we were what "
    "when where which while who whom why will with within without would yet you your yours "
    "user users agent today tomorrow yesterday week weeks day days time times thing things "
    "really maybe already again said says told asked wants want wanted make made going "
    "next last first two three".split()
)


def keywords(text: str) -> list[str]:
    """The content words of text, lower-cased, in first-seen order, stop words removed."""
    out: dict[str, None] = {}
    for word in WORD.findall(text.lower()):
        word = word.strip("'’-")
        if len(word) < 3 or word in STOP or word.isdigit():
            continue
        out[word] = None
    return list(out)


def stems(text: str) -> set[str]:
    """Stemmed content words of text, for overlap tests."""
    return {_stem(word) for word in keywords(text)}


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
        or lower in STOP
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
