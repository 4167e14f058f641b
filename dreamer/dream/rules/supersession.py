"""Supersession: a newer statement about the same subject replaces an older one."""

from __future__ import annotations

import re
from typing import Any

from dreamer.dream.rules.people import ROLES
from dreamer.memory.state import WorkingMemory
from dreamer.store import Store
from dreamer.support.words import keywords, stem, stems

_PREFERENCE = re.compile(
    r"\b(prefers?|preferred|likes?|liked|dislikes?|hates?|loves?|wants?|favou?rite|"
    r"switch(?:ed|es)? to|instead|no longer|anymore|now uses?|call (?:me|him|her|them))\b",
    re.IGNORECASE,
)


_DEADLINE = re.compile(
    r"\b(deadline|due|moved to|moves to|moving to|changed to|postponed|pushed to|rescheduled|"
    r"launch date|ship date|"
    r"by (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|\d))\b",
    re.IGNORECASE,
)


_KIND_WORDS = {
    "prefer",
    "prefers",
    "preferred",
    "like",
    "likes",
    "liked",
    "dislike",
    "dislikes",
    "hate",
    "hates",
    "love",
    "loves",
    "want",
    "wants",
    "favorite",
    "favourite",
    "switch",
    "switched",
    "instead",
    "longer",
    "anymore",
    "uses",
    "deadline",
    "due",
    "moved",
    "postponed",
    "moves",
    "moving",
    "changed",
    "pushed",
    "rescheduled",
    "launch",
    "date",
    "ship",
    "call",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
}


def _kind(text: str) -> str | None:
    if _DEADLINE.search(text):
        return "deadline"
    if _PREFERENCE.search(text):
        return "preference"
    return None


_KIND_STEMS = frozenset(stem(w) for w in _KIND_WORDS)


def _subject(text: str) -> set[str]:
    """What a statement is about: its content stems, without kind words, names or roles
    (two notes that both name the user's manager are not about the same thing)."""
    names = {w.lower() for w in re.findall(r"\b[A-Z][a-z][\w'’-]*", text)}
    return stems(text) - _KIND_STEMS - {stem(w) for w in names | set(ROLES)}


_CHANGED = re.compile(
    r"\b(no longer|anymore|instead|now|switched|switches|moved|moves|changed|changes|postponed|"
    r"pushed|rescheduled|correction|corrected|from now on|new|replaced|replaces|rather than)\b",
    re.IGNORECASE,
)


def find_contradictions(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pairs (older, newer) of same-kind statements about the same subject that differ.

    Only a newer statement that says something changed ("no longer", "moved to", "now",
    "Correction:") supersedes: two directives about one subject may both hold.
    """
    typed = [(item, _kind(item["text"])) for item in items]
    typed = [(item, kind) for item, kind in typed if kind]
    typed.sort(key=lambda pair: (pair[0]["at"] or "", pair[0]["text"]))
    subjects = [_subject(item["text"]) for item, _ in typed]
    found: list[dict[str, Any]] = []
    superseded: set[str] = set()
    for j, (newer, kind) in enumerate(typed):
        if not _CHANGED.search(newer["text"]):
            continue
        newer_subject = subjects[j]
        for i in range(j - 1, -1, -1):
            older, older_kind = typed[i]
            if older_kind != kind or older["text"] in superseded:
                continue
            if " ".join(older["text"].split()).lower() == " ".join(newer["text"].split()).lower():
                continue
            older_subject = subjects[i]
            common = newer_subject & older_subject
            smaller = min(len(newer_subject), len(older_subject)) or 1
            if len(common) >= 2 or (len(common) == 1 and smaller <= 2):
                found.append(
                    {"kind": kind, "subject": sorted(common), "older": older, "newer": newer}
                )
                superseded.add(older["text"])
                break
    return found


def date_state_sides(store: Store, pair: dict[str, Any], old: WorkingMemory) -> None:
    """A side that came from the old state is dated when it was said, not at the last dream."""
    for side, other in (("older", "newer"), ("newer", "older")):
        item = pair[side]
        if item["source"] != "state":
            continue
        own = [w for w in keywords(item["text"]) if w not in set(keywords(pair[other]["text"]))]
        said = store.search.last_mention(own[:3]) if own else None
        pair[side] = {**item, "at": said, "in_state_since": old.last_dream}


_CORRECTION = re.compile(r"^\s*correction:\s*", re.IGNORECASE)


def current(text: str) -> str:
    """A correction as the value that holds now ("Correction: X, not Y; ..." → "X")."""
    if not _CORRECTION.match(text):
        return text
    body = _CORRECTION.sub("", text)
    head = re.split(r";\s|,\s+not\s|\s+not\s+|\s\(", body, maxsplit=1)[0].strip().rstrip(".")
    return head[0].upper() + head[1:] + "." if head else text


_CLAUSE = re.compile(r":\s+|;\s+|(?<=[.!?])\s+")
_NUMBER = re.compile(r"\d")
RESTATED_STEMS = 2  # words of the older statement a clause of the newer repeats on its own


def restated(newer: str, older: str) -> str:
    """The newer statement with its clause that restates the older value marked as past.

    "Kwame has gone off Weights & Biases after the free tier ran out: from now on log every
    run to the lab's MLflow server instead" names the old tool and the new one; as a line of
    the state it reads "From now on log every run to the lab's MLflow server instead
    (previously: Kwame has gone off Weights & Biases after the free tier ran out)". A clause
    restates the older when it alone holds at least ``RESTATED_STEMS`` of the older's content
    words, names no date or number and says nothing changed, while another clause does ("now",
    "instead": ``_CHANGED``); a statement that only says the new value is left as it is.
    """
    clauses = [c.strip() for c in _CLAUSE.split(newer.strip()) if c.strip()]
    if len(clauses) < 2:
        return newer
    old = stems(older)
    held = [stems(c) & old for c in clauses]
    for n, clause in enumerate(clauses):
        others = set().union(*(h for m, h in enumerate(held) if m != n))
        rest = [c for m, c in enumerate(clauses) if m != n]
        if _NUMBER.search(clause) or _CHANGED.search(clause):
            continue  # a date, a number or "now"/"instead" states the value that holds
        if not any(_CHANGED.search(c) for c in rest):
            continue  # no other clause says what holds now
        if len(held[n] - others) >= RESTATED_STEMS and len(stems(" ".join(rest))) >= 3:
            now = " ".join(c if c[-1:] in ".!?" else c + "." for c in rest)
            past = clause.rstrip(".!?;:")
            return f"{now[0].upper()}{now[1:-1]} (previously: {past})."
    return newer
