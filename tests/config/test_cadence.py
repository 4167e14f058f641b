"""Cron schedules: `memory.dream.schedule = "0 3 * * *"` for dream serve, tick and worker alike."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from freezegun import freeze_time

from dreamer import Workspace
from dreamer.cli import main
from dreamer.config import load_settings
from dreamer.config.cadence import crontab_weekdays, parse
from dreamer.errors import InvalidSetting
from dreamer.service import schedule as scheduler
from dreamer.service.serve import Service
from dreamer.support.times import iso

NIGHT = datetime(2026, 3, 12, 1, 0, tzinfo=UTC)  # a Thursday


def _workspace(tmp_path, schedule="0 3 * * *", notes=6, at=NIGHT):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        (root / "dreamer.toml").write_text(
            f'[memory.dream]\nschedule = "{schedule}"\nsynthesizer = "offline"\n'
            "minChunksForDream = 1\n",
            encoding="utf-8",
        )
    with Workspace.open(root) as ws:
        ws.init()
        for i in range(notes):
            ws.note(f"Project Falcon step {i}: wired module {i} into the build", at=at)
    return root


def _dream_runs(root):
    with Workspace.open(root) as ws:
        rows = ws.store.db.execute(
            "SELECT started_at, outcome FROM runs WHERE job = 'dream' ORDER BY id"
        ).fetchall()
    return [(row[0], row[1]) for row in rows]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("0 25 * * *", "hour"),
        ("61 3 * * *", "minute"),
        ("0 3 32 * *", "day"),
        ("0 3 * 13 *", "month"),
        ("0 3 * * 8", "weekday"),
        ("*/0 3 * * *", "minute"),
    ],
)
def test_a_bad_field_is_named_in_one_error(text, field):
    with pytest.raises(InvalidSetting) as caught:
        parse(text, "memory.dream.schedule")
    message = str(caught.value)
    assert message.startswith("memory.dream.schedule: ")
    assert f"the {field} field" in message and "\n" not in message


def test_wrong_field_counts_and_zones_are_errors_that_say_how():
    with pytest.raises(InvalidSetting, match="has 4 fields, not 5"):
        parse("0 3 * *", "memory.dream.schedule")
    with pytest.raises(InvalidSetting, match="time zone 'Europe/Berln'"):
        parse("0 3 * * * Europe/Berln", "memory.dream.schedule")
    with pytest.raises(InvalidSetting, match="never comes due"):
        parse("0 3 30 2 *", "memory.dream.schedule")


def test_a_bad_schedule_in_dreamer_toml_is_one_error_line(tmp_path, runner):
    root = tmp_path / "ws"
    Workspace.open(root).close()
    (root / "dreamer.toml").write_text('[memory.dream]\nschedule = "0 3 * * mon-fry"\n')
    result = runner.invoke(main, ["status", "-w", str(root)])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    named = f"Error: {root / 'dreamer.toml'}: memory.dream.schedule"  # the file, by its path
    assert len(lines) == 1 and lines[0].startswith(named)
    assert "weekday field 'mon-fry'" in lines[0]


def test_crontab_weekdays_count_sunday_as_zero_and_seven():
    assert crontab_weekdays("1-5") == "mon,tue,wed,thu,fri"
    assert crontab_weekdays("0") == crontab_weekdays("7") == "sun"
    assert crontab_weekdays("*/3") == "sun,wed,sat"
    assert crontab_weekdays("mon-fri") == "mon-fri"
    weekdays = parse("0 */2 * * 1-5", "s")
    saturday = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)
    assert weekdays.first_after(saturday) == datetime(2026, 3, 16, 0, 0, tzinfo=UTC)  # Monday
    sundays = parse("0 9 * * 0", "s")
    assert sundays.first_after(saturday) == datetime(2026, 3, 15, 9, 0, tzinfo=UTC)


def test_a_time_zone_moves_the_hour_and_follows_summer_time():
    berlin = parse("0 3 * * * Europe/Berlin", "s")
    assert berlin.first_after(NIGHT) == datetime(2026, 3, 12, 2, 0, tzinfo=UTC)  # CET
    after_switch = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
    assert berlin.first_after(after_switch) == datetime(2026, 4, 2, 1, 0, tzinfo=UTC)  # CEST


def test_an_interval_schedule_replaces_the_minutes():
    settings = load_settings(None, environ={"DREAM_DREAM_SCHEDULE": "every 90m"})
    assert settings.cadence("dream").every == timedelta(minutes=90)
    assert load_settings(None, environ={}).cadence("dream").every == timedelta(hours=2)


@pytest.mark.slow
def test_tick_dreams_at_three_only(tmp_path, runner):
    root = _workspace(tmp_path)
    for moment in ("2026-03-12T01:30:00Z", "2026-03-12T02:59:00Z"):
        with freeze_time(moment):
            assert runner.invoke(main, ["tick", "-w", str(root)]).exit_code == 0
    assert _dream_runs(root) == []  # a new workspace waits for 03:00, never dreams at once
    with freeze_time("2026-03-12T03:00:00Z"):
        result = runner.invoke(main, ["tick", "-w", str(root)], catch_exceptions=False)
    assert "dream: committed" in result.output
    for moment in ("2026-03-12T03:30:00Z", "2026-03-12T14:00:00Z", "2026-03-13T02:59:00Z"):
        with freeze_time(moment):
            runner.invoke(main, ["tick", "-w", str(root)], catch_exceptions=False)
    assert [at for at, _ in _dream_runs(root)] == ["2026-03-12T03:00:00Z"]
    with freeze_time("2026-03-13T03:00:05Z"):
        runner.invoke(main, ["tick", "-w", str(root)], catch_exceptions=False)
    assert [at for at, _ in _dream_runs(root)] == ["2026-03-12T03:00:00Z", "2026-03-13T03:00:05Z"]


def test_status_lists_the_next_three_times(tmp_path, runner):
    root = _workspace(tmp_path)
    with freeze_time("2026-03-12T02:00:00Z"):
        text = runner.invoke(main, ["status", "-w", str(root)], catch_exceptions=False).output
        data = json.loads(runner.invoke(main, ["status", "--json", "-w", str(root)]).output)
    dream = data["jobs"]["dream"]
    expected = ["2026-03-12T03:00:00Z", "2026-03-13T03:00:00Z", "2026-03-14T03:00:00Z"]
    assert dream["next_runs"] == expected
    assert "cron '0 3 * * *' (UTC)" in text and ", ".join(expected) in text
    with freeze_time("2026-03-12T14:00:00Z"):  # 03:00 passed while nothing ran: due now, once
        data = json.loads(runner.invoke(main, ["status", "--json", "-w", str(root)]).output)
    assert data["jobs"]["dream"]["next_runs"][:2] == ["2026-03-12T14:00:00Z", expected[1]]


def test_serve_fires_the_cron_trigger_and_dreams_at_three_only(tmp_path):
    root = _workspace(tmp_path)
    clock = {"now": datetime(2026, 3, 12, 2, 0, tzinfo=UTC)}
    service = Service([root], clock=lambda: clock["now"])
    jobs = {job.id.split(":")[0]: job for job in service.build(clock["now"]).get_jobs()}
    three = datetime(2026, 3, 12, 3, 0, tzinfo=UTC)
    assert jobs["dream"].next_run_time == three
    # The trigger itself walks the cron times: the fire after 03:00 is the next night's.
    assert jobs["dream"].trigger.get_next_fire_time(three, three + timedelta(seconds=1)) == (
        three + timedelta(days=1)
    )
    service._fire(str(root), "dream")  # fired early (a clock jump): not due, nothing runs
    assert _dream_runs(root) == []
    clock["now"] = three
    service._fire(str(root), "dream")
    assert _dream_runs(root) == [(iso(three), "committed")]
    clock["now"] = three + timedelta(minutes=20)
    service._fire(str(root), "dream")
    assert len(_dream_runs(root)) == 1


def test_the_worker_schedules_the_next_cron_time_not_due_plus_interval(tmp_path):
    root = _workspace(tmp_path)
    with Workspace.open(root) as ws:
        later = datetime(2026, 3, 12, 3, 0, 40, tzinfo=UTC)
        scheduler.run_job(ws, "dream", later)
        assert scheduler.next_due(ws, "dream", later) == datetime(2026, 3, 13, 3, 0, tzinfo=UTC)


def test_a_started_serve_submits_the_dream_at_three_and_not_before(tmp_path):
    from scheduler_recording import Recording, _wait

    root = _workspace(tmp_path)
    executor = Recording()
    service = Service([root], environ={"DREAM_CONSOLIDATION_SCHEDULE": "0 4 * * *"})
    apscheduler = service.build(datetime(2026, 3, 12, 2, 0, tzinfo=UTC), executor=executor)
    with freeze_time("2026-03-12T02:59:58Z") as frozen:
        apscheduler.start()
        try:
            apscheduler.wakeup()
            frozen.tick(timedelta(seconds=1))
            assert executor.submitted == []  # 02:59:59: nothing yet
            frozen.move_to("2026-03-12T03:00:00Z")
            apscheduler.wakeup()
            _wait(lambda: executor.submitted)
            [(job_id, times)] = executor.submitted
            assert job_id == f"dream:{root}"
            assert times == [datetime(2026, 3, 12, 3, 0, tzinfo=UTC)]
        finally:
            apscheduler.shutdown(wait=False)


def test_the_consolidation_schedule_is_read_by_either_spelling(tmp_path):
    toml = tmp_path / "dreamer.toml"
    toml.write_text('[memory.consolidate]\nschedule = "15 * * * *"\n', encoding="utf-8")
    assert load_settings(toml, {}).consolidation_schedule == parse(
        "15 * * * *", "memory.consolidation.schedule"
    )
    toml.write_text(
        '[memory.consolidate]\nschedule = "15 * * * *"\n'
        '[memory.consolidation]\nschedule = "every 2h"\n',
        encoding="utf-8",
    )
    with pytest.raises(InvalidSetting, match="are one setting; keep one"):
        load_settings(toml, {})
