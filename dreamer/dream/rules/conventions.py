"""Conventions: how things are done, stated once in the user's words ("every timestamp column is
stored in UTC", "we name branches feat/…", "one folder per client"), told apart from a decision
("we go with X", "X after all"), which is news for Active Context, not a standing rule.

A convention holds for every case: its clause begins with what it is about, taken whole
("every invoice", "each chapter", "all receipts", "one file per chapter") or with "we" and a verb
of habit ("we keep", "we name"), then says how it is; or someone wants a whole class done a way
("the auditor wants all receipts scanned"). A request ("check every quote") begins with
its verb and is no convention. The cue words are data: each entry of ``EVERY``, ``HOW``,
``HABITS`` and ``CHANGE`` has a case in tests/dream/test_rules_conventions.py.
"""

from __future__ import annotations

import re

from dreamer.memory.provenance import sentences
from dreamer.support.words import STOP_WORDS

# Words that take a whole class of things ("every figure goes in figures/").
EVERY = ("every", "each", "all", "any")
# Verbs that say how such a class is ("is stored", "goes in", "gets two reviewers"), in either
# person ("go" and "goes").
HOW = (
    "is", "are", "has", "have", "must", "should", "go", "get", "stay", "live", "belong", "need",
    "end", "start",
)  # fmt: skip
# Verbs of habit after "we" or "I" ("we keep receipts in the blue folder").
HABITS = ("use", "keep", "name", "store", "put", "file", "label", "tag", "write", "follow")
# Words that make a sentence a change at one time, not how things are: a decision or its
# reversal ("we use Yarn now", "the tiles go in the hall after all", "we went with …").
CHANGE = (
    "now", "instead", "after all", "anymore", "no longer", "switched", "settled", "decided",
    "go with", "went with", "again",
)  # fmt: skip

_START = r"(?:^|[:;,(—–]\s*|\b(?:and|but|so)\s+)"
_NUMBER = r"(?:\d[\d,.]*|two|three|four|five|six|seven|eight|nine|ten|both)"
_VERB = rf"(?:goes|(?:{'|'.join(HOW)})s?)"
_WHOLE_CLASS = re.compile(
    rf"{_START}(?:{'|'.join(EVERY)})\s+(?:(?!{_NUMBER}\b)[\w'/.-]+\s+){{1,4}}?{_VERB}\b",
    re.IGNORECASE,
)
_EACH_PER = re.compile(rf"{_START}(?:one|a|an)\s+(?:[\w'/.-]+\s+){{1,3}}?per\s+\w+", re.I)
# "one … per …" after a subject ("our lab keeps one notebook per experiment"), not after a
# request's verb ("add a test per endpoint").
_SUBJECT_PER = re.compile(
    r"^(?:we|i|our|my|the|they)\b[^:;]*?\b(?:one|a|an)\s+(?:[\w'/.-]+\s+){0,2}?per\s+\w+",
    re.IGNORECASE,
)
_WE_HABIT = re.compile(
    rf"{_START}(?:we|I)\s+(?:always\s+|usually\s+|normally\s+)?(?:{'|'.join(HABITS)})\b",
    re.IGNORECASE,
)
# Someone's standing wish over a whole class ("the auditor wants all receipts scanned").
_WANTS_EVERY = re.compile(
    rf"\b(?:wants?|expects?|requires?)\s+(?:{'|'.join(EVERY)})\s+(?!{_NUMBER}\b)", re.I
)
_CHANGE = re.compile(r"\b(?:" + "|".join(map(re.escape, CHANGE)) + r")\b", re.IGNORECASE)


def stated(text: str) -> str | None:
    """The sentences of ``text`` that state how things are always done (not a request, a
    report or a decision: a sentence with a word of change is none), or None."""
    kept = [
        sentence
        for sentence in sentences(text)
        if not sentence.endswith("?")
        and sentence.split()[-1].lower() not in STOP_WORDS  # "every receipt goes in the"
        and not _CHANGE.search(sentence)
        and any(
            p.search(sentence)
            for p in (_WHOLE_CLASS, _EACH_PER, _SUBJECT_PER, _WE_HABIT, _WANTS_EVERY)
        )
    ]
    return " ".join(kept) or None


def changes(text: str) -> bool:
    """Whether ``text`` speaks of a change at one time (a decision, a reversal)."""
    return bool(_CHANGE.search(text))


# A standing request in the imperative: a verb of habit ("Keep commit messages under 72
# characters", "Use the staging bucket for uploads", "Prefer SQLAlchemy 2.0 style queries"),
# or a choice against another ("Write tests with pytest, not unittest").
_HABIT = re.compile(
    r"^(?:please\s+)?(?:keep|use|prefer|avoid|stick to|store|follow|name)\s+\w"
    r"|^(?:please\s+)?\w+\s+[^.?!]*\b(?:with|in|for)\s+[^.?!,]+,\s+not\s+\w",
    re.IGNORECASE,
)


# Words that make a request hold for every case, not one step: "Run ruff before every
# commit", "Ask me before you touch infra/", "No force-pushes to shared branches".
_GENERAL = re.compile(
    r"\b(?:every|each|all|any|anything|whenever|before you|after you|from here on|"
    r"going forward|by default)\b|^\W*no\s+\w",
    re.IGNORECASE,
)


def habit(text: str) -> bool:
    """Whether ``text`` asks for a habit rather than one step of work."""
    return bool(_HABIT.match(text.strip()) or _GENERAL.search(text))
