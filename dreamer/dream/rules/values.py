"""Changed values: a newer note on the same subject naming a different date supersedes the
older one, whatever words say it changed ("now starts on June 8", "can't make the 6th and will
come on Thursday October 8 instead").

Same subject: the two share at least ``SHARED_STEMS`` content words (dates and numbers aside),
do not name different people or firms, and the embedder finds them close (cosine of
``SIMILARITY`` or more). Changed value: when the newer note was written, the older one's date
was still ahead, and the newer names none of the older's dates: a plan changed before it
happened. (A date already passed is history, not a plan: "the export was due March 20" and a
later "UAT starts March 30" both stay true; so do last Friday's and this Friday's status.)
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import numpy as np

from dreamer.dream import dates
from dreamer.retrieval.embed import Embedder
from dreamer.support.times import parse_iso
from dreamer.support.words import stem, stems

SHARED_STEMS = 2
SIMILARITY = 0.4
CALENDAR = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b(?:{'|'.join(dates.MONTHS)})\.?\s+\d{{1,2}}\b|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{'|'.join(dates.MONTHS)})\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][a-zà-ÿ'’-]+")
_WHEN_WORDS = frozenset(dates.MONTHS) | frozenset(dates.WEEKDAYS)


def _dates(text: str, at: str | None) -> set[date]:
    """The calendar dates a text names (a month and day, or ISO); a bare weekday is left out:
    "the Friday status" names a habit more often than a plan."""
    if not CALENDAR.search(text):
        return set()
    try:
        written = parse_iso(at) if at else None
    except ValueError:
        return set()
    return set(dates.mentioned(text, written)) if written is not None else set()


def _written(at: str | None) -> date | None:
    try:
        return parse_iso(at).date() if at else None
    except ValueError:
        return None


def _subject(text: str) -> set[str]:
    words = {w for w in stems(text) if not any(ch.isdigit() for ch in w)}
    return words - _WHEN_WORDS


def _names(text: str) -> set[str]:
    """Capitalised words but the first (and a label's), months and weekdays: who and where."""
    body = re.sub(r"^\s*(?:[-*•]\s+)?(?:[A-Z]\w{0,15}:\s+)?\S+", "", text)
    found = {w.lower().removesuffix("'s").removesuffix("’s") for w in _NAME.findall(body)}
    return found - _WHEN_WORDS


def find_changed_values(
    items: list[dict[str, Any]], embedder: Embedder | None
) -> list[dict[str, Any]]:
    """Pairs (older, newer), in the contradictions' shape, of kind ``value``."""
    if embedder is None:
        return []
    valued = [
        (item, values)
        for item in sorted(items, key=lambda i: (i["at"] or "", i["text"]))
        if (values := _dates(item["text"], item["at"]))
    ]
    if len(valued) < 2:
        return []
    vectors = embedder.embed([item["text"] for item, _ in valued])
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    found: list[dict[str, Any]] = []
    superseded: set[int] = set()
    for j in range(1, len(valued)):
        newer, new_values = valued[j]
        for i in range(j - 1, -1, -1):
            older, old_values = valued[i]
            if i in superseded or new_values & old_values or older["text"] == newer["text"]:
                continue
            written = _written(newer["at"])
            if written is None or max(old_values) <= written:
                continue  # the older date had passed: history, not a plan that changed
            shared = _subject(older["text"]) & _subject(newer["text"])
            old_names, new_names = _names(older["text"]), _names(newer["text"])
            if len(shared) < SHARED_STEMS or (
                old_names and new_names and not old_names & new_names
            ):
                continue
            if float(vectors[i] @ vectors[j]) < SIMILARITY:
                continue
            found.append(
                {"kind": "value", "subject": sorted(shared), "older": older, "newer": newer}
            )
            superseded.add(i)
            break
    return found


# --- amounts and choices --------------------------------------------------------------------

_AMOUNT = re.compile(
    r"(?P<cur>[£$€])\s?(?P<num>\d[\d,]*(?:\.\d+)?)\s?(?P<mult>k|m|bn|thousand|million)?\b",
    re.IGNORECASE,
)
_MULT = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "bn": 1e9}
# A newer statement that says a value moved ("can now spend", "instead of oak").
_CHANGE = re.compile(
    r"\b(?:now|instead|anymore|any more|after all|changed|change[sd]? (?:her|his|their|my|our)"
    r" mind|switch(?:ed|ing)?|raised|increased|lowered|reduced|cut|revised|updated|new|no longer"
    r"|rather than|went with|going with|gone with)\b",
    re.IGNORECASE,
)
_MIND = re.compile(r"\bchanged? (?:her|his|their|my|our|its) mind\b|\bswitch(?:ed|ing)?\b", re.I)
# Words after which a newer statement names the value it drops: "instead of oak", "not oak".
_DROPPED = re.compile(
    r"\b(?:instead of|rather than|from|not|no longer|no more|away from)\s+(?:the\s+|an?\s+)?"
    r"(?P<word>[^\W\d_][\w'-]+)",
    re.IGNORECASE,
)
WORD_SIMILARITY = 0.4  # two subject words the embedder finds this close name one subject


def _amounts(text: str) -> set[tuple[str, float]]:
    out = set()
    for match in _AMOUNT.finditer(text):
        number = float(match["num"].replace(",", ""))
        out.add((match["cur"], number * _MULT.get((match["mult"] or "").lower(), 1.0)))
    return out


class _Subjects:
    """Whether two statements share a subject: a content word in common, or (with an embedder)
    two words the embedder finds close ("spend" and "budget"), whatever words they use."""

    def __init__(self, texts: list[str], embedder: Embedder | None) -> None:
        self.words = {text: _subject(text) for text in texts}
        vocabulary = sorted(set().union(*self.words.values())) if self.words else []
        self.index = {word: n for n, word in enumerate(vocabulary)}
        self.vectors = None
        if embedder is not None and vocabulary:
            vectors = embedder.embed(vocabulary)
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
            self.vectors = vectors / norms

    def shared(self, one: str, other: str) -> set[str]:
        """The subject words of ``one`` that ``other`` holds, or names with a close word."""
        mine, theirs = self.words[one], self.words[other]
        same = mine & theirs
        if self.vectors is None or not mine or not theirs:
            return same
        rows = self.vectors[[self.index[w] for w in sorted(mine)]]
        cols = self.vectors[[self.index[w] for w in sorted(theirs)]]
        close = (rows @ cols.T).max(axis=1) >= WORD_SIMILARITY
        return same | {w for w, hit in zip(sorted(mine), close, strict=True) if hit}


def find_changed_words(
    items: list[dict[str, Any]], embedder: Embedder | None = None
) -> list[dict[str, Any]]:
    """Pairs (older, newer), kind ``value``, where a newer statement changes an amount
    ("£38,000" → "can now spend up to £45k") or drops a choice ("limestone instead of oak") that
    an older one states. One subject: a shared content word, or words the embedder finds close."""
    ordered = sorted(items, key=lambda i: (i["at"] or "", i["text"]))
    subjects = _Subjects([item["text"] for item in ordered], embedder)
    found: list[dict[str, Any]] = []
    superseded: set[int] = set()
    for j, newer in enumerate(ordered):
        text = newer["text"]
        if not _CHANGE.search(text):
            continue
        amounts = _amounts(text)
        # A name after "instead of" is who does it now ("the nurse, instead of Aoife"), not a
        # choice dropped.
        dropped = {stem(m["word"]) for m in _DROPPED.finditer(text) if m["word"].islower()}
        new_names = _names(text)
        best: tuple[int, int] | None = None  # (score, index)
        for i in range(j - 1, -1, -1):
            older = ordered[i]
            if (
                i in superseded
                or older["text"] == text
                or "?" in older["text"]  # a question is answered, not changed
                or (older["at"] or "") > (newer["at"] or "")
            ):
                continue
            old_names = _names(older["text"])
            if old_names and new_names and not old_names & new_names:
                continue
            shared = subjects.shared(text, older["text"])
            old_amounts = _amounts(older["text"])
            if amounts and old_amounts:
                currencies = {c for c, _ in amounts} & {c for c, _ in old_amounts}
                moved = currencies and not amounts & old_amounts
                score = len(shared) if moved and shared else 0
            elif not amounts and not old_amounts:
                named = dropped & stems(older["text"])
                score = (
                    2 * len(named) + len(shared) if named or (_MIND.search(text) and shared) else 0
                )
            else:
                score = 0
            if score and (best is None or score > best[0]):
                best = (score, i)
        if best is not None:
            older = ordered[best[1]]
            subject = sorted(subjects.shared(text, older["text"])) or sorted(
                dropped & stems(older["text"])
            )
            found.append({"kind": "value", "subject": subject, "older": older, "newer": newer})
            superseded.add(best[1])
    return found
