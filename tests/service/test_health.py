"""The health line: SessionStart, dream status and dream report say when capture or dreaming
stopped, with the cause; quiet when all is well."""

from __future__ import annotations

import io
import json
from datetime import timedelta

from fake_anthropic import FakeAnthropic
from freezegun import freeze_time
from test_dream_claude import GOOD

from dreamer.agents import hooks
from dreamer.cli import main
from dreamer.dream import health
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.service import schedule


def _session_start(ws, now) -> str:
    payload = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(ws.root)}
    out = io.StringIO()
    hooks.run(
        "session-start",
        io.StringIO(json.dumps(payload)),
        out,
        now,
        {"DREAM_WORKSPACE": str(ws.root)},
    )
    return json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]


def _notes(ws, at, count=6):
    for i in range(count):
        ws.note(f"Project Falcon step {i}: wired module {i} into the build at {at:%H:%M}", at=at)


def test_three_failed_scheduled_dreams_are_one_line_with_the_cause(ws, now, runner):
    fake = FakeAnthropic()
    _notes(ws, now - timedelta(hours=1))
    fake.tool_use(TOOL_NAME, GOOD)
    synth = ClaudeSynthesizer(ws.settings, client=fake.client())
    assert schedule.run_job(ws, "dream", now, synthesizer=synth).outcome == "committed"
    assert health.lines(ws, now) == []
    assert "dreamer health" not in _session_start(ws, now)  # quiet when all is well
    for i in range(1, 4):
        _notes(ws, now + timedelta(hours=2 * i - 1))
        fake.error(401, "invalid x-api-key")
        record = schedule.run_job(ws, "dream", now + timedelta(hours=2 * i), synthesizer=synth)
        assert record.outcome == "failed"
        if i < 3:
            assert health.lines(ws, now + timedelta(hours=2 * i)) == []
    later = now + timedelta(hours=7)
    context = _session_start(ws, later)
    warnings = [line for line in context.splitlines() if line.startswith("dreamer health:")]
    assert len(warnings) == 1
    assert (
        "Dreaming has stopped: the last 3 dreams failed since 2026-03-12T14:30:00Z" in warnings[0]
    )
    assert "the Anthropic API refused the key (401" in warnings[0]  # the cause, as said
    with freeze_time(later):
        status = runner.invoke(main, ["status", "-w", str(ws.root)], catch_exceptions=False)
        report = runner.invoke(
            main,
            ["report", "-w", str(ws.root), "-o", str(ws.root / "r.html")],
            catch_exceptions=False,
        )
    assert "Health: Dreaming has stopped: the last 3 dreams failed" in status.output
    assert "Health: Dreaming has stopped" in report.output
    assert "Dreaming has stopped" in (ws.root / "r.html").read_text(encoding="utf-8")


def test_capped_and_rejected_dreams_are_told_apart(ws, now):
    rows = [
        ("rejected", "the guards rejected the dream: the Bond drifted"),
        ("skipped", "spending cap: $0.0500 spent this day of the $0.05 cap"),
        ("failed", "the fake model is down"),
    ]
    ws.store.journal.record_dream({"started_at": "2026-03-12T08:00:00Z", "outcome": "committed"})
    for i, (outcome, reason) in enumerate(rows):
        at = f"2026-03-12T1{i}:00:00Z"
        ws.store.journal.record_dream({"started_at": at, "outcome": outcome, "reason": reason})
    [line] = health.dream_lines(ws, now)
    assert "no dream committed in 3 tries (" in line
    assert "1 capped" in line and "1 rejected" in line and "1 failed" in line
    assert line.endswith("the last cause: the fake model is down")
    # One capped skip is said at once (the cap holds the next dream too).
    ws.store.journal.record_dream({"started_at": "2026-03-12T13:00:00Z", "outcome": "committed"})
    ws.store.journal.record_dream(
        {"started_at": "2026-03-12T13:30:00Z", "outcome": "skipped", "reason": rows[1][1]}
    )
    assert health.dream_lines(ws, now) == [f"The last dream was skipped: {rows[1][1]}"]
    # Skips for too few notes are the schedule working, not dreaming failing.
    ws.store.journal.record_dream({"started_at": "2026-03-12T14:00:00Z", "outcome": "committed"})
    for i in range(5):
        ws.store.journal.record_dream(
            {"started_at": f"2026-03-12T14:1{i}:00Z", "outcome": "skipped", "reason": "only 1 new"}
        )
    assert health.dream_lines(ws, now) == []


def test_capture_that_went_quiet_while_sessions_ran_is_said(ws, now):
    ws.note("Ada prefers short answers", at=now - timedelta(days=5))
    for day in (4, 3, 1):
        health.session_started(ws, now - timedelta(days=day))
    [line] = health.capture_lines(ws, now)
    assert line.startswith("Capture has stopped: no note for 5 days")
    assert "3 sessions ran" in line
    ws.note("Ada asked about the billing service", at=now)
    assert health.capture_lines(ws, now) == []


def test_a_failed_capture_is_said_until_one_succeeds(ws, now, tmp_path):
    ws.init()
    broken = tmp_path / "session.jsonl"
    broken.write_bytes(b"\xff\xfe not json at all\n")
    payload = {"hook_event_name": "PreCompact", "cwd": str(ws.root), "transcript_path": str(broken)}
    hooks.run(
        "pre-compact",
        io.StringIO(json.dumps(payload)),
        io.StringIO(),
        now,
        {"DREAM_WORKSPACE": str(ws.root)},
    )
    [line] = health.capture_lines(ws, now)
    assert line.startswith("The last capture failed at 2026-03-12T14:30:00Z")
    health.capture_result(ws, now + timedelta(hours=1), None)
    assert health.capture_lines(ws, now + timedelta(hours=1)) == []
