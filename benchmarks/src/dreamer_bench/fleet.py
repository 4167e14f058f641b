"""A fleet on PostgreSQL: N workspaces, M ``dream worker`` processes, W note writers, one killed
worker, for S seconds; what it sustained and whether every promise held.

Set-up: a PostgreSQL 16 with pgvector (started here from the ``pgserver`` wheel, as the tests
do, unless ``db`` is given), N fresh workspaces whose stores are rows in it (``memory.store.url``)
and whose jobs come due often (consolidation every ``consolidate_minutes``, a dream every
``dream_minutes`` once 3 notes wait), registered in the jobs table. Then M worker processes
(``dream worker run``) and W writer processes (``Workspace.note`` in a loop over their share of
the workspaces, each acknowledged note written down) run for ``seconds``; at ``kill_at`` the
first worker is SIGKILLed while it holds a job. Figures:

- ``notes_per_second``: acknowledged notes over the run; ``notes_missing``: acknowledged notes
  not in their workspace's store afterwards (must be 0); ``notes_unaccounted``: acknowledged
  notes no dream consumed that are not in the scratch rows either (must be 0);
- ``dreams_per_hour``: committed dreams, per hour of run;
- ``lateness_p50``/``p99``: seconds from a job's due time to a worker starting it;
- ``runs``, ``duplicate_runs`` (runs of one due time beyond the first, must be 0),
  ``backlog`` (jobs still overdue at the end by more than one lease);
- ``recovery_seconds``: from the kill until the job the killed worker held was finished by
  another worker (about the lease length);
- ``memory_whole``: workspaces whose MEMORY.md file and state row are both exactly the newest
  committed state in the journal (must be all that dreamt).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from dreamer.errors import DreamError, UsageError
from dreamer.memory.workspace import Workspace
from dreamer.service import worker as workers
from dreamer.store import content_hash, open_jobs
from dreamer.support.times import utc_now

_TOPICS = (
    "the billing migration",
    "the search revamp",
    "on-call rotation",
    "the pricing page",
    "the invoice service",
    "mobile onboarding",
    "the data warehouse",
    "release train",
)
_VERBS = ("shipped", "blocked", "reviewed", "planned", "fixed", "discussed", "postponed")
_PEOPLE = ("Ada", "Priya", "Marco", "Lena", "Yuki", "Omar", "Grace", "Ines")


def _note_text(rng: random.Random, number: int) -> str:
    return (
        f"{rng.choice(_PEOPLE)} {rng.choice(_VERBS)} {rng.choice(_TOPICS)} "
        f"(item {number}, {rng.randint(1, 10_000)})"
    )


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3)


def _settings(url: str, consolidate_minutes: float, dream_minutes: float) -> str:
    return (
        f'[memory.store]\nurl = "{url}"\n'
        f"[memory.consolidation]\nintervalMinutes = {consolidate_minutes}\n"
        f"[memory.dream]\nintervalMinutes = {dream_minutes}\nminChunksForDream = 3\n"
    )


@dataclass(frozen=True)
class Fleet:
    """The shape of one fleet run (see the module doc)."""

    workspaces: int = 50
    workers: int = 2
    writers: int = 4
    seconds: float = 60.0
    kill_at: float | None = 30.0
    lease_seconds: float = 5.0
    consolidate_minutes: float = 0.25
    dream_minutes: float = 0.5


def run(
    fleet: Fleet,
    *,
    db: str | None = None,
    parent: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the fleet (on ``db``, else on a PostgreSQL started here) and return the report."""
    if fleet.workspaces < 1 or fleet.workers < 1 or fleet.writers < 0 or fleet.seconds <= 0:
        raise UsageError("workspaces and workers must be 1 or more, seconds above 0")
    if fleet.kill_at is not None and (fleet.workers < 2 or fleet.kill_at >= fleet.seconds):
        raise UsageError("killing a worker needs 2 workers or more and --kill-at below --seconds")
    say = progress or (lambda message: None)
    with tempfile.TemporaryDirectory(prefix="dream-bench-fleet-", dir=parent) as tmp:
        if db is not None:
            return _run(fleet, Path(tmp), db, say)
        from dreamer_bench.pg_server import PostgresUnavailable, start_postgres

        try:
            server = start_postgres(tmp)
        except PostgresUnavailable as e:
            raise DreamError(
                f"cannot start a PostgreSQL for the fleet bench ({e.reason}); "
                "pass --db URL of a scratch database"
            ) from e
        with server:
            say(f"PostgreSQL {server.version} started")
            return _run(fleet, Path(tmp), server.url, say)


def _run(fleet: Fleet, folder: Path, url: str, say: Callable[[str], None]) -> dict[str, Any]:
    roots = []
    for number in range(fleet.workspaces):
        root = folder / f"agent-{number:03d}"
        root.mkdir()
        (root / "dreamer.toml").write_text(
            _settings(url, fleet.consolidate_minutes, fleet.dream_minutes)
        )
        with Workspace.open(root) as ws:
            ws.init()
        roots.append(root.resolve())
    with open_jobs(url) as queue:
        say(f"{len(roots)} workspaces made; starting {fleet.workers} workers")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        logs = folder / "logs"
        logs.mkdir()
        pool = [
            _spawn(
                [
                    *("-m", "dreamer.cli", "worker", "run", "--db", url, "--id", f"w{n}"),
                    *("--lease", str(fleet.lease_seconds), "--poll", "0.2"),
                ],
                logs / f"worker-{n}.log",
                env,
            )
            for n in range(fleet.workers)
        ]
        # The clock starts once every worker is up (importing takes seconds): lateness is
        # the fleet's, not a process start's.
        _wait_ready([logs / f"worker-{n}.log" for n in range(fleet.workers)], "ready")
        workers.add_workspaces(queue, roots, utc_now())
        say(f"workers ready; {len(roots)} workspaces registered, due now")
        shares = [roots[n :: fleet.writers] for n in range(fleet.writers)]
        acks = [logs / f"acks-{n}.tsv" for n in range(fleet.writers)]
        writing = [
            _spawn(
                [
                    *("-m", "dreamer_bench.fleet", "--write", str(acks[n])),
                    *("--seconds", str(fleet.seconds), "--seed", str(n)),
                    *map(str, share),
                ],
                logs / f"writer-{n}.log",
                env,
            )
            for n, share in enumerate(shares)
            if share
        ]
        started = time.monotonic()
        kill = _kill_first(queue, pool[0], started, fleet, say) if fleet.kill_at else None
        while time.monotonic() - started < fleet.seconds:
            time.sleep(0.2)
        ended = utc_now()
        for process in writing:
            process.wait(timeout=120)
        for process in pool[1:] if kill else pool:
            process.send_signal(signal.SIGTERM)
        for process in pool:
            process.wait(timeout=300)
        elapsed = time.monotonic() - started
        say(f"ran {elapsed:.0f}s; checking")
        return _report(queue, roots, acks, kill, ended, elapsed, fleet)


def _wait_ready(logs: list[Path], word: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not all(log.exists() and word in log.read_text(errors="replace") for log in logs):
        if time.monotonic() > deadline:
            raise DreamError(f"the fleet's workers did not start within {timeout:g}s; see {logs}")
        time.sleep(0.05)


def _spawn(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, *args], stdout=out, stderr=subprocess.STDOUT, env=env
        )


def _kill_first(
    queue: Any,
    victim: subprocess.Popen[bytes],
    started: float,
    fleet: Fleet,
    say: Callable[[str], None],
) -> dict[str, Any] | None:
    """SIGKILL the first worker at kill_at, at a moment it holds a job; what it held."""
    while time.monotonic() - started < (fleet.kill_at or 0):
        time.sleep(0.05)
    deadline = time.monotonic() + fleet.seconds / 4
    while time.monotonic() < deadline:
        held = [
            job
            for job in queue.jobs()
            if job["lease_owner"] == "w0" and job["lease_until"] and job["lease_until"] > utc_now()
        ]
        if held:
            victim.send_signal(signal.SIGKILL)
            at = utc_now()
            victim.wait()
            say(f"worker w0 killed holding {held[0]['kind']} of {held[0]['workspace']}")
            return {"at": at, "held": held}
        time.sleep(0.005)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    return {"at": utc_now(), "held": []}


def _report(
    queue: Any,
    roots: list[Path],
    acks: list[Path],
    kill: dict[str, Any] | None,
    ended: Any,
    elapsed: float,
    fleet: Fleet,
) -> dict[str, Any]:
    runs = queue.runs([str(root) for root in roots])
    jobs = queue.jobs()
    lateness = [(r["started_at"] - r["due_at"]).total_seconds() for r in runs]
    per_due = Counter((r["workspace"], r["kind"], r["due_at"]) for r in runs)
    slack = timedelta(seconds=fleet.lease_seconds + 30)
    backlog = [j for j in jobs if j["next_due"] < ended - slack]
    recovery = None
    if kill and kill["held"]:
        held = {(j["workspace"], j["kind"]) for j in kill["held"]}
        taken = [
            r for r in runs if (r["workspace"], r["kind"]) in held and r["finished_at"] > kill["at"]
        ]
        if taken:
            first = min(taken, key=lambda r: r["finished_at"])
            recovery = {
                "taken_over_after": round((first["started_at"] - kill["at"]).total_seconds(), 2),
                "finished_after": round((first["finished_at"] - kill["at"]).total_seconds(), 2),
                "by": first["owner"],
                "outcome": first["outcome"],
            }
    notes, missing, unaccounted, rate = 0, 0, 0, 0.0
    for path in acks:
        if not path.exists():
            continue
        lines = [line.split("\t", 1) for line in path.read_text().splitlines() if line]
        for count, spent in (tail.split() for mark, tail in lines if mark == "#"):
            rate += int(count) / float(spent)
        lines = [line for line in lines if line[0] != "#"]
        notes += len(lines)
        by_root: dict[str, list[str]] = {}
        for where, text in lines:
            by_root.setdefault(where, []).append(text)
        for folder, texts in by_root.items():
            with Workspace.open(folder, create=False) as ws:
                waiting = Counter(note.text for note in ws.scratch.waiting())
                for text in texts:
                    crystal_id = ws.store.crystals.find_by_hash(content_hash(text))
                    if crystal_id is None:
                        missing += 1
                    elif (
                        ws.store.crystals.get(crystal_id).lifecycle == "generated"
                        and not waiting[text]
                    ):
                        unaccounted += 1  # no dream took it, yet the scratch lost it
    whole, dreamt = 0, 0
    for root in roots:
        with Workspace.open(root, create=False) as ws:
            latest = ws.store.journal.latest_dream_id(["committed"])
            if latest is None:
                continue
            dreamt += 1
            state = ws.store.journal.get_dream(latest)["new_state"]
            on_disk = ws.memory_md.exists() and ws.memory_md.read_text(encoding="utf-8")
            whole += on_disk == state and ws.read_memory() == state  # the file and the row
    committed = sum(1 for r in runs if r["kind"] == "dream" and r["outcome"] == "committed")
    return {
        "workspaces": len(roots),
        "workers": fleet.workers,
        "writers": fleet.writers,
        "seconds": round(elapsed, 1),
        "lease_seconds": fleet.lease_seconds,
        "intervals_minutes": {
            "consolidate": fleet.consolidate_minutes,
            "dream": fleet.dream_minutes,
        },
        "notes": notes,
        "notes_per_second": round(rate, 1),  # each writer over its own writing time
        "notes_missing": missing,
        "notes_unaccounted": unaccounted,
        "runs": len(runs),
        "runs_by_outcome": dict(Counter(f"{r['kind']} {r['outcome']}" for r in runs)),
        "dreams_committed": committed,
        "dreams_per_hour": round(committed * 3600 / elapsed),
        "lateness_p50": _percentile(lateness, 0.50),
        "lateness_p99": _percentile(lateness, 0.99),
        "duplicate_runs": sum(count - 1 for count in per_due.values()),
        "runs_counted": sum(j["runs_count"] for j in jobs) == len(runs),
        "backlog": len(backlog),
        "killed": None
        if kill is None
        else {"held": [f"{j['kind']} {j['workspace']}" for j in kill["held"]]},
        "recovery": recovery,
        "memory_whole": f"{whole}/{dreamt}",
    }


def _write(out: Path, seconds: float, seed: int, roots: list[str]) -> None:
    """A writer process: notes into its workspaces round-robin, each ack written down."""
    rng = random.Random(seed)
    spaces = [Workspace.open(root, create=False) for root in roots]
    for ws in spaces:
        _ = ws.store  # connect before the clock starts
    began = time.monotonic()
    deadline = began + seconds
    number = 0
    with out.open("a", encoding="utf-8") as acks:
        while time.monotonic() < deadline:
            ws = spaces[number % len(spaces)]
            text = _note_text(rng, number)
            ws.note(text, importance=0.5)
            acks.write(f"{ws.root}\t{text}\n")  # written only once note() returned
            acks.flush()
            number += 1
        acks.write(f"#\t{number} {time.monotonic() - began}\n")
    for ws in spaces:
        ws.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A fleet bench note writer (internal).")
    parser.add_argument("--write", type=Path, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("roots", nargs="+")
    options = parser.parse_args()
    _write(options.write, options.seconds, options.seed, options.roots)
