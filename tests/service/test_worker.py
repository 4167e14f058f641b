"""`dream worker`: due jobs of many workspaces claimed from a PostgreSQL jobs table, each due time
run once, a dead worker's job taken over when its lease expires."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from dreamer import Workspace
from dreamer.cli import main
from dreamer.service import worker as workers
from dreamer.store import open_jobs
from dreamer.support.times import utc_now

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

LEASE = timedelta(seconds=60)


def make_workspaces(tmp_path: Path, count: int) -> list[Path]:
    roots = []
    for number in range(count):
        with Workspace.open(tmp_path / f"agent-{number:02d}") as ws:
            ws.init()
            roots.append(ws.root)
    return roots


@pytest.fixture
def queue(pg_database):
    with open_jobs(pg_database) as opened:
        yield opened


def test_registering_makes_one_job_per_enabled_kind(queue, tmp_path, now):
    roots = make_workspaces(tmp_path, 2)
    (roots[1] / "dreamer.toml").write_text("[memory.dream]\nenabled = false\n")
    added = workers.add_workspaces(queue, roots, now)
    assert [(row["workspace"], row["job"]) for row in added] == [
        (str(roots[0]), "consolidate"),
        (str(roots[0]), "dream"),
        (str(roots[1]), "consolidate"),
    ]
    assert all(row["new"] for row in added)
    again = workers.add_workspaces(queue, roots, now + timedelta(hours=1))
    assert not any(row["new"] for row in again)  # a known job keeps its schedule
    assert {job["next_due"] for job in queue.jobs()} == {now}


def test_two_workers_never_claim_the_same_job(pg_database, queue, tmp_path, now):
    workers.add_workspaces(queue, make_workspaces(tmp_path, 1), now)
    with open_jobs(pg_database) as other:
        first = queue.claim("a", now, LEASE, limit=1)
        second = other.claim("b", now, LEASE, limit=5)
    assert len(first) == 1 and len(second) == 1
    assert (first[0].kind, second[0].kind) == ("consolidate", "dream")
    assert queue.claim("c", now, LEASE) == []  # both held


def test_each_due_time_runs_once_whoever_works(pg_database, queue, tmp_path, now):
    roots = make_workspaces(tmp_path, 4)
    workers.add_workspaces(queue, roots, now)
    clock = [now]
    with open_jobs(pg_database) as second_queue:
        pool = [
            workers.Worker(queue, owner="a", clock=lambda: clock[0], lease=LEASE),
            workers.Worker(second_queue, owner="b", clock=lambda: clock[0], lease=LEASE),
        ]
        while any([w.step() is not None for w in pool]):
            pass
        assert {w.owner: len(w.done) for w in pool} == {"a": 4, "b": 4}
        # Half an hour later only the consolidations are due again.
        clock[0] = now + timedelta(minutes=30)
        while any([w.step() is not None for w in pool]):
            pass
    runs = queue.runs()
    assert len(runs) == 12
    assert Counter((r["workspace"], r["kind"], r["due_at"]) for r in runs).most_common(1)[0][1] == 1
    counts = {(job["workspace"], job["kind"]): job["runs_count"] for job in queue.jobs()}
    assert set(counts.values()) == {1, 2}
    assert all(counts[(str(root), "consolidate")] == 2 for root in roots)
    # Every run also reached the workspace's own journal, where `dream status` reads it.
    with Workspace.open(roots[0], create=False) as ws:
        assert ws.store.journal.last_run("consolidate")[1] == "done"
        assert ws.store.journal.last_run("dream")[1] == "skipped"


def test_an_expired_lease_passes_the_job_on_and_the_late_worker_counts_nothing(
    queue, tmp_path, now
):
    workers.add_workspaces(queue, make_workspaces(tmp_path, 1), now)
    (late,) = queue.claim("late", now, LEASE, limit=1)
    assert queue.claim("next", now + timedelta(seconds=30), LEASE, limit=1)[0].kind == "dream"
    assert queue.claim("next", now + timedelta(seconds=59), LEASE, limit=1) == []
    (taken,) = queue.claim("next", now + timedelta(seconds=61), LEASE, limit=1)
    assert (taken.kind, taken.due_at, taken.token) == (late.kind, late.due_at, late.token + 1)
    assert not queue.renew(late, now + timedelta(seconds=62), LEASE)
    assert queue.finish(taken, now, now + timedelta(seconds=70), "done", "ok")
    assert not queue.finish(late, now, now + timedelta(seconds=80), "done", "too late")
    runs = [r for r in queue.runs() if r["kind"] == late.kind]
    assert [(r["owner"], r["due_at"]) for r in runs] == [("next", now)]
    job = next(j for j in queue.jobs() if j["kind"] == late.kind)
    assert (job["runs_count"], job["next_due"]) == (1, now + timedelta(minutes=30))


def test_a_job_that_ran_late_folds_its_missed_due_times_into_one(queue, tmp_path, now):
    workers.add_workspaces(queue, make_workspaces(tmp_path, 1), now)
    hours_later = now + timedelta(hours=3)
    (claim,) = queue.claim("w", hours_later, LEASE, limit=1)
    assert queue.finish(claim, hours_later, hours_later, "done", None)
    job = next(j for j in queue.jobs() if j["kind"] == claim.kind)
    assert job["next_due"] == hours_later  # not six catch-up runs


def test_a_missing_workspace_is_a_failed_run_not_a_dead_worker(queue, tmp_path, now):
    roots = make_workspaces(tmp_path, 1)
    workers.add_workspaces(queue, roots, now)
    (roots[0] / "memory").rename(roots[0] / "moved")
    worker = workers.Worker(queue, owner="w", clock=lambda: now, lease=LEASE)
    assert worker.run(until_idle=True) == 2
    assert {o.outcome for o in worker.done} == {"failed"}
    assert "no dreamer workspace" in worker.done[0].detail
    assert worker.counts == {"failed": 2}


def test_a_long_running_worker_keeps_its_newest_outcomes_and_counts_them_all(queue, tmp_path, now):
    roots = make_workspaces(tmp_path, 2)
    workers.add_workspaces(queue, roots, now)
    (roots[0] / "memory").rename(roots[0] / "moved")
    worker = workers.Worker(queue, owner="w", clock=lambda: now, lease=LEASE, keep=3)
    assert worker.run(until_idle=True) == 4
    assert len(worker.done) == 3  # bounded: a worker of months does not grow by every job
    assert worker.counts["failed"] == 2 and sum(worker.counts.values()) == 4


_DIE_AFTER_CLAIM = """
import os, signal, sys
from datetime import timedelta
from dreamer.store import open_jobs
from dreamer.support.times import utc_now
from dreamer.support.times import utc_now
queue = open_jobs(sys.argv[1])
claims = queue.claim("doomed", utc_now(), timedelta(seconds=float(sys.argv[2])), limit=1)
print(claims[0].workspace, claims[0].kind, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _worker(url: str, owner: str, lease: float) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "dreamer.cli", "worker", "run", "--db", url]
    command += ["--id", owner, "--lease", str(lease), "--poll", "0.05", "--until-idle"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_killed_workers_jobs_are_taken_over_and_every_due_job_runs_once(
    pg_database, queue, tmp_path
):
    roots = make_workspaces(tmp_path, 12)
    # Real processes read the real clock: due a minute ago, next due in half an hour or more.
    workers.add_workspaces(queue, roots, utc_now() - timedelta(minutes=1))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    # One worker dies holding a claim (as a SIGKILL between claim and finish leaves it)...
    doomed = subprocess.run(
        [sys.executable, "-c", _DIE_AFTER_CLAIM, pg_database, "1"],
        capture_output=True,
        env=env,
    )
    assert doomed.returncode == -signal.SIGKILL
    orphan = doomed.stdout.decode().split()
    # ... then two workers share the rest, and one of them is killed midway.
    first, second = _worker(pg_database, "one", 1.0), _worker(pg_database, "two", 1.0)
    deadline = time.monotonic() + 60
    while len(queue.runs()) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert second.wait(timeout=60) == 0, second.stderr.read().decode() if second.stderr else ""
    runs = queue.runs()
    assert len(runs) == 24
    assert len({(r["workspace"], r["kind"]) for r in runs}) == 24  # one run per due job
    assert {job["runs_count"] for job in queue.jobs()} == {1}
    assert {job["lease_owner"] for job in queue.jobs()} == {None}
    taken = next(r for r in runs if [r["workspace"], r["kind"]] == orphan)
    assert taken["owner"] in ("one", "two")  # not "doomed": its claim expired and was taken
    assert {r["outcome"] for r in runs} <= {"done", "skipped"}


def test_the_cli_adds_lists_and_runs(runner, pg_database, tmp_path):
    roots = make_workspaces(tmp_path, 2)
    env = {"DREAM_STORE_URL": pg_database}
    added = runner.invoke(
        main, ["worker", "add", "-w", str(roots[0]), "-w", str(roots[1])], env=env
    )
    assert added.exit_code == 0, added.output
    assert added.output.count("added:") == 4
    ran = runner.invoke(main, ["worker", "run", "--until-idle", "--id", "cli"], env=env)
    assert ran.exit_code == 0, ran.output
    listed = runner.invoke(main, ["worker", "list"], env=env, catch_exceptions=False)
    assert listed.output.count("1 run(s)") == 4
    removed = runner.invoke(main, ["worker", "remove", "-w", str(roots[0])], env=env)
    assert "removed 2 job(s)" in removed.output


def test_a_jobs_database_that_is_not_postgres_is_one_error_line(runner, tmp_path):
    result = runner.invoke(main, ["worker", "list", "--db", str(tmp_path / "jobs.db")])
    assert result.exit_code == 2
    assert result.output.startswith("Error: the jobs database must be a postgresql:// URL")


def test_a_worker_reconnects_when_the_jobs_database_drops_it(pg_database, queue, tmp_path, now):
    import psycopg

    workers.add_workspaces(queue, make_workspaces(tmp_path, 1), now)
    with psycopg.connect(pg_database, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [queue.conn.info.backend_pid])
    worker = workers.Worker(queue, owner="w", clock=lambda: now, lease=LEASE, poll_seconds=0.01)
    assert worker.run(until_idle=True) == 2
    assert {job["runs_count"] for job in queue.jobs()} == {1}


def test_a_cron_schedule_registers_and_reschedules_at_its_cron_times(queue, tmp_path, now):
    [root] = make_workspaces(tmp_path, 1)
    (root / "dreamer.toml").write_text('[memory.dream]\nschedule = "0 3 * * *"\n')
    workers.add_workspaces(queue, [root], now)
    three = now.replace(hour=3, minute=0) + timedelta(days=1)  # now is 14:30: the next 03:00
    dream = next(j for j in queue.jobs() if j["kind"] == "dream")
    assert dream["next_due"] == three
    assert not [
        c for c in queue.claim("w", three - timedelta(minutes=1), LEASE, 5) if c.kind == "dream"
    ]
    claims = [c for c in queue.claim("w", three, LEASE, 5) if c.kind == "dream"]
    assert len(claims) == 1
    clock = iter([three, three, three + timedelta(seconds=40), three + timedelta(seconds=41)])
    outcome = workers.run_claim(queue, claims[0], clock=lambda: next(clock, three))
    assert outcome.counted
    dream = next(j for j in queue.jobs() if j["kind"] == "dream")
    assert dream["next_due"] == three + timedelta(days=1)  # the next 03:00, not due + a gap
