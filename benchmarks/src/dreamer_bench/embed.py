"""Peak memory of embedding many waiting texts: flat in their number, or not.

For each size N a fresh workspace gets N session turns without a vector (as ``dream ingest``
leaves them for the default sentence model, which embeds later), of many lengths: most a
few hundred to a few thousand characters, one in ten up to a note's limit. Then three fresh
processes (children: ``python -c``), each on its own copy of that workspace, report their
peak resident memory (their own ``VmHWM`` where Linux has it, else ``ru_maxrss`` from
``os.wait4``) and time:

- ``floor``: open the workspace, load the embedder and embed one text: what any embedding
  process holds, the reference of the same run;
- ``reindex``: ``dream reindex``'s core call, every crystal given a vector;
- ``waiting`` (when asked for: it takes as long again): what a consolidation tick, a search
  or an import runs, every waiting crystal given a vector (``embed_waiting``, up to the
  tick's limit).

Flat means the peaks for 500 and 5,000 texts are about the same, a little above the floor.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dreamer.memory.workspace import Workspace
from dreamer.store import NewCrystal
from dreamer.support.bounds import READ_MAX_CHARS
from dreamer.support.progress import Progress
from dreamer_bench.synthetic import NOW, synthetic_text

PATHS = ("floor", "reindex", "waiting")
DEFAULT_PATHS = ("floor", "reindex")
WRITE_BATCH = 1_000


def turn(rng: random.Random) -> str:
    """One session turn: synthetic sentences up to a length drawn as real turns run."""
    target = (
        rng.randrange(8_000, READ_MAX_CHARS)
        if rng.random() < 0.1
        else int(rng.lognormvariate(6.5, 0.9))
    )
    parts = [f"{'User' if rng.random() < 0.5 else 'Assistant'}:"]
    size = len(parts[0])
    while size < target:
        parts.append(synthetic_text(rng))
        size += len(parts[-1]) + 1
    return " ".join(parts)


def fill(ws: Workspace, count: int, rng: random.Random) -> int:
    """Add ``count`` session turns without vectors; their characters in all."""
    chars = 0
    for start in range(0, count, WRITE_BATCH):
        rows = []
        for _ in range(min(WRITE_BATCH, count - start)):
            text = turn(rng)
            chars += len(text)
            rows.append(
                NewCrystal(
                    text, importance=0.5, source="sessions", semantic_type="episodic", at=NOW
                )
            )
        ws.store.crystals.add_crystals(rows)
    return chars


def child() -> None:
    """The child's side: run one path on the workspace in argv, print its figures as JSON."""
    path, root, embedder = sys.argv[1:4]
    from dreamer.retrieval.reindex import TICK_LIMIT, embed_waiting, reindex

    started = time.perf_counter()
    with Workspace.open(
        root, create=False, overrides={"synthesizer": "offline", "embedder": embedder}
    ) as ws:
        if path == "floor":
            ws.embedder.embed(["The kiln parts ship on Monday"])
            done = 1
        elif path == "reindex":
            done = reindex(ws.store, ws.embedder)
        else:
            done = embed_waiting(ws.store, ws.embedder, limit=TICK_LIMIT)
        name = ws.embedder.name
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {"hwm_mb": _high_water(), "embedded": done, "seconds": seconds, "embedder": name}
        )
    )


def _high_water() -> float | None:
    """This process's own peak resident memory (VmHWM); None where /proc has no such line."""
    try:
        with open("/proc/self/status") as status:
            line = next(x for x in status if x.startswith("VmHWM:"))
        return round(int(line.split()[1]) / 1024.0, 1)
    except (OSError, StopIteration):
        return None


def _run_child(path: str, root: Path, embedder: str) -> dict[str, Any]:
    """One path in a fresh process: its JSON figures and its peak resident memory."""
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from dreamer_bench.embed import child; child()",
                path,
                str(root),
                embedder,
            ],
            stdout=subprocess.PIPE,
            stderr=errors,
            env={**os.environ, "DREAM_WORKSPACE": ""},
        )
        assert process.stdout is not None
        output = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status):
            errors.seek(0)
            last = errors.read().decode(errors="replace").strip().splitlines()[-1:]
            return {"error": last[0] if last else f"exit status {status}"}
    figures: dict[str, Any] = json.loads(output)
    own = figures.pop("hwm_mb")
    # wait4's ru_maxrss can count the memory this process had when it started the child.
    figures["peak_rss_mb"] = own if own is not None else round(usage.ru_maxrss / 1024.0, 1)
    figures["texts_per_second"] = (
        round(figures["embedded"] / figures["seconds"], 1) if figures["seconds"] else None
    )
    figures["seconds"] = round(figures["seconds"], 2)
    return figures


def run(
    sizes: list[int],
    *,
    embedder: str = "auto",
    parent: Path | None = None,
    paths: tuple[str, ...] = DEFAULT_PATHS,
    say: Callable[[str], None] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Peak memory of each path at each size; ``progress(done, total)`` counts child runs."""
    say = say or (lambda message: None)
    rng = random.Random(7)
    workdir = Path(tempfile.mkdtemp(prefix="dream-bench-embed-", dir=parent))
    total, done = len(sizes) * len(paths), 0
    report: dict[str, Any] = {"sizes": []}
    try:
        for size in sizes:
            base = workdir / f"ws-{size}"
            with Workspace.open(base, overrides={"embedder": embedder}) as ws:
                ws.init()
                chars = fill(ws, size, rng)
            row: dict[str, Any] = {"texts": size, "characters": chars}
            for path in paths:
                say(f"{size:,} texts: {path}")
                copy = workdir / f"ws-{size}-{path}"
                shutil.copytree(base, copy)
                row[path] = _run_child(path, copy, embedder)
                shutil.rmtree(copy, ignore_errors=True)
                done += 1
                if progress:
                    progress(done, total)
            report["sizes"].append(row)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report["paths"] = list(paths)
    report["embedder"] = next(
        (row[p]["embedder"] for row in report["sizes"] for p in paths if "embedder" in row[p]),
        embedder,
    )
    return report


def format_report(report: dict[str, Any]) -> str:
    """The figures as a table: peak resident MB and texts/s of each path at each size."""
    paths = report["paths"]
    lines = [
        f"embedder {report['embedder']}",
        f"{'texts':>8}{'chars':>13}"
        + "".join(f"{path + ' MB':>14}" for path in paths)
        + "".join(f"{path + '/s':>11}" for path in paths if path != "floor"),
    ]
    for row in report["sizes"]:
        cells = "".join(f"{row[path].get('peak_rss_mb', 'error'):>14}" for path in paths)
        rates = "".join(
            f"{row[path].get('texts_per_second', '-'):>11}" for path in paths if path != "floor"
        )
        lines.append(f"{row['texts']:>8,}{row['characters']:>13,}{cells}{rates}")
        for path in paths:
            if "error" in row[path]:
                lines.append(f"  {path}: {row[path]['error']}")
    return "\n".join(lines)
