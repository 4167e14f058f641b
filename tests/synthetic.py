"""Synthetic but realistic crystals: agent notes and session turns about people, projects, bugs
and plans, spread over two years, with a long tail of names as a real memory has.

The tests build large workspaces from it (the search's equivalence and lean-path tests, the
PostgreSQL store's ranking); the benchmarks (``dream bench scale``, ``report``, ``pg-compare``)
measure on it. It lives with the tests so that they run without the benchmarks installed; the
benchmarks package (benchmarks/) holds a link to this file, and its wheel a copy of it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from dreamer.memory.workspace import Workspace
from dreamer.retrieval.embed import embed_texts, to_blob
from dreamer.store import NewCrystal
from dreamer.store.kinds import infer_type
from dreamer.support.progress import Progress
from dreamer.support.times import iso

NOW = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)
SPAN_DAYS = 730
BATCH = 5000

_PEOPLE = (
    "Ada Priya Marco Lena Tomás Yuki Omar Grace Ines Noah Sofia Ravi Mei Jonas Amara Felix "
    "Hana Diego Elif Sam Nadia Oskar Leila Kofi Anya Bruno Chloe Dev Farah Igor"
).split()
_PROJECTS = (
    "billing migration",
    "search revamp",
    "mobile onboarding",
    "data warehouse",
    "pricing page",
    "release train",
    "on-call rotation",
    "GDPR export",
    "invoice service",
    "design system",
    "churn model",
    "support inbox",
    "API v3",
    "kubernetes upgrade",
    "quarterly report",
    "hiring plan",
    "garden project",
    "trip to Lisbon",
    "marathon training",
    "tax return",
    "piano lessons",
    "kitchen remodel",
    "book club",
    "wedding planning",
    "home network",
)
PROJECTS = _PROJECTS  # what synthetic notes are about (the report bench points at them)
_THINGS = (
    "dashboard",
    "cron job",
    "retry queue",
    "login flow",
    "schema",
    "feature flag",
    "budget",
    "slide deck",
    "contract",
    "test suite",
    "cache",
    "webhook",
    "index",
    "invoice",
    "backup",
    "alerting rule",
    "roadmap",
    "survey",
    "sprint board",
    "postmortem",
    "playlist",
    "recipe",
    "flight",
    "appointment",
    "checklist",
)
_ACTIONS = (
    "ship",
    "review",
    "rewrite",
    "postpone",
    "document",
    "benchmark",
    "migrate",
    "split",
    "simplify",
    "double-check",
    "cancel",
    "book",
    "draft",
    "fix",
    "rename",
)
_PREFS = (
    "dark mode",
    "short answers",
    "tabs over spaces",
    "morning meetings",
    "email over chat",
    "metric units",
    "British spelling",
    "no emojis",
    "weekly summaries",
    "Python 3.12",
)
_DAYS = (
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "next week",
    "end of month",
    "the 15th",
    "after the offsite",
    "before the holidays",
)
_FEELINGS = ("relieved", "worried", "excited", "frustrated", "proud", "tired", "curious")
_TEMPLATES = (
    "{person} prefers {pref} when working on the {project}.",
    "Decided with {person} to {action} the {thing} for the {project} by {day}.",
    "Bug {ticket}: the {thing} in {file} fails when the {other} is empty; {person} is on it.",
    "{person} said the {project} is blocked on the {thing}; follow up {day}.",
    "Meeting notes ({project}): {person} will {action} the {thing}, {person2} owns the {other}.",
    "Remember that {person} is {feeling} about the {project} since the {thing} slipped.",
    "User: can you {action} the {thing} for the {project}? Assistant: yes, done by {day}, "
    "see {file}.",
    "Learned: the {thing} needs the {other} warmed up first, otherwise {ticket} comes back.",
    "{person} asked to {action} the {other} before {day}; {person2} disagrees about the cost "
    "({amount} EUR).",
    "Weekly check-in: {project} at {percent}% done, next up the {thing}; mood {feeling}.",
)


def _pseudo_word(rng: random.Random) -> str:
    syllables = rng.randrange(2, 4)
    return "".join(
        rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(syllables)
    ) + rng.choice(("", "n", "r", "s", "k"))


def _zipf(items: list[str]) -> tuple[list[str], list[float]]:
    """Items with Zipf cumulative weights: a few are everywhere, most are rare, as in life."""
    total, cumulative = 0.0, []
    for rank in range(len(items)):
        total += 1.0 / (rank + 1)
        cumulative.append(total)
    return items, cumulative


_VOCAB = random.Random(20260312)
# Thousands of people and projects with a long tail, not 30 names repeated 100k times: a real
# memory's vocabulary grows with it, and search cost depends on how common the query words are.
_PEOPLE_POOL = _zipf(
    [f"{_VOCAB.choice(_PEOPLE)} {_pseudo_word(_VOCAB).title()}" for _ in range(3000)]
)
_PROJECT_POOL = _zipf(
    [
        _VOCAB.choice(_PROJECTS)
        if _VOCAB.random() < 0.3
        else f"{_pseudo_word(_VOCAB).title()} {_VOCAB.choice(_THINGS)}"
        for _ in range(3000)
    ]
)


def _pick(pool: tuple[list[str], list[float]], rng: random.Random) -> str:
    return rng.choices(pool[0], cum_weights=pool[1])[0]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        person=_pick(_PEOPLE_POOL, rng),
        person2=_pick(_PEOPLE_POOL, rng),
        project=_pick(_PROJECT_POOL, rng),
        thing=rng.choice(_THINGS),
        other=rng.choice(_THINGS),
        action=rng.choice(_ACTIONS),
        pref=rng.choice(_PREFS),
        day=rng.choice(_DAYS),
        feeling=rng.choice(_FEELINGS),
        ticket=f"#{rng.randrange(100, 99999)}",
        file=f"src/{rng.choice(_THINGS).replace(' ', '_')}_{rng.randrange(1, 400)}.py",
        amount=rng.randrange(50, 20000),
        percent=rng.randrange(0, 101),
    )


def synthetic_text(rng: random.Random) -> str:
    """One realistic note: a template filled with people, projects, tickets and files."""
    return _fill(rng.choice(_TEMPLATES), rng)


def synthetic_query(rng: random.Random) -> str:
    """A question an agent might search with."""
    return rng.choice(
        (
            "what does {person} prefer",
            "status of the {project}",
            "who owns the {thing}",
            "why does the {thing} fail",
            "what did we decide about the {thing} for {project}",
            "{person} {project} {day}",
        )
    ).format(
        person=_pick(_PEOPLE_POOL, rng),
        project=_pick(_PROJECT_POOL, rng),
        thing=rng.choice(_THINGS),
        day=rng.choice(_DAYS),
    )


def synthetic_memory_md(size: int, rng: random.Random) -> str:
    """A hand-written MEMORY.md of about size bytes: headed sections of bullet notes."""
    parts = ["# Memory\n\nNotes I keep about my user and our work.\n"]
    total = len(parts[0])
    section = 0
    while total < size:
        section += 1
        lines = [f"\n## {rng.choice(_PROJECTS).title()} ({section})\n"]
        lines += [f"- {synthetic_text(rng)}\n" for _ in range(rng.randrange(5, 25))]
        chunk = "".join(lines)
        parts.append(chunk)
        total += len(chunk.encode("utf-8"))
    return "".join(parts)


def _stream(
    n: int, rng: random.Random, now: datetime, span_days: float = SPAN_DAYS
) -> Iterator[tuple[str, str, datetime]]:
    """(text, source, time) of n crystals, oldest first; a session's turns come together."""
    start = now - timedelta(days=span_days)
    step = span_days * 86400.0 / max(n, 1)
    made = 0
    while made < n:
        at = start + timedelta(seconds=made * step)
        if rng.random() < 0.3:  # a conversation: a few turns at one moment
            for turn in range(min(rng.randrange(3, 9), n - made)):
                yield (
                    f"{'User' if turn % 2 == 0 else 'Assistant'}: {synthetic_text(rng)}",
                    "sessions",
                    at,
                )
                made += 1
        else:
            yield synthetic_text(rng), rng.choice(("scratch", "scratch", "auto", "memory")), at
            made += 1


def synthetic_batches(
    n: int, rng: random.Random, now: datetime, span_days: float = SPAN_DAYS
) -> Iterator[list[NewCrystal]]:
    """n synthetic crystals over ``span_days`` in batches of ``BATCH`` (without vectors): the
    oldest 40% archived, the last two days' new."""
    archive_before = now - timedelta(days=span_days * 0.6)
    fresh_after = now - timedelta(days=2)
    batch: list[tuple[str, str, datetime]] = []

    def rows() -> list[NewCrystal]:
        made = []
        for text, source, at in batch:
            lifecycle = (
                "archived"
                if at < archive_before
                else "generated"
                if at > fresh_after
                else "consolidated"
            )
            made.append(
                NewCrystal(
                    text,
                    source=source,
                    semantic_type=infer_type(text),
                    importance=round(rng.uniform(0.2, 0.9), 2),
                    at=at,
                    lifecycle=lifecycle,
                    consolidated_at=None if lifecycle == "generated" else iso(at),
                )
            )
        batch.clear()
        return made

    for item in _stream(n, rng, now, span_days):
        batch.append(item)
        if len(batch) >= BATCH:
            yield rows()
    if batch:
        yield rows()


def with_vectors(ws: Workspace, rows: list[NewCrystal]) -> list[NewCrystal]:
    """The crystals with their vectors from the workspace's embedder (in bounded batches)."""
    vectors = embed_texts(ws.embedder, [row.text for row in rows])
    return [
        replace(row, embedding=to_blob(vector), embedder=ws.embedder.name)
        for row, vector in zip(rows, vectors, strict=True)
    ]


def store_rows(ws: Workspace, rows: list[NewCrystal]) -> int:
    """Add the rows (with vectors) in one transaction; how many were new."""
    return sum(created for _, created in ws.store.crystals.add_crystals(rows))


def bulk_load(
    ws: Workspace,
    n: int,
    rng: random.Random,
    now: datetime,
    span_days: float = SPAN_DAYS,
    progress: Progress | None = None,
) -> int:
    """Add n synthetic crystals over ``span_days`` in batches (one transaction per batch);
    the oldest 40% are archived, the last two days' still new. ``progress(done, n)`` counts
    the crystals made."""
    created = made = 0
    for rows in synthetic_batches(n, rng, now, span_days):
        created += store_rows(ws, with_vectors(ws, rows))
        made += len(rows)
        if progress:
            progress(made, n)
    return created
