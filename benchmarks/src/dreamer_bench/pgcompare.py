"""PostgreSQL against SQLite in one process: the same crystals, the same searches, interleaved.

For each size N, one workspace on SQLite and one on PostgreSQL are bulk-loaded with the same N
synthetic crystals (``synthetic``, same seed): batch by batch, the batch is embedded
once and written to each store in turn, so both loads see the same machine load. A load's
time is its store writes plus the shared embedding time (what ``dream bench scale`` reports as
its bulk load); the store writes alone are reported too. Then the same queries run through
``Workspace.search`` (logged, accesses counted) on each store in turn, the order alternating
(SQLite then PostgreSQL, then PostgreSQL then SQLite ...), after a few untimed warm-up searches
that load each store's vector index. Reported: p50/p99 of each, the ratios of the p50s and of
the load times, and how often the two stores return the same best hit (ids are the same on
both: they count 1, 2, 3 ... in load order), as a check that the faster path finds the same.

The PostgreSQL server is the one at ``store_url`` (a scratch database: the rows stay) or one
started from the ``pgserver`` wheel for the run and removed after.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from dreamer.errors import UsageError
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.vectors import clear_cache as clear_vector_cache
from dreamer_bench import synthetic
from dreamer_bench.pg_server import PostgresUnavailable, start_postgres

WARMUP = 5


def _open(root: Path, store_url: str | None, embedder: str) -> Workspace:
    # Defaults only, never Claude (as in ``scale``): the store is the one thing that differs.
    environ = {"DREAM_STORE_URL": store_url} if store_url else {}
    return Workspace.open(
        root, environ=environ, overrides={"synthesizer": "offline", "embedder": embedder}
    )


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 2),
        "p99_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 2),
        "n": len(ordered),
    }


def _load(
    sqlite: Workspace, postgres: Workspace, n: int, seed: int, now: datetime
) -> dict[str, Any]:
    """Load the same n crystals into both, batch by batch; the time each store took."""
    embed = writes_sqlite = writes_postgres = 0.0
    created = [0, 0]
    for rows in synthetic.synthetic_batches(n, random.Random(seed), now - timedelta(hours=1)):
        t0 = time.perf_counter()
        rows = synthetic.with_vectors(sqlite, rows)
        embed += time.perf_counter() - t0
        t0 = time.perf_counter()
        created[0] += synthetic.store_rows(sqlite, rows)
        writes_sqlite += time.perf_counter() - t0
        t0 = time.perf_counter()
        created[1] += synthetic.store_rows(postgres, rows)
        writes_postgres += time.perf_counter() - t0
    if created[0] != created[1]:
        raise AssertionError(f"the stores took {created} of the same {n} crystals")
    return {
        "loaded": created[1],
        "embed_seconds": round(embed, 2),
        "sqlite_seconds": round(embed + writes_sqlite, 2),
        "postgres_seconds": round(embed + writes_postgres, 2),
        "sqlite_writes_seconds": round(writes_sqlite, 2),
        "postgres_writes_seconds": round(writes_postgres, 2),
        "ratio": round((embed + writes_postgres) / max(embed + writes_sqlite, 1e-9), 2),
        "writes_ratio": round(writes_postgres / max(writes_sqlite, 1e-9), 2),
    }


def _search(
    sqlite: Workspace, postgres: Workspace, searches: int, seed: int, now: datetime
) -> dict[str, Any]:
    """The same queries on both stores, alternating which goes first; p50s and agreement."""
    rng = random.Random(seed)
    for _ in range(WARMUP):
        query = synthetic.synthetic_query(rng)
        sqlite.search(query, now=now)
        postgres.search(query, now=now)
    times: dict[str, list[float]] = {"sqlite": [], "postgres": []}
    same_top = 0
    for i in range(searches):
        query = synthetic.synthetic_query(rng)
        order = [("sqlite", sqlite), ("postgres", postgres)]
        found = {}
        for name, ws in order if i % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            found[name] = [hit.id for hit in ws.search(query, now=now)]
            times[name].append(time.perf_counter() - t0)
        same_top += found["sqlite"][:1] == found["postgres"][:1]
    sqlite_ms, postgres_ms = _ms(times["sqlite"]), _ms(times["postgres"])
    return {
        "sqlite": sqlite_ms,
        "postgres": postgres_ms,
        "ratio": round(postgres_ms["p50_ms"] / max(sqlite_ms["p50_ms"], 1e-9), 2),
        "same_top_hit": round(same_top / searches, 3),
    }


def measure(
    n: int,
    root: Path,
    store_url: str,
    *,
    searches: int = 200,
    seed: int = 7,
    now: datetime = synthetic.NOW,
    embedder: str = "auto",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Both stores with the same n crystals: load times and interleaved search times."""
    say = progress or (lambda message: None)
    with (
        _open(root / f"sqlite-{n}", None, embedder) as sqlite,
        _open(root / f"postgres-{n}", store_url, embedder) as postgres,
    ):
        sqlite.init()
        postgres.init()
        say(f"{n:,} crystals: bulk load of both stores")
        load = _load(sqlite, postgres, n, seed, now)
        say(f"{n:,} crystals: {searches} searches on each store, interleaved")
        search = _search(sqlite, postgres, searches, seed + 1, now)
        clear_vector_cache()
    return {"crystals": n, "load": load, "search": search}


@contextlib.contextmanager
def _server(store_url: str | None, root: Path) -> Iterator[str]:
    if store_url:
        yield store_url
        return
    try:
        server = start_postgres(root / "postgres")
    except PostgresUnavailable as e:
        raise UsageError(
            f"cannot start PostgreSQL for the comparison ({e.reason}); give a scratch "
            "database with --store-url URL"
        ) from e
    with server:
        yield server.url


def run(
    sizes: list[int],
    *,
    store_url: str | None = None,
    searches: int = 200,
    parent: Path | None = None,
    embedder: str = "auto",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Compare the stores at every size (smallest first) in a fresh folder, removed after."""
    if not sizes or min(sizes) < 1:
        raise UsageError("--crystals must be 1 or more, e.g. --crystals 10000")
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="dream-bench-pg-", dir=parent))
    try:
        with _server(store_url, root) as url:
            rows = [
                measure(n, root, url, searches=searches, embedder=embedder, progress=progress)
                for n in sorted(set(sizes))
            ]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"sizes": rows}
