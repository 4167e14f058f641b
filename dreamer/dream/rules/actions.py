"""Actions done: what a note reports or a session exchange did (its verb, object and day).

A note ("Backfilled the orders table") is one action each time it is written. A captured
exchange is one action: the person's request ("Backfill the orders table for March") and the
answer that reports doing it ("Backfilled orders for March") share the exchange's time, and the
request's words name the object. A bare verb counts as a request only when the same verb is
reported done somewhere ("Bump zod" is an action because something was "Bumped"), so a noun
leading a sentence is no verb. The same action twice on one day is one action.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dreamer.dream.rules.verbs import gerund, imperative_gerunds
from dreamer.dream.rules.words import nameable
from dreamer.memory.held import HELD
from dreamer.store import Crystal
from dreamer.support.bounds import head
from dreamer.support.words import DETERMINERS, NOTE_WORD, PREPOSITIONS, stem

_SUBJECTS = frozenset("i we also then finally again".split())
_ASKING = frozenset({"please", "let's", "lets"})  # before a request's verb
_CLAUSE = re.compile(r"[:;!\n]|\.(?=\s|$)")
_NUMBER = re.compile(r"\d")
_NAME = re.compile(r"[^\W\d_][\w-]*\d[\w-]*[^\W\d_][\w-]*|[^\W\d_]{3,}[\w-]*\d")  # boto3, log4j
UNSAID = frozenset({"tool"})  # a tool's output reports no action of anyone's
ASKERS = frozenset({"user"})  # whose bare verbs are requests


@dataclass(frozen=True)
class Said:
    """One sentence's action: its verb's -ing form, its object and what follows."""

    verb: str
    tokens: tuple[str, ...]  # the object as written, numbers kept, up to its preposition
    detail: frozenset[str]  # stems of every word after the verb: tells two actions apart
    valued: bool  # a number follows the object ("to 3.23", "for Q3")

    @property
    def words(self) -> list[str]:
        """The object's content words, as written."""
        return [t for t in self.tokens if (len(t) >= 2 and nameable(t)) or _NAME.fullmatch(t)]


@dataclass
class Action:
    """One action done on one day, with the crystal that says so: the request, else the
    answer or the note (a skill's evidence, one crystal an action)."""

    said: Said
    day: str
    crystal_id: int


def parse(text: str, known: set[str] | None = None) -> Said | None:
    """The action a sentence reports ("Bumped zod to 3.23") or, with ``known`` verbs (-ing
    forms reported elsewhere), requests ("Bump zod to 3.23"); None for anything else."""
    first = text.split("\n", 1)[0].strip()
    clause = _CLAUSE.split(first, maxsplit=1)[0]
    if clause.rstrip().endswith("?") or "?" in first[: len(clause) + 1]:
        return None  # a question asks, it reports nothing
    tokens = NOTE_WORD.findall(clause)[:16]
    lower = [t.strip("'’-").lower() for t in tokens]
    at = 1 if len(lower) > 1 and lower[0] in _SUBJECTS else 0
    if at >= len(lower):
        return None
    verb = gerund(lower[at])
    following = lower[at + 1 :]
    if verb is not None and lower[at].endswith("ing"):
        if not (following and following[0] in DETERMINERS):
            return None  # "Billing API returns 500" is a noun, not an action
    if verb is None and known is not None and at == 0:
        at = 1 if len(lower) > 1 and lower[0] in _ASKING else 0
        verb = next((g for g in imperative_gerunds(lower[at]) if g in known), None)
        following = lower[at + 1 :]
    if verb is None:
        return None
    start = at + 1
    while start < len(lower) and lower[start] in DETERMINERS:
        start += 1
    end = next((i for i in range(start, len(lower)) if lower[i] in PREPOSITIONS), len(lower))
    pairs = zip(tokens[start:end], lower[start:end], strict=True)
    obj = tuple(t for t, w in pairs if w not in DETERMINERS)
    said = Said(
        verb,
        obj[:6],
        frozenset(stem(w) for w in following if w not in DETERMINERS),
        bool(_NUMBER.search(" ".join(lower[end:]))),
    )
    return said if said.words else None


def reported_verbs(crystals: Sequence[Crystal]) -> set[str]:
    """The -ing forms of the verbs reported done (a past or -ing form leading a sentence)."""
    found = set()
    for crystal in crystals:
        if crystal.speaker not in UNSAID and (said := parse(head(crystal.text))) is not None:
            found.add(said.verb)
    return found


def actions(
    crystals: Sequence[Crystal],
    written: Callable[[Crystal], tuple[float, list[str]]],
    routine_below: float,
) -> list[Action]:
    """Every action the crystals report, once per day. ``written(crystal)`` gives the importance
    a crystal was written with and every time its text was written (sightings included)."""
    crystals = [c for c in crystals if c.lifecycle != HELD and c.speaker not in UNSAID]
    known = reported_verbs(crystals)
    # One exchange's parts share its time; a note is its own exchange each time it is written.
    exchanges: dict[tuple[str, ...], list[tuple[Crystal, float]]] = {}
    for crystal in crystals:
        importance, times = written(crystal)
        for at in times:
            key: tuple[str, ...] = (at,) if crystal.source == "sessions" else (at, str(crystal.id))
            exchanges.setdefault(key, []).append((crystal, importance))
    found: list[Action] = []
    for key in sorted(exchanges):
        parts = exchanges[key]
        if max(importance for _, importance in parts) < routine_below:
            continue  # emptying a bin twice is a chore, not an emerging skill (as written)
        if (said := _said(parts, known)) is not None:
            found.append(Action(said[0], key[0][:10], said[1]))
    return _once_a_day(found)


def _said(parts: list[tuple[Crystal, float]], known: set[str]) -> tuple[Said, int] | None:
    """The request's action when the person asked for one, else what the answer reports."""
    asked = [(parse(head(c.text), known), c.id) for c, _ in parts if c.speaker in ASKERS]
    reported = [(parse(head(c.text)), c.id) for c, _ in parts if c.speaker not in ASKERS]
    return next(((s, i) for s, i in asked + reported if s is not None), None)


def _once_a_day(found: list[Action]) -> list[Action]:
    """Actions of one verb on one day as one when one's words hold the other's."""
    kept: list[Action] = []
    for action in found:
        if not any(
            k.day == action.day
            and k.said.verb == action.said.verb
            and (k.said.detail <= action.said.detail or action.said.detail <= k.said.detail)
            for k in kept
        ):
            kept.append(action)
    return kept
