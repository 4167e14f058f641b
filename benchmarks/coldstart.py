"""Wall and CPU time of fresh ``dream note`` and ``dream search`` processes (p50, p90 of N).

    python benchmarks/coldstart.py [--runs 21] [--notes 200]

Each run is a new ``python -m dreamer.cli`` process, as an agent's hook or shell calls it, in a
workspace that already holds ``--notes`` notes. Figures go in docs/bench.md. Run it where the
package's ``.pyc`` files exist (``pip install`` writes them; in a checkout with
PYTHONDONTWRITEBYTECODE set, run ``python -m compileall -q dreamer`` first, or every run also
compiles dreamer's sources).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _wall(
    args: list[str], runs: int, env: dict[str, str], *, python: bool = False
) -> tuple[list[float], list[float]]:
    times, cpu = [], []
    for i in range(runs):
        argv = [a.replace("{i}", str(i)) for a in args]
        command = (
            [sys.executable, *argv] if python else [sys.executable, "-m", "dreamer.cli", *argv]
        )
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        times.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        cpu.append(used * 1000)
        if done.returncode != 0:
            raise SystemExit(f"dream {' '.join(argv)} failed: {done.stderr.strip()}")
    return times, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--notes", type=int, default=200)
    opts = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        ws = str(Path(tmp) / "ws")
        sys.path.insert(0, str(ROOT))
        from dreamer import Workspace

        with Workspace.open(ws) as opened:
            opened.init()
            for i in range(opts.notes):
                opened.note(f"note {i}: the deploy of service {i % 17} moved to day {i % 7}")
        floor = _wall(["-c", "pass"], opts.runs, env, python=True)
        dispatcher = _wall(["-c", "import dreamer.cli"], opts.runs, env, python=True)
        note = _wall(
            ["note", "-w", ws, "cold start note {i} about the release train"], opts.runs, env
        )
        search = _wall(["search", "-w", ws, "when is the deploy"], opts.runs, env)
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cpu, {platform.platform()}, "
        f"Python {platform.python_version()}"
    )
    for name, (times, cpu) in (
        ("python -c pass", floor),
        ("import dreamer.cli", dispatcher),
        ("dream note", note),
        ("dream search", search),
    ):
        ordered = sorted(times)
        p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
        # CPU time (user + system) moves less than wall time on a machine shared with others.
        print(
            f"{name:<18} wall p50 {statistics.median(times):5.0f} ms  p90 {p90:5.0f} ms"
            f"   cpu p50 {statistics.median(cpu):5.0f} ms   ({opts.runs} fresh processes)"
        )


if __name__ == "__main__":
    main()
