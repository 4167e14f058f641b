"""Speed at size: note, search, dream and seed migration on synthetic workspaces of N crystals.

For each size a fresh workspace is bulk-loaded with N synthetic but realistic crystals (agent
notes and session turns about people, projects, bugs and plans, spread over two years; most are
already consolidated, some archived), in large transactions with batched embeddings, not one
fsync per crystal. Then, in order:

- ``append``: ``Workspace.note`` (scratch append with fsync, then the crystal), p50/p99;
- ``search``: ``Workspace.search`` (what agents call, search logged and accesses counted),
  p50/p99, and the first search apart; on SQLite each search is
  interleaved with the reference, a bare FTS5 MATCH of the same words on its own connection
  (``fts_reference``, BM25 top ``limit``), and ``search_ratio`` is dreamer's p50 over its p50
  (``search_cpu_ratio`` the same in CPU time of the thread, steadier on a busy machine);
- ``dream``: one forced dream with the offline synthesizer, end to end (``dreamer.dream.run``),
  and apart the synthesizer's own share (``synthesizer_seconds``) and the rest (``rest_seconds``:
  gathering, insights, pointer verification, guards, commit), and its CPU time (``cpu_seconds``);
- ``migrate``: the seed migration of a 1 MB hand-written MEMORY.md in a fresh workspace;
- ``vector_file``: bringing ``memory/vectors.bin`` up to date (after a bulk load: writing it);
- ``first_scan``: in a fresh process (a child: ``python -c``), open the workspace and run one
  search that must scan every vector (its words are in no crystal); its wall time, the
  child's whole run and its peak resident memory (its own ``VmHWM``, else ``os.wait4``,
  which also counts this process's memory the child started from); and, as the same-run
  reference (``load_all``), another fresh process reading every vector from the store into
  numpy, which is what such a search did before the vector file;
- ``peak_rss_mb``: the process's peak resident memory so far (``resource.getrusage``).

With ``reuse``, a size whose ``ws-N`` folder already exists under the parent (a run with
``--keep`` left it) is measured as it is, without a bulk load: a million crystals take minutes
to load. Such a workspace carries the notes and dreams of the runs before.

With a ``cache`` folder, each size is bulk-loaded once into it (``ws-N``, with the random state
the load left) and every later run measures a fresh copy of that workspace: the same figures
as a fresh load, without minutes of loading at a million crystals.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from dreamer.dream import cycle as dream_cycle
from dreamer.dream import seed as seed_migration
from dreamer.dream.synth import Draft, DreamInputs, Synthesizer
from dreamer.dream.synth.factory import make_synthesizer
from dreamer.errors import DreamError, UsageError
from dreamer.memory.workspace import Workspace
from dreamer.retrieval import vectors
from dreamer.retrieval.search import query_terms
from dreamer.retrieval.vectors import clear_cache as clear_vector_cache
from dreamer.service import consolidation as consolidate
from dreamer.support.progress import Progress
from dreamer_bench.raw_fts import RawFTS
from dreamer_bench.synthetic import (
    NOW,
    bulk_load,
    synthetic_memory_md,
    synthetic_query,
    synthetic_text,
)

BUILT = "built.json"  # in a cached workspace: what the bulk load left (its rng state, timings)
MIGRATION_BYTES = 1_000_000
# Words no synthetic crystal holds (their letters are outside the made-up names'): the search
# finds no word match, so it scans every vector.
SCAN_PROBE = "zeppelin orchestra violin rehearsal"
SEARCH_LIMIT = 6  # Workspace.search's default, and the reference's LIMIT


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
    counts: Progress | None = None,
) -> dict[str, Any]:
    """Bulk-load n crystals into a fresh workspace in ``folder``; what it took
    (``counts(done, n)``: the crystals loaded)."""
    with _open(folder, store_url, embedder) as ws:
        ws.init()
        say(f"{n:,} crystals: bulk load")
        t0 = time.perf_counter()
        loaded = bulk_load(ws, n, rng, now - timedelta(hours=1), progress=counts)
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
    reuse: bool = False,
    cache: Path | None = None,
    counts: Progress | None = None,
) -> dict[str, Any]:
    """Load n crystals into a workspace under root and time each path; return the figures
    (``cache``: load each size once there and measure a copy, see the module's docstring;
    ``counts(done, n)``: the crystals loaded)."""
    say = progress or (lambda message: None)
    rng = random.Random(seed)
    out: dict[str, Any] = {"crystals": n}
    folder = root / f"ws-{n}"
    reused = reuse and (folder / "memory").is_dir()
    if reused:
        say(f"{n:,} crystals: reusing {folder}")
        out["reused"], out["load_seconds"] = True, None
    elif cache is not None:
        info, rng = _cached(n, folder, cache, seed, now, embedder, say)
        out.update(info)
    else:
        out.update(_build(n, folder, rng, now, store_url, embedder, say, counts))
    with _open(folder, store_url, embedder) as ws:
        if reused:
            out["loaded"] = ws.store.crystals.crystal_count()
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

        say(f"{n:,} crystals: the vector file")
        t0 = time.perf_counter()
        vectors.index_for(ws.store, ws.embedder)
        out["vector_file"] = {
            "seconds": round(time.perf_counter() - t0, 2),
            "mb": round(sum(p.stat().st_size for p in ws.memory_dir.glob("vectors.bin")) / 1e6, 1),
        }

        say(f"{n:,} crystals: {searches} searches")
        t0 = time.perf_counter()
        ws.search(synthetic_query(rng), now=now)
        out["first_search_ms"] = round(1000 * (time.perf_counter() - t0), 1)
        out.update(_searches(ws, rng, searches, now, reference=store_url is None))

        say(f"{n:,} crystals: the first vector scan in a fresh process")
        out["first_scan"] = first_scan(ws.root, now, store_url, embedder)

        if dream:
            say(f"{n:,} crystals: one offline dream")
            out["dream"] = _dream(ws, now)
        say(f"{n:,} crystals: one consolidation tick")
        out["consolidate"] = _consolidate(ws, now)
        clear_vector_cache()
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


# What each fresh child process starts with: its start time and its own peak memory.
_CHILD_PRELUDE = """
import json, sys, time
started = time.perf_counter()
def _high_water():  # this process's own peak (VmHWM): getrusage's also counts the parent's
    try:
        with open("/proc/self/status") as status:
            line = next(x for x in status if x.startswith("VmHWM:"))
        return round(int(line.split()[1]) / 1024.0, 1)
    except (OSError, StopIteration):
        return None
"""


_FIRST_SCAN = (
    _CHILD_PRELUDE
    + """
from datetime import datetime
from dreamer.memory.workspace import Workspace
from dreamer.retrieval import vectors
root, now, url, embedder, query = sys.argv[1:6]
environ = {"DREAM_STORE_URL": url} if url else {}
overrides = {"synthesizer": "offline", "embedder": embedder}
with Workspace.open(root, create=False, environ=environ, overrides=overrides) as ws:
    opened = time.perf_counter()
    hits = ws.search(query, now=datetime.fromisoformat(now))
    done = time.perf_counter()
print(json.dumps({
    "hwm_mb": _high_water(),
    "search_ms": round(1000 * (done - opened), 1),
    "process_ms": round(1000 * (done - started), 1),
    "scanned": vectors.scans > 0,
    "scan_ms": round(1000 * vectors.scan_seconds, 1),
    "hits": len(hits),
}))
"""
)


# The reference, same run: what the first scan of a fresh process cost before the vector file:
# every vector read from the store into numpy and sketched, as the in-memory index did.
_LOAD_ALL = (
    _CHILD_PRELUDE
    + """
import numpy as np
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.vector_file import projection
root, url, embedder = sys.argv[1:4]
environ = {"DREAM_STORE_URL": url} if url else {}
overrides = {"synthesizer": "offline", "embedder": embedder}
with Workspace.open(root, create=False, environ=environ, overrides=overrides) as ws:
    store, dim, name = ws.store, ws.embedder.dim, ws.embedder.name
    opened = time.perf_counter()
    project, parts, sketches = projection(dim), [], []
    for block in store.vectors.vectors_between(0, store.crystals.max_crystal_id(), name, 20000):
        blobs = [row.embedding for row in block if len(row.embedding) == 2 * dim]
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), dim)
        parts.append(matrix)
        sketches.append(matrix.astype(np.float32) @ project)
    vectors, sketch = np.concatenate(parts), np.concatenate(sketches)  # whole, as it held them
    rows = len(vectors)
    done = time.perf_counter()
print(json.dumps({
    "hwm_mb": _high_water(),
    "load_ms": round(1000 * (done - opened), 1),
    "process_ms": round(1000 * (done - started), 1),
    "rows": rows,
}))
"""
)


def first_scan(
    root: Path,
    now: datetime,
    store_url: str | None = None,
    embedder: str = "auto",
    reference: bool = True,
) -> dict[str, Any]:
    """One search that scans every vector, in a fresh process: its time and peak memory; with
    ``reference``, beside it (another fresh process) what reading every vector from the store
    into memory costs, as the first scan did before the vector file."""
    figures = _child(
        [_FIRST_SCAN, str(root), now.isoformat(), store_url or "", embedder, SCAN_PROBE]
    )
    if reference and "error" not in figures:
        figures["load_all"] = _child([_LOAD_ALL, str(root), store_url or "", embedder])
    return figures


def _child(arguments: list[str]) -> dict[str, Any]:
    """Run ``python -c`` with these arguments; its JSON line and its peak resident memory."""
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(
            [sys.executable, "-c", *arguments],
            stdout=subprocess.PIPE,
            stderr=errors,
            env={**os.environ, "DREAM_WORKSPACE": ""},
        )
        assert child.stdout is not None
        output = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak, not the largest's
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            errors.seek(0)
            last = errors.read().decode(errors="replace").strip().splitlines()[-1:]
            return {"error": f"exit {child.returncode}: {(last or ['no output'])[0]}"}
    figures: dict[str, Any] = json.loads(output)
    # The child's own high-water mark where the system tells it (Linux): wait4's figure also
    # counts the memory of this process, which the child started as a copy of.
    own = figures.pop("hwm_mb", None)
    figures["peak_rss_mb"] = own if own is not None else round(usage.ru_maxrss / 1024.0, 1)
    return figures


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
    reuse: Path | None = None,
    cache: Path | None = None,
    counts: Progress | None = None,
) -> dict[str, Any]:
    """Measure every size in turn (smallest first) in a fresh folder; return the report.

    With ``store_url`` (PostgreSQL) the workspaces' stores are rows there (they stay). With
    ``reuse``, the workspaces are that folder's ``ws-N`` (kept: see the module doc); with
    ``cache``, each size is loaded once into that folder and measured on a copy."""
    if not sizes or min(sizes) < 1:
        raise UsageError("--crystals must be 1 or more, e.g. --crystals 100000")
    if cache is not None and store_url:
        raise UsageError("--cache keeps SQLite workspaces only; drop --cache or --store-url")
    if cache is not None and reuse is not None:
        raise UsageError("--cache and --reuse both name where workspaces stay; give one")
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    if reuse is not None:
        if not reuse.is_dir():
            raise UsageError(
                f"{reuse} is not a folder; pass the one --keep printed, or leave --reuse out"
            )
        root, keep = reuse, True
    else:
        if parent is not None:
            parent.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="dream-bench-scale-", dir=parent))
    try:
        report: dict[str, Any] = {}
        if migrate:
            if progress:
                progress("seed migration of a 1 MB MEMORY.md")
            if reuse is None:
                report["migrate"] = _migrate(root / "migrate", random.Random(11), NOW)
            else:  # a fresh one: the reused folder's would be migrated already
                fresh = Path(tempfile.mkdtemp(prefix="migrate-", dir=root))
                try:
                    report["migrate"] = _migrate(fresh, random.Random(11), NOW)
                finally:
                    shutil.rmtree(fresh, ignore_errors=True)
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
                reuse=reuse is not None,
                cache=cache,
                counts=counts,
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
