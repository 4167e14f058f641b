"""Speed at size: note, search, dream and seed migration on synthetic workspaces of N crystals.

For each size a fresh workspace is bulk-loaded with N synthetic but realistic crystals (agent
notes and session turns about people, projects, bugs and plans, spread over two years; most are
already consolidated, some archived), in large transactions with batched embeddings, not one
fsync per crystal. Then, in order:

- ``append``: ``Workspace.note`` (scratch append with fsync, then the crystal), p50/p99;
- ``search``: ``Workspace.search`` (what agents call, search logged and accesses counted),
  p50/p99, and the first search apart (it loads the vector matrix);
- ``dream``: one forced dream with the offline synthesizer, end to end (``dreamer.dream.run``),
  and apart the synthesizer's own share (``synthesizer_seconds``) and the rest (``rest_seconds``:
  gathering, insights, pointer verification, guards, commit), and its CPU time (``cpu_seconds``);
- ``migrate``: the seed migration of a 1 MB hand-written MEMORY.md in a fresh workspace;
- ``peak_rss_mb``: the process's peak resident memory so far (``resource.getrusage``).

With a ``cache`` folder, each size is bulk-loaded once into it (``ws-N``, with the random state
the load left) and every later run measures a fresh copy of that workspace: the same figures
as a fresh load, without minutes of loading at a million crystals.
"""

from __future__ import annotations

import json
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
from dreamer.dream.synth import Draft, DreamInputs, Synthesizer
from dreamer.dream.synth.factory import make_synthesizer
from dreamer.errors import DreamError, UsageError
from dreamer.kinds import infer_type
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.embed import to_blob
from dreamer.retrieval.vectors import clear_cache as clear_vector_cache
from dreamer.service import consolidation as consolidate
from dreamer.support.times import iso

NOW = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)
SPAN_DAYS = 730
BATCH = 5000
BUILT = "built.json"  # in a cached workspace: what the bulk load left (its rng state, timings)
MIGRATION_BYTES = 1_000_000

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


def _build(
    n: int,
    folder: Path,
    rng: random.Random,
    now: datetime,
    store_url: str | None,
    embedder: str,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """Bulk-load n crystals into a fresh workspace in ``folder``; what it took."""
    with _open(folder, store_url, embedder) as ws:
        ws.init()
        say(f"{n:,} crystals: bulk load")
        t0 = time.perf_counter()
        loaded = bulk_load(ws, n, rng, now - timedelta(hours=1))
        return {"loaded": loaded, "load_seconds": round(time.perf_counter() - t0, 2)}


def _cached(
    n: int,
    target: Path,
    cache: Path,
    seed: int,
    now: datetime,
    embedder: str,
    say: Callable[[str], None],
) -> tuple[dict[str, Any], random.Random]:
    """A copy in ``target`` of the workspace of n crystals kept in ``cache`` (built there the
    first time), and the random generator as the load left it, as after a fresh load."""
    built = cache / f"ws-{n}-{embedder}-seed{seed}-{now:%Y%m%dT%H%M}"
    marker = built / BUILT
    rng = random.Random(seed)
    if not marker.exists():
        shutil.rmtree(built, ignore_errors=True)  # a load cut short is loaded again
        info = _build(n, built, rng, now, None, embedder, say)
        info["rng"] = rng.getstate()
        tmp = marker.with_suffix(".tmp")
        tmp.write_text(json.dumps(info), encoding="utf-8")
        tmp.replace(marker)
    say(f"{n:,} crystals: copying the workspace loaded in {built}")
    info = json.loads(marker.read_text(encoding="utf-8"))
    version, state, gauss = info.pop("rng")
    rng.setstate((version, tuple(state), gauss))
    shutil.copytree(built, target, ignore=shutil.ignore_patterns(BUILT))
    return {**info, "cached": str(built)}, rng


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
    cache: Path | None = None,
) -> dict[str, Any]:
    """Load n crystals into a workspace under root and time each path; return the figures
    (``cache``: load each size once there and measure a copy, see the module's docstring)."""
    say = progress or (lambda message: None)
    rng = random.Random(seed)
    out: dict[str, Any] = {"crystals": n}
    folder = root / f"ws-{n}"
    if cache is not None:
        info, rng = _cached(n, folder, cache, seed, now, embedder, say)
        out.update(info)
    else:
        out.update(_build(n, folder, rng, now, store_url, embedder, say))
    with _open(folder, store_url, embedder) as ws:
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
        samples = []
        for _ in range(searches):
            query = synthetic_query(rng)
            t0 = time.perf_counter()
            ws.search(query, now=now)
            samples.append(time.perf_counter() - t0)
        out["search"] = _percentiles(samples)

        if dream:
            say(f"{n:,} crystals: one offline dream")
            out["dream"] = _dream(ws, now)
        say(f"{n:,} crystals: one consolidation tick")
        out["consolidate"] = _consolidate(ws, now)
        clear_vector_cache()
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


class _Timed:
    """A synthesizer whose own time is counted apart from the rest of the dream."""

    def __init__(self, inner: Synthesizer) -> None:
        self.inner, self.name, self.model = inner, inner.name, inner.model
        self.seconds = 0.0

    def synthesize(
        self,
        inputs: DreamInputs,
        *,
        critique: list[str] | None = None,
        previous: Draft | None = None,
    ) -> Draft:
        """The inner synthesizer's draft, timed."""
        t0 = time.perf_counter()
        try:
            return self.inner.synthesize(inputs, critique=critique, previous=previous)
        finally:
            self.seconds += time.perf_counter() - t0


def _dream(ws: Workspace, now: datetime) -> dict[str, Any]:
    timed = _Timed(make_synthesizer(ws.settings))
    t0, cpu = time.perf_counter(), time.process_time()
    try:
        result = dream_cycle.run(ws, now=now + timedelta(minutes=5), force=True, synthesizer=timed)
    except DreamError as e:
        return {"seconds": round(time.perf_counter() - t0, 2), "error": str(e)}
    seconds = time.perf_counter() - t0
    return {
        "seconds": round(seconds, 2),
        # CPU time of this process: what a busy machine's waiting leaves out.
        "cpu_seconds": round(time.process_time() - cpu, 2),
        "synthesizer_seconds": round(timed.seconds, 2),
        "rest_seconds": round(seconds - timed.seconds, 2),
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
    cache: Path | None = None,
) -> dict[str, Any]:
    """Measure every size in turn (smallest first) in a fresh folder; return the report.

    With ``store_url`` (PostgreSQL) the workspaces' stores are rows there (they stay); with
    ``cache``, each size is loaded once into that folder and measured on a copy."""
    if not sizes or min(sizes) < 1:
        raise UsageError("--crystals must be 1 or more, e.g. --crystals 100000")
    if cache is not None and store_url:
        raise UsageError("--cache keeps SQLite workspaces only; drop --cache or --store-url")
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
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
                cache=cache,
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
