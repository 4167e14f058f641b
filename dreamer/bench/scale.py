"""Speed at size: note, search, dream and seed migration on synthetic workspaces of N crystals.

For each size a fresh workspace is bulk-loaded with N synthetic but realistic crystals (agent
notes and session turns about people, projects, bugs and plans, spread over two years; most are
already consolidated, some archived), in large transactions with batched embeddings, not one
fsync per crystal. Then, in order:

- ``append``: ``Workspace.note`` (scratch append with fsync, then the crystal), p50/p99;
- ``search``: ``Workspace.search`` (what agents call, search logged and accesses counted),
  p50/p99, and the first search apart (it loads the vector matrix); on SQLite each search is
  interleaved with the reference, a bare FTS5 MATCH of the same words on its own connection
  (``fts_reference``, BM25 top ``limit``), and ``search_ratio`` is dreamer's p50 over its p50
  (``search_cpu_ratio`` the same in CPU time of the thread, steadier on a busy machine);
- ``dream``: one forced dream with the offline synthesizer, end to end (``dreamer.dream.run``);
- ``migrate``: the seed migration of a 1 MB hand-written MEMORY.md in a fresh workspace;
- ``peak_rss_mb``: the process's peak resident memory so far (``resource.getrusage``).
"""

from __future__ import annotations

import random
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dreamer.dream import cycle as dream_cycle
from dreamer.dream import seed as seed_migration
from dreamer.errors import DreamError, UsageError
from dreamer.kinds import infer_type
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.embed import to_blob
from dreamer.retrieval.search import query_terms
from dreamer.retrieval.vectors import clear_cache as clear_vector_cache
from dreamer.service import consolidation as consolidate
from dreamer.store.sqlite.reference import RawFTS
from dreamer.support.times import iso

NOW = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)
SPAN_DAYS = 730
BATCH = 5000
MIGRATION_BYTES = 1_000_000
SEARCH_LIMIT = 6  # Workspace.search's default, and the reference's LIMIT

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


def bulk_load(
    ws: Workspace, n: int, rng: random.Random, now: datetime, span_days: float = SPAN_DAYS
) -> int:
    """Add n synthetic crystals over ``span_days`` in batches (one transaction and one embed
    call per batch); the oldest 40% are archived, the last two days' still new."""
    created = 0
    batch: list[tuple[str, str, datetime]] = []
    archive_before = now - timedelta(days=span_days * 0.6)
    fresh_after = now - timedelta(days=2)

    def flush() -> None:
        nonlocal created
        vectors = ws.embedder.embed([text for text, _, _ in batch])
        with ws.store.transaction():
            for (text, source, at), vector in zip(batch, vectors, strict=True):
                lifecycle = (
                    "archived"
                    if at < archive_before
                    else "generated"
                    if at > fresh_after
                    else "consolidated"
                )
                _, new = ws.store.add_crystal(
                    text,
                    source=source,
                    semantic_type=infer_type(text),
                    importance=round(rng.uniform(0.2, 0.9), 2),
                    at=at,
                    embedding=to_blob(vector),
                    embedder=ws.embedder.name,
                    lifecycle=lifecycle,
                    consolidated_at=None if lifecycle == "generated" else iso(at),
                )
                created += new
        batch.clear()

    for item in _stream(n, rng, now, span_days):
        batch.append(item)
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    return created


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 2),
        "p99_ms": round(1000 * p99, 2),
        "max_ms": round(1000 * ordered[-1], 2),
        "n": len(ordered),
    }


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def _open(root: Path, store_url: str | None = None, embedder: str = "auto") -> Workspace:
    # Defaults only (no dreamer.toml, no DREAM_* environment) and never Claude: it measures
    # dreamer's own cost, so a key in the environment must not turn it into an API bill.
    # The exceptions are the store and the embedder asked for.
    environ = {"DREAM_STORE_URL": store_url} if store_url else {}
    return Workspace.open(
        root, environ=environ, overrides={"synthesizer": "offline", "embedder": embedder}
    )


def measure(
    n: int,
    root: Path,
    *,
    appends: int = 200,
    searches: int = 200,
    dream: bool = True,
    now: datetime = NOW,
    seed: int = 7,
    progress: Callable[[str], None] | None = None,
    store_url: str | None = None,
    embedder: str = "auto",
) -> dict[str, Any]:
    """Load n crystals into a workspace under root and time each path; return the figures."""
    say = progress or (lambda message: None)
    rng = random.Random(seed)
    out: dict[str, Any] = {"crystals": n}
    with _open(root / f"ws-{n}", store_url, embedder) as ws:
        ws.init()
        say(f"{n:,} crystals: bulk load")
        t0 = time.perf_counter()
        out["loaded"] = bulk_load(ws, n, rng, now - timedelta(hours=1))
        out["load_seconds"] = round(time.perf_counter() - t0, 2)
        out["db_mb"] = (
            None  # a share of a PostgreSQL database: not a file of its own
            if store_url
            else round(
                sum(path.stat().st_size for path in ws.memory_dir.glob("crystals.db*")) / 1e6, 1
            )
        )

        say(f"{n:,} crystals: {appends} note appends")
        samples = []
        for i in range(appends):
            text = f"{synthetic_text(rng)} (note {i})"
            t0 = time.perf_counter()
            ws.note(text, importance=0.6, at=now - timedelta(minutes=appends - i))
            samples.append(time.perf_counter() - t0)
        out["append"] = _percentiles(samples)

        say(f"{n:,} crystals: {searches} searches")
        t0 = time.perf_counter()
        ws.search(synthetic_query(rng), now=now)
        out["first_search_ms"] = round(1000 * (time.perf_counter() - t0), 1)
        out.update(_searches(ws, rng, searches, now, reference=store_url is None))

        if dream:
            say(f"{n:,} crystals: one offline dream")
            out["dream"] = _dream(ws, now)
        say(f"{n:,} crystals: one consolidation tick")
        out["consolidate"] = _consolidate(ws, now)
        clear_vector_cache()
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


def _searches(
    ws: Workspace, rng: random.Random, searches: int, now: datetime, *, reference: bool
) -> dict[str, Any]:
    """Time ``searches`` searches, each next to a bare FTS5 MATCH of its words (on SQLite).

    The two alternate which goes first, so neither always meets the other's warm cache. Each
    is timed twice: on the wall clock, and in CPU time of this thread (``cpu_p50_ms``), which
    other jobs on a busy machine do not stretch as they stretch a long call more than a
    short one.
    """
    raw = RawFTS(ws.db_path) if reference else None
    wall: dict[int, list[float]] = {0: [], 1: []}
    cpu: dict[int, list[float]] = {0: [], 1: []}
    try:
        for i in range(searches):
            query = synthetic_query(rng)
            for turn in (0, 1) if i % 2 else (1, 0):
                if turn == 0 and raw is None:
                    continue
                t0, c0 = time.perf_counter(), time.thread_time()
                if turn:
                    ws.search(query, now=now)
                elif raw is not None:
                    raw.match(query_terms(query), SEARCH_LIMIT)
                wall[turn].append(time.perf_counter() - t0)
                cpu[turn].append(time.thread_time() - c0)
    finally:
        if raw is not None:
            raw.close()

    def figures(turn: int) -> dict[str, Any]:
        return {
            **_percentiles(wall[turn]),
            "cpu_p50_ms": round(1000 * statistics.median(cpu[turn]), 2),
        }

    out: dict[str, Any] = {"search": figures(1)}
    if wall[0]:
        out["fts_reference"] = floor = figures(0)
        out["search_ratio"] = round(out["search"]["p50_ms"] / max(floor["p50_ms"], 0.01), 2)
        out["search_cpu_ratio"] = round(
            out["search"]["cpu_p50_ms"] / max(floor["cpu_p50_ms"], 0.01), 2
        )
    return out


def _dream(ws: Workspace, now: datetime) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        result = dream_cycle.run(ws, now=now + timedelta(minutes=5), force=True)
    except DreamError as e:
        return {"seconds": round(time.perf_counter() - t0, 2), "error": str(e)}
    return {
        "seconds": round(time.perf_counter() - t0, 2),
        "outcome": result.outcome,
        "consumed": len(result.consumed),
    }


def _consolidate(ws: Workspace, now: datetime) -> dict[str, Any]:
    """One consolidation tick (decay, spikes, lifecycle over every crystal), timed."""
    t0 = time.perf_counter()
    report = consolidate.tick(ws, now + timedelta(minutes=30))
    changes = report.lifecycle.to_dict()
    return {
        "seconds": round(time.perf_counter() - t0, 2),
        **{key: changes[key] for key in ("faded", "used", "archived", "merged")},
    }


def _migrate(root: Path, rng: random.Random, now: datetime) -> dict[str, Any]:
    with _open(root) as ws:
        ws.init()
        ws.memory_md.write_text(synthetic_memory_md(MIGRATION_BYTES, rng), encoding="utf-8")
        t0 = time.perf_counter()
        try:
            report = seed_migration.migrate(ws, now)
        except DreamError as e:
            return {"seconds": round(time.perf_counter() - t0, 2), "error": str(e)}
        seconds = time.perf_counter() - t0
        clear_vector_cache()
        return {
            "seconds": round(seconds, 2),
            "bytes": ws.memory_md.stat().st_size,
            "chunks": report.chunks,
        }


def run(
    sizes: list[int],
    *,
    parent: Path | None = None,
    keep: bool = False,
    appends: int = 200,
    searches: int = 200,
    dream: bool = True,
    migrate: bool = True,
    progress: Callable[[str], None] | None = None,
    store_url: str | None = None,
    embedder: str = "auto",
) -> dict[str, Any]:
    """Measure every size in turn (smallest first) in a fresh folder; return the report.

    With ``store_url`` (PostgreSQL) the workspaces' stores are rows there (they stay)."""
    if not sizes or min(sizes) < 1:
        raise UsageError("--crystals must be 1 or more, e.g. --crystals 100000")
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="dream-bench-scale-", dir=parent))
    try:
        report: dict[str, Any] = {}
        if migrate:
            if progress:
                progress("seed migration of a 1 MB MEMORY.md")
            report["migrate"] = _migrate(root / "migrate", random.Random(11), NOW)
        report["sizes"] = [
            measure(
                n,
                root,
                appends=appends,
                searches=searches,
                dream=dream,
                progress=progress,
                store_url=store_url,
                embedder=embedder,
            )
            for n in sorted(set(sizes))
        ]
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    report["peak_rss_mb"] = _peak_rss_mb()
    if keep:
        report["kept"] = str(root)
    return report
