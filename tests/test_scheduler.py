"""The scheduler: due-logic from the journal, run outcomes, and the APScheduler wiring."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_SUBMITTED
from apscheduler.executors.base import BaseExecutor
from freezegun import freeze_time

from dreamer import Workspace
from dreamer.dream.synth import Draft
from dreamer.errors import SynthesisError
from dreamer.memory import state as wm
from dreamer.service import schedule as scheduler
from dreamer.support.times import iso


def _notes(ws, now, count=6):
    for i in range(count):
        ws.note(f"Project Falcon step {i}: wired module {i} into the build", at=now)


class Empty:
    """A synthesizer whose every draft is empty (the guards reject it)."""

    name, model = "empty", None

    def synthesize(self, inputs, *, critique=None, previous=None):
        return Draft(wm.WorkingMemory(bodies={key: "" for key in wm.section_keys()}), raw="")


class Broken:
    name, model = "broken", None

    def synthesize(self, inputs, *, critique=None, previous=None):
        raise SynthesisError("the fake model is down; try again later", raw="")


def _runs(ws):
    return ws.store.db.execute(
        "SELECT job, started_at, outcome, detail FROM runs ORDER BY id"
    ).fetchall()


# --- due-logic -----------------------------------------------------------------------------------


def test_a_fresh_workspace_has_everything_due(ws, now):
    assert scheduler.due_jobs(ws, now) == ["consolidate", "dream"]
    assert scheduler.next_due(ws, "dream", now) == now


def test_due_logic_follows_the_journal(ws, now):
    ws.init()
    runs = scheduler.run_due(ws, now)
    assert [(r.job, r.outcome) for r in runs] == [("consolidate", "done"), ("dream", "skipped")]
    assert scheduler.due_jobs(ws, now + timedelta(minutes=29)) == []
    assert scheduler.due_jobs(ws, now + timedelta(minutes=30)) == ["consolidate"]
    assert scheduler.next_due(ws, "dream", now) == now + timedelta(hours=2)
    assert scheduler.due_jobs(ws, now + timedelta(hours=2)) == ["consolidate", "dream"]
    # overdue: due now, not in the past
    late = now + timedelta(days=3)
    assert scheduler.next_due(ws, "consolidate", late) == late


def test_fractional_intervals(tmp_path, now):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "dreamer.toml").write_text(
        "[memory.consolidation]\nintervalMinutes = 0.05\n[memory.dream]\nintervalMinutes = 0.1\n"
    )
    with Workspace.open(tmp_path / "ws") as ws:
        scheduler.run_due(ws, now)
        assert scheduler.due_jobs(ws, now + timedelta(seconds=2)) == []
        assert scheduler.due_jobs(ws, now + timedelta(seconds=3)) == ["consolidate"]
        assert scheduler.due_jobs(ws, now + timedelta(seconds=6)) == ["consolidate", "dream"]


def test_a_dream_by_hand_counts_for_the_schedule(ws, now):
    from dreamer.dream import cycle as dream

    _notes(ws, now)
    dream.run(ws, now=now)
    assert scheduler.due_jobs(ws, now + timedelta(minutes=1)) == ["consolidate"]
    assert scheduler.last_run(ws, "dream")[1] == "committed"


def test_dream_disabled_means_no_dream_job_and_no_dream(tmp_path, now):
    with Workspace.open(tmp_path / "ws", overrides={"dream_enabled": False}) as ws:
        _notes(ws, now)
        assert scheduler.due_jobs(ws, now) == ["consolidate"]
        assert scheduler.next_due(ws, "dream", now) is None
        scheduler.run_due(ws, now + timedelta(days=1))
        assert ws.store.dream_entries() == []
        assert not ws.memory_md.exists()
        assert [state.enabled for state in scheduler.job_states(ws, now)] == [True, False]


# --- outcomes ------------------------------------------------------------------------------------


def test_every_outcome_is_recorded(ws, now):
    record = scheduler.run_job(ws, "dream", now)
    assert record.outcome == "skipped" and "only 0 new notes" in record.detail
    _notes(ws, now)
    record = scheduler.run_job(ws, "dream", now, synthesizer=Broken())
    assert (record.outcome, record.ok) == ("failed", False)
    assert "SynthesisError: the fake model is down" in record.detail
    record = scheduler.run_job(ws, "dream", now, synthesizer=Empty())
    assert record.outcome == "rejected" and record.detail
    record = scheduler.run_job(ws, "dream", now)
    assert record.outcome == "committed" and record.detail.startswith("dream #")
    assert [row[2] for row in _runs(ws)] == ["skipped", "failed", "rejected", "committed"]
    assert [e["outcome"] for e in reversed(ws.store.dream_entries())] == [
        "skipped",
        "failed",
        "rejected",
        "committed",
    ]


def test_a_held_lock_is_dream_already_running_not_a_failure(ws, now):
    _notes(ws, now)
    with ws.lock():
        record = scheduler.run_job(ws, "dream", now)
    assert record.outcome == "skipped" and "dream already running" in record.detail
    assert record.ok


def test_tick_migrates_a_hand_written_memory_first(ws, now):
    ws.memory_md.write_text("# About Ada\n\nAda is a marine biologist in Lisbon.\n")
    scheduler.run_due(ws, now)
    assert ws.seed_backup.exists()
    assert ws.store.db.execute("SELECT count(*) FROM crystals WHERE source = 'seed'").fetchone()[0]


def test_status_reports_jobs_pending_crystals_and_hormones(ws, now):
    _notes(ws, now, count=3)
    info = scheduler.status(ws, now)
    assert info["jobs"]["consolidate"]["last_at"] is None
    assert info["jobs"]["dream"]["next_at"] == "2026-03-12T14:30:00Z"
    assert info["scratch_notes"] == 3 and info["pending_for_dream"] == 3
    assert info["crystals"]["generated"] == 3 and info["last_dream"] is None
    scheduler.run_due(ws, now)
    info = scheduler.status(ws, now + timedelta(minutes=1))
    assert info["jobs"]["consolidate"]["last_outcome"] == "done"
    assert info["jobs"]["consolidate"]["next_at"] == "2026-03-12T15:00:00Z"
    assert info["last_dream"]["outcome"] == "skipped"
    assert set(info["hormones"]) == {"dopamine", "cortisol", "oxytocin"}


# --- the APScheduler wiring ----------------------------------------------------------------------


class Recording(BaseExecutor):
    """An executor that records what it is given and never finishes it (a job that hangs)."""

    def __init__(self):
        super().__init__()
        self.submitted: list[tuple[str, list]] = []

    def _do_submit_job(self, job, run_times):
        self.submitted.append((job.id, list(run_times)))


def _workspaces(tmp_path, now, names=("a", "b"), **settings):
    roots = []
    for name in names:
        with Workspace.open(tmp_path / name, overrides=settings or None) as ws:
            ws.init()
            roots.append(ws.root)
    return roots


def test_serve_builds_two_jobs_per_workspace(tmp_path, now):
    roots = _workspaces(tmp_path, now)
    service = scheduler.Service(roots, environ={"DREAM_DREAM_INTERVAL_MINUTES": "0.5"})
    jobs = {job.id: job for job in service.build(now).get_jobs()}
    assert set(jobs) == {f"{job}:{root}" for root in roots for job in ("consolidate", "dream")}
    for job_id, job in jobs.items():
        seconds = 1800 if job_id.startswith("consolidate") else 30
        assert job.trigger.interval == timedelta(seconds=seconds)
        assert (job.max_instances, job.coalesce, job.misfire_grace_time) == (1, True, None)
        assert job.next_run_time == now


def test_serve_without_dreams_has_no_dream_job(tmp_path, now):
    roots = _workspaces(tmp_path, now, names=("a",))
    service = scheduler.Service(roots, environ={"DREAM_DREAM_ENABLED": "false"})
    assert [job.id.split(":")[0] for job in service.build(now).get_jobs()] == ["consolidate"]


def test_a_restart_continues_the_schedule_from_the_journal(tmp_path, now):
    [root] = _workspaces(tmp_path, now, names=("a",))
    with Workspace.open(root) as ws:
        scheduler.run_due(ws, now)
    later = now + timedelta(minutes=10)
    jobs = {job.id.split(":")[0]: job for job in scheduler.Service([root]).build(later).get_jobs()}
    assert jobs["consolidate"].next_run_time == now + timedelta(minutes=30)
    assert jobs["dream"].next_run_time == now + timedelta(hours=2)


def test_missed_runs_coalesce_and_a_hung_job_never_runs_twice(tmp_path, now):
    [root] = _workspaces(tmp_path, now, names=("a",))
    service = scheduler.Service([root], environ={"DREAM_DREAM_ENABLED": "false"})
    executor = Recording()
    apscheduler = service.build(now, executor=executor)
    events = []
    seen = threading.Event()

    def listen(event):
        events.append(event.code)
        seen.set()

    apscheduler.add_listener(listen, EVENT_JOB_SUBMITTED | EVENT_JOB_MAX_INSTANCES)
    with freeze_time(now + timedelta(minutes=95)) as frozen:  # 4 runs due: 0, 30, 60, 90
        apscheduler.start()
        try:
            assert seen.wait(5)
            [(job_id, run_times)] = executor.submitted
            assert job_id == f"consolidate:{root}"
            assert len(run_times) == 1  # coalesced into one run, the latest
            assert run_times[0] == now + timedelta(minutes=90)
            # 30 minutes on, that run still "hangs": the next one is refused, not stacked
            seen.clear()
            frozen.move_to(now + timedelta(minutes=125))
            apscheduler.wakeup()
            assert seen.wait(5)
            assert events == [EVENT_JOB_SUBMITTED, EVENT_JOB_MAX_INSTANCES]
            assert len(executor.submitted) == 1
        finally:
            apscheduler.shutdown(wait=False)


@pytest.mark.parametrize("job", ["consolidate", "dream"])
def test_a_fired_job_opens_its_own_connection_and_records_the_run(tmp_path, now, job):
    [root] = _workspaces(tmp_path, now, names=("a",))
    service = scheduler.Service([root], clock=lambda: now)
    service._fire(str(root), job)
    assert service.running() == {}
    with Workspace.open(root) as ws:
        assert [row[0] for row in _runs(ws)] == [job]


def test_status_last_dream_is_a_dream_not_a_forget(ws, now):
    ws.init()
    ws.store.record_dream({"started_at": iso(now), "outcome": "committed", "new_state": "# a"})
    ws.store.record_dream({"started_at": iso(now), "outcome": "forgotten", "new_state": "# b"})
    info = scheduler.status(ws, now)
    assert info["last_dream"]["outcome"] == "committed"
    assert info["llm_to_date"]["dreams"] == 1
