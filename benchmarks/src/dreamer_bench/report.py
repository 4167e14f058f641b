"""How long ``dream report`` takes, and how big its page is, on a workspace with long history.

The workspace is synthetic but shaped like an agent's after ``days`` of running: ``crystals``
notes and transcript turns (``synthetic.bulk_load``: the oldest 40% archived), some archived later
and a few frozen, a consolidation every 30 minutes (a hormone row each, plus a few stimuli a
day, levels decaying as ``memory.hormones`` computes them), a faded-importance audit row per
crystal now and then, and a dream every 2 hours: most skipped, the rest committed (a small edit
of a ~2K-token MEMORY.md, with tokens and cost as Claude would bill), rejected or failed.
MEMORY.md ends with fifteen pointers, so the report runs fifteen real searches.

Measured: the report built in this process with cold caches (``build``), and ``dream report``
end to end in a fresh process (``cli``: interpreter start and imports included), and the page's
size in bytes.
"""

from __future__ import annotations

import os
import platform
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from dreamer.memory import hormones
from dreamer.memory.state import Pointer, render_pointers
from dreamer.memory.workspace import Workspace
from dreamer.retrieval.vectors import clear_cache as clear_vector_cache
from dreamer.service import report
from dreamer.support.files import atomic_write
from dreamer.support.progress import Progress
from dreamer.support.times import iso
from dreamer_bench import synthetic

STIMULI = (
    ("dopamine", 0.3, "achievement/breakthrough detected"),
    ("cortisol", 0.3, "error/urgency detected"),
    ("oxytocin", 0.25, "warmth/gratitude detected"),
    ("cortisol", -0.2, "incident resolved"),
)


def build_workspace(
    root: Path,
    *,
    crystals: int,
    days: int,
    now: datetime,
    seed: int = 11,
    progress: Callable[[str], None] | None = None,
    counts: Progress | None = None,
) -> dict[str, int]:
    """Create the synthetic workspace at ``root``; return how many of each thing it holds.
    ``counts(done, total)`` counts the crystals loaded."""
    say = progress or (lambda message: None)
    rng = random.Random(seed)
    start = now - timedelta(days=days)
    made: dict[str, int] = {}
    with Workspace.open(root, environ={}, overrides={"synthesizer": "offline"}) as ws:
        ws.init()
        say(f"{crystals:,} crystals over {days} days")
        made["crystals"] = synthetic.bulk_load(
            ws, crystals, rng, now, span_days=days, progress=counts
        )
        say("hormone history, lifecycle changes, dreams")
        made["hormone_rows"] = _hormones(ws, rng, start, now)
        made["audit_rows"] = _lifecycle(ws, rng, start, now, made["crystals"])
        made["dreams"], state = _dreams(ws, rng, start, now)
        atomic_write(ws.memory_md, state)
    return made


def _hormones(ws: Workspace, rng: random.Random, start: datetime, now: datetime) -> int:
    levels = hormones.rest_levels(ws)
    moment, last, rows = start, start, 0
    with ws.store.transaction():
        while moment < now:
            levels = hormones.decay(ws, levels, last, moment)
            ws.store.hormones.add_hormone_row(moment, levels, None, None, "decay", "decay")
            rows += 1
            if rng.random() < 0.08:  # about four stimuli a day
                name, delta, reason = rng.choice(STIMULI)
                at = moment + timedelta(minutes=rng.randrange(1, 29))
                levels = hormones.decay(ws, levels, moment, at)
                levels[name] = min(1.0, max(0.0, levels[name] + delta))
                ws.store.hormones.add_hormone_row(at, levels, name, delta, reason, "note")
                rows += 1
                moment, last = at, at
            last = moment
            moment += timedelta(minutes=30)
    return rows


def _lifecycle(ws: Workspace, rng: random.Random, start: datetime, now: datetime, n: int) -> int:
    store, rows = ws.store, 0
    span = (now - start).total_seconds()
    ids = rng.sample(range(1, n + 1), min(n, n // 2 + 1))
    with store.transaction():
        for number, crystal_id in enumerate(ids):
            at = start + timedelta(seconds=rng.random() * span)
            if number < len(ids) // 60:
                change, action = {"lifecycle": "archived"}, "archived"
            elif number < len(ids) // 60 + 40:
                change, action = {"lifecycle": "frozen"}, "frozen"
            else:
                store.records.audit(crystal_id, "faded", {"importance": [0.6, 0.55]}, at)
                rows += 1
                continue
            if store.crystals.get(crystal_id).lifecycle in ("archived", "frozen"):
                continue
            store.crystals.update_crystal(crystal_id, change, action=action, at=at)
            rows += 1
    return rows


def _state(at: datetime, context: list[str], pointers: str) -> str:
    body = "\n".join(f"- {line}" for line in context)
    facts = "\n".join(f"- {synthetic.synthetic_text(random.Random(i))}" for i in range(12))
    return (
        f"# Working Memory State\n\n_Last dream: {iso(at)} | Mood: steady, calm_\n\n"
        f"## The Phenotype\n{facts}\n\n## The Bond\n- Prefers short answers.\n\n"
        f"## The Niche\n- Billing team assistant.\n\n## Active Context\n{body}\n\n"
        f"## Crystal Pointers\n{pointers}\n\n## Curiosity Gaps\n- Which Postgres version?\n\n"
        "## Emerging Skills\n- Deploying billing → Confidence: 70% | Occurrences: 3\n"
    )


def _dreams(ws: Workspace, rng: random.Random, start: datetime, now: datetime) -> tuple[int, str]:
    pointers = render_pointers(
        [Pointer(topic, topic) for topic in rng.sample(list(synthetic.PROJECTS), 15)]
    )
    context = [synthetic.synthetic_text(rng) for _ in range(25)]
    state = _state(start, context, pointers)
    moment, count = start + timedelta(hours=1), 0
    with ws.store.transaction():
        while moment < now:
            roll = rng.random()
            row: dict[str, Any] = {"started_at": iso(moment), "finished_at": iso(moment)}
            if roll < 0.6:
                row.update(outcome="skipped", reason="only 2 new notes since the last dream")
            else:
                new_context = context[3:] + [synthetic.synthetic_text(rng) for _ in range(3)]
                candidate = _state(moment, new_context, pointers)
                usage = {
                    "input_tokens": rng.randrange(4000, 9000),
                    "output_tokens": rng.randrange(800, 2000),
                    "cache_read_tokens": rng.randrange(0, 3000),
                    "cost_usd": round(rng.uniform(0.01, 0.05), 4),
                    "synthesizer": "claude",
                    "model": "claude-sonnet-5-5",
                    "consumed": list(range(rng.randrange(5, 40))),
                }
                row.update(usage, old_state=state)
                if roll < 0.95:
                    row.update(outcome="committed", new_state=candidate, reason="new notes")
                    context, state = new_context, candidate
                elif roll < 0.99:
                    row.update(
                        outcome="rejected",
                        draft=candidate,
                        revisions=[candidate],
                        critiques=[["mass drop"], ["mass drop"]],
                        reason="the guards rejected the dream after 1 revision(s)",
                    )
                else:
                    row.update(outcome="failed", reason="SynthesisError: overloaded")
            ws.store.journal.record_dream(row)
            count += 1
            moment += timedelta(hours=2)
    return count, state


def machine() -> str:
    """Cores, CPU model, memory, Python and SQLite versions: what the figures depend on."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages / 2**30:.0f} GiB"
    except (OSError, ValueError):
        memory = ""
    return (
        f"{os.cpu_count()} cores ({model}){memory}, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}"
    )


def measure(root: Path, now: datetime, runs: int = 3) -> dict[str, Any]:
    """Time the report of the workspace at ``root``: in process (cold) and as a command.

    ``now`` should be the real time: the command reads the clock, and both must see the
    same period.
    """
    builds = []
    page = ""
    for _ in range(runs):
        clear_vector_cache()
        with Workspace.open(root, create=False, environ={}) as ws:
            t0 = time.perf_counter()
            page = report.build(ws, now)
            builds.append(time.perf_counter() - t0)
    out = root / "report-bench.html"
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "dreamer.cli", "report", "-w", str(root), "-o", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "DREAM_WORKSPACE": ""},
    )
    cli = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"dream report failed: {done.stderr.strip()}")
    return {
        "build_seconds": round(min(builds), 2),
        "build_seconds_runs": [round(b, 2) for b in builds],
        "cli_seconds": round(cli, 2),
        "bytes": len(page.encode("utf-8")),
        "cli_bytes": out.stat().st_size,
        "diffs": page.count("<pre>--- MEMORY.md before dream"),
    }


def run(
    now: datetime,
    *,
    crystals: int = 100_000,
    days: int = 90,
    parent: Path | None = None,
    keep: bool = False,
    progress: Callable[[str], None] | None = None,
    counts: Progress | None = None,
) -> dict[str, Any]:
    """Build a workspace whose history ends at ``now`` in a fresh folder, measure its report;
    ``counts(done, total)`` counts the crystals loaded."""
    if crystals < 1 or days < 1:
        raise ValueError("crystals and days must be 1 or more")
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="dream-bench-report-", dir=parent))
    try:
        t0 = time.perf_counter()
        made = build_workspace(
            folder / "ws", crystals=crystals, days=days, now=now, progress=progress, counts=counts
        )
        built = round(time.perf_counter() - t0, 1)
        if progress:
            progress("measuring the report")
        figures = measure(folder / "ws", now)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    result: dict[str, Any] = {
        "days": days,
        **made,
        "build_workspace_seconds": built,
        **figures,
        "machine": machine(),
    }
    if keep:
        result["kept"] = str(folder / "ws")
    return result


def format_report(result: dict[str, Any]) -> str:
    """The figures as a few lines of text."""
    return (
        f"{result['crystals']:,} crystals, {result['days']} days, {result['dreams']:,} dreams, "
        f"{result['hormone_rows']:,} hormone rows\n"
        f"report: {result['build_seconds']} s to build (cold; runs "
        f"{', '.join(map(str, result['build_seconds_runs']))}), "
        f"{result['cli_seconds']} s as 'dream report' (a fresh process), "
        f"{result['bytes'] / 1e6:.2f} MB\n"
        f"machine: {result['machine']}"
    )
