"""``dream import`` of N crystals with the default embedder and with the hashing one, same run.

An export of N synthetic crystals (agent notes and session turns, as ``dream bench scale``
makes them) is written once; each embedder then imports it into a fresh workspace
(``dreamer.agents.export.import_all``, what ``dream import`` runs): restoring the records in
one transaction, then embedding every crystal. The time of each, and their ratio.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dreamer.agents import export
from dreamer.memory.workspace import Workspace
from dreamer.store import NewCrystal
from dreamer.store.kinds import infer_type
from dreamer.support.progress import Progress, offset
from dreamer_bench.synthetic import NOW, synthetic_text

EMBEDDERS = ("auto", "hashing")


def _export(folder: Path, count: int) -> Path:
    rng = random.Random(5)
    with Workspace.open(folder / "source", overrides={"embedder": "hashing"}) as ws:
        ws.init()
        texts = [synthetic_text(rng) for _ in range(count)]
        ws.store.crystals.add_crystals(
            [
                NewCrystal(
                    text, importance=0.5, source="scratch", semantic_type=infer_type(text), at=NOW
                )
                for text in texts
            ]
        )
        path = folder / "export.jsonl"
        export.export_all(ws, path, NOW)
    return path


def run(
    count: int,
    *,
    parent: Path | None = None,
    say: Callable[[str], None] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Seconds to import ``count`` crystals with each embedder; ``progress`` counts both
    imports' records and vectors."""
    say = say or (lambda message: None)
    folder = Path(tempfile.mkdtemp(prefix="dream-bench-import-", dir=parent))
    report: dict[str, Any] = {"crystals": count}
    try:
        path = _export(folder, count)
        rows = export.read(path)
        part = len(rows) + count
        for number, embedder in enumerate(EMBEDDERS):
            say(f"importing {count:,} crystals with the {embedder} embedder")
            with Workspace.open(folder / f"to-{embedder}", overrides={"embedder": embedder}) as ws:
                ws.init()
                started = time.perf_counter()
                export.import_all(ws, rows, NOW, progress=offset(progress, number * part, 2 * part))
                seconds = time.perf_counter() - started
                report[embedder] = {
                    "embedder": ws.embedder.name,
                    "seconds": round(seconds, 2),
                    "crystals_per_second": round(count / seconds, 1),
                }
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    report["ratio"] = round(report["auto"]["seconds"] / report["hashing"]["seconds"], 1)
    return report


def format_report(report: dict[str, Any]) -> str:
    """One line per embedder and the ratio."""
    lines = [f"import of {report['crystals']:,} crystals"]
    for embedder in EMBEDDERS:
        row = report[embedder]
        lines.append(
            f"  {row['embedder']}: {row['seconds']} s ({row['crystals_per_second']} crystals/s)"
        )
    lines.append(f"  the default embedder takes {report['ratio']}x the hashing one's time")
    return "\n".join(lines)
