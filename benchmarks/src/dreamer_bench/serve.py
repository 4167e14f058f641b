"""One ``dream serve`` over many workspaces: job outcomes, open files, note latency.

``run(workspaces=200, seconds=120, nofile=256)`` makes N fresh workspaces with a few notes each,
starts ``dream serve`` over all of them as a child process with ``RLIMIT_NOFILE`` set to
``nofile`` (as ``ulimit -n`` would) and short intervals so that many jobs fire, and meanwhile:

- counts the child's open files (``/proc/<pid>/fd``) every 50 ms: the peak is the figure;
- reads the child's resident memory (``VmRSS`` in ``/proc/<pid>/status``) every second: the
  figures are its value after the first ``MEMORY_SETTLE`` seconds (every module loaded, the
  first jobs run), at the end, its peak, the growth between the first two, and one sample a
  ``MEMORY_STEP`` (the memory over time);
- writes agent notes into random workspaces from this process (``Workspace.note``), timing
  each: a note must not wait on the service's jobs;
- after ``seconds``, stops the service with SIGTERM, then reads every workspace's ``runs``
  table and compares it with the runs the service logged: every logged outcome must be in a
  ``runs`` table, and no run may have failed; runs recorded as ``overrun`` (a beat that came
  while the job's previous run was still running or queued: the service was saturated) are
  counted apart.

Linux only (``/proc``). The service runs with the offline synthesizer and no API key.
"""

from __future__ import annotations

import os
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dreamer.memory.workspace import Workspace

# A run as `dream serve` logs it: "<workspace> <job>: <outcome> (<detail>)".
_LOGGED = re.compile(r" (?P<root>/\S+) (?P<job>consolidate|dream): (?P<outcome>[a-z]+) \(")
ERRORS = ("failed",)  # a job that went wrong
# "overrun" is no error of a job: its beat came while the previous run was still running or
# waiting for a worker (the service was saturated), and it is counted apart. So is
# "interrupted": serve records it only when it stops (here: the benchmark's own SIGTERM) with a
# job still running past its grace, as a consolidation can on a saturated machine.


def tally(recorded: Counter[tuple[str, str, str]]) -> dict[str, int]:
    """Job errors, runs the stop cut short, and overruns among (root, job, outcome) counts."""
    return {
        "job_errors": sum(n for (_, _, outcome), n in recorded.items() if outcome in ERRORS),
        "interrupted_at_stop": sum(
            n for (_, _, outcome), n in recorded.items() if outcome == "interrupted"
        ),
        "overruns": sum(n for (_, _, outcome), n in recorded.items() if outcome == "overrun"),
    }


def _limit(nofile: int) -> Callable[[], None]:
    def apply() -> None:  # in the child, before exec
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        soft = nofile if hard == resource.RLIM_INFINITY else min(nofile, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return apply


def _open_files(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


MEMORY_SETTLE = 60.0  # seconds: the start-up and the first jobs load what a serve keeps
MEMORY_STEP = 30.0  # seconds between the samples reported as the memory over time


def _resident_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _memory(series: list[tuple[float, float]]) -> dict[str, Any]:
    """The resident-memory figures of ``series`` ((seconds since start, MB) samples)."""
    if not series:
        return {}
    settled = next((mb for at, mb in series if at >= MEMORY_SETTLE), series[-1][1])
    end = series[-1][1]
    over_time, next_at = [], 0.0
    for at, mb in series:
        if at >= next_at:
            over_time.append([round(at), round(mb, 1)])
            next_at = at + MEMORY_STEP
    return {
        "settled": round(settled, 1),
        "end": round(end, 1),
        "peak": round(max(mb for _, mb in series), 1),
        "growth_after_settling": round(end - settled, 1),
        "over_time": over_time,
    }


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def run(
    *,
    workspaces: int = 200,
    seconds: float = 120.0,
    nofile: int = 256,
    workers: int = 4,
    consolidation_minutes: float = 0.25,
    dream_minutes: float = 0.5,
    notes_per_second: float = 10.0,
    parent: Path | None = None,
    keep: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Serve ``workspaces`` for ``seconds`` under ``ulimit -n nofile``; return the figures."""
    say = progress or (lambda _: None)
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="dream-bench-serve-", dir=parent))
    try:
        roots = [base / f"agent-{i:03d}" for i in range(workspaces)]
        say(f"making {workspaces} workspaces in {base}")
        for i, root in enumerate(roots):
            with Workspace.open(root, environ={}) as ws:
                ws.init()
                for n in range(6):  # enough for a first dream
                    ws.note(f"Agent {i} note {n}: the order for customer {n} shipped late")
        env = {
            **os.environ,
            "DREAM_SYNTHESIZER": "offline",
            "DREAM_CONSOLIDATION_INTERVAL_MINUTES": str(consolidation_minutes),
            "DREAM_DREAM_INTERVAL_MINUTES": str(dream_minutes),
        }
        env.pop("ANTHROPIC_API_KEY", None)
        env.pop("DREAM_WORKSPACE", None)
        args = [sys.executable, "-m", "dreamer.cli", "serve", "--workers", str(workers)]
        for root in roots:
            args += ["-w", str(root)]
        say(f"dream serve: {workspaces} workspaces, {seconds:g} s, ulimit -n {nofile}")
        log_path = base / "serve.log"
        with log_path.open("w") as log_file:
            child = subprocess.Popen(
                args, env=env, stdout=subprocess.DEVNULL, stderr=log_file, preexec_fn=_limit(nofile)
            )
            peak, samples, latencies, note_errors, memory = _watch(
                child, roots, seconds, notes_per_second
            )
            child.send_signal(signal.SIGTERM)
            try:
                code = child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                code = child.wait()
        log = log_path.read_text(encoding="utf-8", errors="replace")
        logged = Counter(
            (found["root"], found["job"], found["outcome"]) for found in _LOGGED.finditer(log)
        )
        recorded: Counter[tuple[str, str, str]] = Counter()
        for root in roots:
            with Workspace.open(root, create=False, environ={}) as ws:
                for job, outcome in ws.store.journal.run_outcomes():
                    recorded[(str(root), job, outcome)] += 1
        missing = logged - recorded
        outcomes = Counter(
            f"{job} {outcome}" for (_, job, outcome), n in recorded.items() for _ in range(n)
        )
        report = {
            "workspaces": workspaces,
            "seconds": seconds,
            "nofile_limit": nofile,
            "workers": workers,
            "intervals_minutes": {"consolidate": consolidation_minutes, "dream": dream_minutes},
            "exit_code": code,
            "runs": sum(recorded.values()),
            "outcomes": dict(sorted(outcomes.items())),
            **tally(recorded),
            "logged_runs": sum(logged.values()),
            "logged_but_not_in_runs": sum(missing.values()),
            "tracebacks": log.count("Traceback"),
            "log_errors": log.count(" ERROR "),
            "peak_open_files": peak,
            "resident_mb": _memory(memory),
            "open_files_samples": samples,
            "notes": len(latencies),
            "note_errors": note_errors,
            "note_ms": {
                "p50": round(statistics.median(latencies) * 1000, 1) if latencies else None,
                "p99": round(_percentile(latencies, 0.99) * 1000, 1),
                "max": round(max(latencies, default=0.0) * 1000, 1),
            },
        }
        if keep:
            report["kept"] = str(base)
        return report
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


def _watch(
    child: subprocess.Popen[bytes], roots: list[Path], seconds: float, rate: float
) -> tuple[int, int, list[float], int, list[tuple[float, float]]]:
    """Sample the child's open files and memory while notes are written; return (peak open
    files, samples, note latencies, note errors, resident memory samples)."""
    stop = threading.Event()
    latencies: list[float] = []
    errors = [0]

    def write_notes() -> None:
        pick = random.Random(7)
        count = 0
        while not stop.wait(1.0 / rate if rate > 0 else 3600):
            root = pick.choice(roots)
            started = time.perf_counter()
            try:
                with Workspace.open(root, create=False, environ={}) as ws:
                    ws.note(f"Live note {count}: a customer asked about invoice {count % 40}")
            except Exception:  # counted and reported: a benchmark must finish
                errors[0] += 1
            latencies.append(time.perf_counter() - started)
            count += 1

    writer = threading.Thread(target=write_notes, daemon=True)
    writer.start()
    peak = samples = 0
    memory: list[tuple[float, float]] = []
    start = time.monotonic()
    deadline = start + seconds
    next_memory = start
    while time.monotonic() < deadline and child.poll() is None:
        peak = max(peak, _open_files(child.pid))
        samples += 1
        if time.monotonic() >= next_memory:
            resident = _resident_mb(child.pid)
            if resident is not None:
                memory.append((time.monotonic() - start, resident))
            next_memory += 1.0
        time.sleep(0.05)
    stop.set()
    writer.join()
    return peak, samples, latencies, errors[0], memory
