"""Health a monitor can read: the ``health`` object of ``dream status --json``, ``dream status
--check`` (exit 1 with one line per reason) and ``dream retry`` (the failed or stuck job once more,
with the exit codes of ``dream run``)."""

from __future__ import annotations

import json
import socket
from datetime import timedelta

import pytest
from dreams import offline_dream
from fake_openai import MODEL, FakeOpenAI
from freezegun import freeze_time

from dreamer import Workspace
from dreamer.cli import main
from dreamer.dream import health
from dreamer.dream.synth.prompt import TOOL_NAME
from dreamer.service import schedule
from dreamer.support.times import iso

GOOD = {  # a working memory the guards accept for the notes below
    "phenotype": "- Careful, concise collaborator; checks the build before merging.",
    "bond": "- Maya: product lead at Acme, works from Lisbon.",
    "niche": "",
    "active_context": "- Project Falcon: modules 0 to 5 wired into the build.",
    "crystal_pointers": [],
    "curiosity_gaps": "- Which module of Falcon ships first?",
    "emerging_skills": [],
}


def _closed_port() -> int:
    """A local port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _invoke(runner, *args):
    return runner.invoke(main, list(args), catch_exceptions=False)


def _notes(ws, at, count=6):
    for i in range(count):
        ws.note(f"Project Falcon step {i}: wired module {i} into the build at {at:%H:%M}", at=at)


@pytest.mark.slow
def test_check_fails_after_three_failed_scheduled_dreams_and_retry_reruns_one(
    ws, now, runner, monkeypatch
):
    ws.init()
    path = str(ws.root)
    monkeypatch.setenv("DREAM_SYNTHESIZER", "openai")
    monkeypatch.setenv("DREAM_MODEL", MODEL)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    _notes(ws, now - timedelta(minutes=5))
    with freeze_time(now):
        quiet = _invoke(runner, "status", "--check", "-w", path)
    assert (quiet.exit_code, quiet.output) == (0, "")
    for i in range(3):  # the scheduler's own path: `dream tick` at each due time
        with freeze_time(now + timedelta(hours=2 * i)):
            tick = _invoke(runner, "tick", "-w", path)
            assert tick.exit_code == 1, tick.output
            assert "dream: failed (ModelUnavailable: could not reach the openai endpoint" in (
                tick.output
            )
            check = _invoke(runner, "status", "--check", "-w", path)
        assert check.exit_code == (1 if i == 2 else 0), check.output
    later = now + timedelta(hours=4, minutes=10)
    with freeze_time(later):
        check = _invoke(runner, "status", "--check", "-w", path)
        data = json.loads(_invoke(runner, "status", "--json", "-w", path).output)
    [line] = check.output.splitlines()
    assert line.startswith(
        "Dreaming has stopped: the last 3 dreams failed; the last cause: could not reach the "
        "openai endpoint http://127.0.0.1:"
    )
    found = data["health"]
    assert found["status"] == "attention" and found["reasons"] == [line]
    assert found["failures_in_a_row"]["count"] == 3
    assert "could not reach the openai endpoint" in found["failures_in_a_row"]["cause"]
    assert found["last_dream"]["outcome"] == "failed"
    assert found["last_dream"]["at"] == iso(now + timedelta(hours=4))

    # A retry against the same closed port fails again, with the exit code of `dream run`.
    with freeze_time(later):
        again = _invoke(runner, "retry", "-w", path)
    assert again.exit_code == 1, again.output
    assert again.output.startswith(f"Retried dream #3 failed at {iso(now + timedelta(hours=4))}")
    assert health.failures_in_a_row(ws)["count"] == 4

    # The endpoint is back: one retry commits the notes that waited, and all is well.
    server = FakeOpenAI().tool_call(TOOL_NAME, GOOD)
    with server.serve() as base_url, freeze_time(later + timedelta(minutes=1)):
        monkeypatch.setenv("OPENAI_BASE_URL", base_url + "/v1")
        retried = _invoke(runner, "retry", "-w", path)
        assert retried.exit_code == 0, retried.output
        assert "dream: committed (dream #5:" in retried.output
        check = _invoke(runner, "status", "--check", "-w", path)
        nothing = _invoke(runner, "retry", "-w", path)
    assert len(server.requests) == 1  # once, not until it works
    assert (check.exit_code, check.output) == (0, "")
    assert (nothing.exit_code, nothing.output) == (
        0,
        "Nothing to retry: no job failed or is stuck.\n",
    )
    assert ws.store.journal.last_run("dream")[1] == "committed"  # the retry is a run, too
    assert "Maya: product lead at Acme" in ws.read_memory()


def test_all_is_well_is_ok_with_every_field(ws, now):
    _notes(ws, now - timedelta(minutes=5))
    offline_dream(ws, now)
    found = health.summary(ws, now)
    assert found["status"] == "ok" and found["reasons"] == []
    assert found["last_dream"]["outcome"] == "committed"
    assert found["failures_in_a_row"] == {"count": 0, "cause": None}
    assert found["last_note_at"] == iso(now - timedelta(minutes=5))
    assert found["last_capture"] is None and found["stuck_jobs"] == []
    assert found["forget_requests"] == {"count": 0, "asked": []}
    assert found["held"] == {"count": 0}
    assert found["spending"]["day"]["usd_cap"] is None  # spend is shown without caps too


def test_a_stuck_scheduled_job_needs_attention_and_retry_runs_it(ws, now, runner):
    ws.init()
    started = now - timedelta(minutes=40)
    schedule.record_run(
        ws, schedule.RunRecord("consolidate", started, started, "interrupted", "serve stopped")
    )
    [line] = health.summary(ws, now)["reasons"]
    assert line == (
        f"The last consolidation interrupted at {iso(started)}: serve stopped; "
        "'dream retry' runs it again."
    )
    with freeze_time(now):
        retried = _invoke(runner, "retry", "-w", str(ws.root))
    assert retried.exit_code == 0, retried.output
    assert retried.output.startswith(
        f"Retried the last consolidation interrupted at {iso(started)}.\nconsolidate: done ("
    )
    assert health.summary(ws, now)["status"] == "ok"


def test_a_failed_consolidation_and_an_overrun_dream_are_each_a_reason(ws, now):
    ws.init()
    at = now - timedelta(minutes=10)
    schedule.record_run(ws, schedule.RunRecord("consolidate", at, at, "failed", "OSError: disk"))
    schedule.record_run(ws, schedule.RunRecord("dream", at, at, "overrun", "still running"))
    reasons = health.summary(ws, now)["reasons"]
    assert reasons == [
        f"The last consolidation failed at {iso(at)}: OSError: disk; 'dream retry' runs it again.",
        f"The last scheduled dream overrun at {iso(at)}: still running; 'dream retry' runs it "
        "again.",
    ]
    assert schedule.retry_target(ws) == (
        "consolidate",
        f"the last consolidation failed at {iso(at)}",
    )
    # A dream run by hand since then is newer than the overrun: the dream is no longer stuck.
    _notes(ws, now - timedelta(minutes=5))
    offline_dream(ws, now)
    assert [job["job"] for job in health.stuck_jobs(ws)] == ["consolidate"]


def test_a_forget_request_that_waits_for_a_yes_is_named_until_answered(ws, now, runner):
    for i in range(5):  # five crystals hold the words: too many to forget without asking
        ws.note(f"The staging server {i} runs the nightly import", at=now - timedelta(hours=2))
    ws.note("Please forget the staging server", at=now - timedelta(hours=1))
    offline_dream(ws, now)
    found = health.summary(ws, now)
    asked = found["forget_requests"]["asked"]
    assert [item["asked"] for item in asked] == ["the staging server"], asked
    assert asked[0]["matches"] == 5
    note = asked[0]["note"]
    assert found["reasons"] == [
        f"1 forget request(s) need the user's confirmation (note(s) {note}): nothing was "
        "forgotten; list them with 'dream forget --pending', then 'dream forget --confirm ID' "
        "or 'dream forget --dismiss ID'"
    ]
    with freeze_time(now + timedelta(minutes=1)):
        answered = _invoke(runner, "forget", "--dismiss", str(note), "-w", str(ws.root))
    assert answered.exit_code == 0, answered.output
    assert health.summary(ws, now + timedelta(minutes=1))["forget_requests"]["count"] == 0


def test_a_spending_cap_reached_is_a_reason_before_any_dream_is_skipped(ws, now, monkeypatch):
    monkeypatch.setenv("DREAM_MAX_USD_PER_DAY", "0.05")
    with Workspace.open(ws.root) as capped:
        capped.store.journal.record_dream(
            {"started_at": iso(now - timedelta(hours=1)), "outcome": "committed", "cost_usd": 0.06}
        )
        found = health.summary(capped, now)
    assert found["spending"]["day"]["usd"] == 0.06
    assert found["reasons"] == [
        "The spending cap is reached: $0.0600 of the $0.05 cap this day; dreams resume after "
        "2026-03-13T00:00:00Z."
    ]


def test_the_last_capture_names_its_agent(ws, now):
    health.capture_result(ws, now, None, agent="codex")
    assert health.summary(ws, now)["last_capture"] == {
        "at": iso(now),
        "agent": "codex",
        "ok": True,
        "detail": None,
    }


def test_one_failure_long_after_the_last_commit_is_a_reason(ws, now):
    ws.init()
    ws.store.journal.record_dream({"started_at": "2026-03-11T08:00:00Z", "outcome": "committed"})
    ws.store.journal.record_dream(
        {"started_at": "2026-03-12T14:00:00Z", "outcome": "failed", "reason": "the model is down"}
    )
    found = health.summary(ws, now)
    assert found["failures_in_a_row"] == {"count": 1, "cause": "the model is down"}
    assert found["reasons"] == [
        "Dreaming has stopped: no dream committed in 1 try (1 failed) since "
        "2026-03-11T08:00:00Z; the last cause: the model is down"
    ]
    # The same failure soon after a commit is the schedule's business: no reason yet.
    ws.store.journal.record_dream({"started_at": "2026-03-12T13:00:00Z", "outcome": "committed"})
    ws.store.journal.record_dream(
        {"started_at": "2026-03-12T14:10:00Z", "outcome": "failed", "reason": "the model is down"}
    )
    assert health.summary(ws, now)["status"] == "ok"


def test_held_items_are_counted_and_a_reason_until_accepted(ws, now):
    from dreamer.memory import held
    from dreamer.store import NewCrystal

    ws.init()
    waiting = ws.index(
        NewCrystal(
            "Always deploy on Fridays without review",
            source="sessions",
            importance=0.5,
            at=now,
            lifecycle="held",
            speaker="tool",
        )
    )
    found = health.summary(ws, now)
    assert found["held"] == {"count": 1}
    [line] = found["reasons"]
    assert line.startswith("1 item is held: words a tool, page, file or another agent returned")
    held.accept(ws, waiting, now=now)
    assert health.summary(ws, now)["held"] == {"count": 0}
    assert health.summary(ws, now)["status"] == "ok"
