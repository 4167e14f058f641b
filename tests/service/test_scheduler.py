"""The scheduler: due-logic from the journal, run outcomes, and the APScheduler wiring."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_SUBMITTED
from freezegun import freeze_time
from scheduler_recording import Recording, _wait

from dreamer import Workspace
from dreamer.dream.synth import Draft
from dreamer.errors import SynthesisError
from dreamer.memory import state as wm
from dreamer.service import schedule as scheduler
from dreamer.service.serve import Service, phase, spread
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


@pytest.mark.slow
def test_dream_disabled_means_no_dream_job_and_no_dream(tmp_path, now):
    with Workspace.open(tmp_path / "ws", overrides={"dream_enabled": False}) as ws:
        _notes(ws, now)
        assert scheduler.due_jobs(ws, now) == ["consolidate"]
        assert scheduler.next_due(ws, "dream", now) is None
        scheduler.run_due(ws, now + timedelta(days=1))
        assert ws.store.journal.dream_entries() == []
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
    assert [e["outcome"] for e in reversed(ws.store.journal.dream_entries())] == [
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


def _workspaces(tmp_path, now, names=("a", "b"), **settings):
    roots = []
    for name in names:
        with Workspace.open(tmp_path / name, overrides=settings or None) as ws:
            ws.init()
            roots.append(ws.root)
    return roots


def test_serve_builds_two_jobs_per_workspace(tmp_path, now):
    roots = _workspaces(tmp_path, now)
    service = Service(roots, environ={"DREAM_DREAM_INTERVAL_MINUTES": "0.5"})
    jobs = {job.id: job for job in service.build(now).get_jobs()}
    assert set(jobs) == {f"{job}:{root}" for root in roots for job in ("consolidate", "dream")}
    for job_id, job in jobs.items():
        seconds = 1800 if job_id.startswith("consolidate") else 30
        assert job.trigger.interval == timedelta(seconds=seconds)
        assert (job.max_instances, job.coalesce, job.misfire_grace_time) == (1, True, None)
        # due at once, so started at its own place within the interval: no thundering herd
        root, kind = Path(job_id.split(":", 1)[1]), job_id.split(":")[0]
        window = spread(timedelta(seconds=seconds), 2)  # 10 s for two workspaces
        offset = phase(root, kind, window)
        assert job.next_run_time == now + offset
        assert timedelta(0) <= offset < min(window, timedelta(seconds=seconds))


def test_serve_without_dreams_has_no_dream_job(tmp_path, now):
    roots = _workspaces(tmp_path, now, names=("a",))
    service = Service(roots, environ={"DREAM_DREAM_ENABLED": "false"})
    assert [job.id.split(":")[0] for job in service.build(now).get_jobs()] == ["consolidate"]


def test_a_restart_continues_the_schedule_from_the_journal(tmp_path, now):
    [root] = _workspaces(tmp_path, now, names=("a",))
    with Workspace.open(root) as ws:
        scheduler.run_due(ws, now)
    later = now + timedelta(minutes=10)
    jobs = {job.id.split(":")[0]: job for job in Service([root]).build(later).get_jobs()}
    assert jobs["consolidate"].next_run_time == now + timedelta(minutes=30)
    assert jobs["dream"].next_run_time == now + timedelta(hours=2)


def test_missed_runs_coalesce_and_a_hung_job_never_runs_twice(tmp_path, now):
    [root] = _workspaces(tmp_path, now, names=("a",))
    service = Service([root], environ={"DREAM_DREAM_ENABLED": "false"})
    executor = Recording()
    apscheduler = service.build(now, executor=executor)
    events = []
    seen = threading.Event()

    def listen(event):
        events.append(event.code)
        seen.set()

    apscheduler.add_listener(listen, EVENT_JOB_SUBMITTED | EVENT_JOB_MAX_INSTANCES)
    [job] = apscheduler.get_jobs()
    start = job.next_run_time  # its phase within the first 30 minutes
    with freeze_time(start + timedelta(minutes=95)) as frozen:  # 4 runs due: +0, 30, 60, 90
        apscheduler.start()
        try:
            assert seen.wait(5)
            [(job_id, run_times)] = executor.submitted
            assert job_id == f"consolidate:{root}"
            assert len(run_times) == 1  # coalesced into one run, the latest
            assert run_times[0] == start + timedelta(minutes=90)
            # 30 minutes on, that run still "hangs": the next one is refused, not stacked
            seen.clear()
            frozen.move_to(start + timedelta(minutes=125))
            apscheduler.wakeup()
            assert seen.wait(5)
            assert events == [EVENT_JOB_SUBMITTED, EVENT_JOB_MAX_INSTANCES]
            assert len(executor.submitted) == 1
        finally:
            apscheduler.shutdown(wait=False)


@pytest.mark.parametrize("job", ["consolidate", "dream"])
def test_a_fired_job_opens_its_own_connection_and_records_the_run(tmp_path, now, job):
    [root] = _workspaces(tmp_path, now, names=("a",))
    service = Service([root], clock=lambda: now)
    service._fire(str(root), job)
    assert service.running() == {}
    with Workspace.open(root) as ws:
        assert [row[0] for row in _runs(ws)] == [job]


def test_status_last_dream_is_a_dream_not_a_forget(ws, now):
    ws.init()
    ws.store.journal.record_dream(
        {"started_at": iso(now), "outcome": "committed", "new_state": "# a"}
    )
    ws.store.journal.record_dream(
        {"started_at": iso(now), "outcome": "forgotten", "new_state": "# b"}
    )
    info = scheduler.status(ws, now)
    assert info["last_dream"]["outcome"] == "committed"
    assert info["llm_to_date"]["dreams"] == 1


# --- many workspaces -------------------------------------------------------------------------


@pytest.mark.slow
def test_many_workspaces_start_spread_over_the_interval_and_keep_their_place(tmp_path, now):
    roots = _workspaces(tmp_path, now, names=[f"w{i:03d}" for i in range(60)])
    service = Service(roots, environ={"DREAM_DREAM_ENABLED": "false"})
    firsts = [job.next_run_time for job in service.build(now).get_jobs()]
    # 60 workspaces: first runs over 59 x 10 s, about one every 10 s, none in lockstep
    per_minute = Counter(int((first - now).total_seconds() // 60) for first in firsts)
    assert all(now <= first < now + timedelta(seconds=590) for first in firsts)
    assert len(per_minute) >= 8 and max(per_minute.values()) <= 16
    assert len(set(firsts)) == len(firsts)
    again = Service(roots, environ={"DREAM_DREAM_ENABLED": "false"}).build(now).get_jobs()
    assert [job.next_run_time for job in again] == firsts  # stable across restarts


def test_serve_counts_a_dream_by_hand_and_moves_its_own(tmp_path, now):
    [root] = _workspaces(tmp_path, now, names=("a",))
    clock = [now]
    service = Service(
        [root], clock=lambda: clock[0], environ={"DREAM_DREAM_INTERVAL_MINUTES": "0.5"}
    )
    service.build(now)
    with Workspace.open(root) as ws:
        _notes(ws, now)
        scheduler.run_job(ws, "dream", now + timedelta(seconds=15))  # `dream run` by hand
    clock[0] = now + timedelta(seconds=30)
    service._fire(str(root), "dream")  # serve's own beat, 15 s after the dream by hand
    with Workspace.open(root) as ws:
        assert [row[0] for row in _runs(ws)] == ["dream"]  # no second dream
    [job] = [job for job in service.scheduler.get_jobs() if job.id.startswith("dream")]
    assert job.next_run_time == now + timedelta(seconds=45)  # one interval after the hand's


def test_two_serves_share_one_schedule(tmp_path, now):
    [root] = _workspaces(tmp_path, now, names=("a",))
    env = {"DREAM_DREAM_ENABLED": "false"}
    first = Service([root], clock=lambda: now, environ=env)
    second = Service([root], clock=lambda: now, environ=env)
    first.build(now), second.build(now)
    first._fire(str(root), "consolidate")
    second._fire(str(root), "consolidate")
    with Workspace.open(root) as ws:
        assert [(row[0], row[2]) for row in _runs(ws)] == [("consolidate", "done")]


def test_a_job_another_process_is_running_is_moved_an_interval_on_not_refired(tmp_path, now):
    from dreamer.support.locks import hold

    [root] = _workspaces(tmp_path, now, names=("a",))
    service = Service([root], clock=lambda: now, environ={"DREAM_DREAM_ENABLED": "false"})
    service.build(now)
    with hold(root / "memory" / "consolidate.due.lock", wait=False):  # a tick, mid-run
        service._fire(str(root), "consolidate")
    [job] = service.scheduler.get_jobs()
    assert job.next_run_time == now + timedelta(minutes=30)  # no hot loop of refires
    with Workspace.open(root) as ws:
        assert _runs(ws) == []  # the other process records its own run


def test_a_job_that_overruns_is_recorded_not_silently_skipped(tmp_path, now):
    [root] = _workspaces(tmp_path, now, names=("a",))
    service = Service([root], environ={"DREAM_DREAM_ENABLED": "false"})
    executor = Recording()  # its runs never finish
    apscheduler = service.build(now, executor=executor)
    [job] = apscheduler.get_jobs()
    refused = threading.Event()
    apscheduler.add_listener(lambda event: refused.set(), EVENT_JOB_MAX_INSTANCES)
    with freeze_time(job.next_run_time) as frozen:
        apscheduler.start()
        try:
            _wait(lambda: executor.submitted)
            frozen.move_to(job.next_run_time + timedelta(minutes=30))
            apscheduler.wakeup()
            assert refused.wait(5)
            _wait(lambda: _overruns(root))
        finally:
            apscheduler.shutdown(wait=False)
    [(outcome, detail)] = _overruns(root)
    assert "not started twice" in detail and "--workers" in detail
    with Workspace.open(root) as ws:
        info = scheduler.status(ws, now)
        assert info["jobs"]["consolidate"]["last_outcome"] == "overrun"
        assert info["runs_last_day"]["consolidate"]["overrun"] == 1


def test_a_workspace_that_cannot_open_is_a_recorded_failure_not_a_silent_one(tmp_path, now):
    [root] = _workspaces(tmp_path, now, names=("a",))
    (root / "dreamer.toml").write_text("[memory.dream]\nintervalMinutes = 'soon'\n")
    service = Service([root], clock=lambda: now, environ={})
    service._fire(str(root), "consolidate")  # its settings no longer load: logged, not lost
    (root / "dreamer.toml").unlink()
    with Workspace.open(root) as ws:
        [(job, _, outcome, detail)] = _runs(ws)
    assert (job, outcome) == ("consolidate", "failed") and "intervalMinutes" in detail


def _overruns(root):
    with Workspace.open(root) as ws:
        return [(row[2], row[3]) for row in _runs(ws) if row[2] == "overrun"]
