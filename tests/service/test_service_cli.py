"""The service commands through the CLI, with a frozen clock: tick, status, consolidate,
hormones, feel."""

from __future__ import annotations

import json

import pytest
from freezegun import freeze_time

from dreamer import Workspace
from dreamer.cli import main

T0 = "2026-03-12T14:30:00Z"


def _invoke(runner, *args):
    return runner.invoke(main, list(args), catch_exceptions=False)


def _workspace(tmp_path, runner, notes=6):
    path = str(tmp_path / "ws")
    with freeze_time(T0):
        assert _invoke(runner, "init", "-w", path).exit_code == 0
        for i in range(notes):
            assert (
                _invoke(
                    runner, "note", f"Falcon step {i}: module {i} wired in", "-w", path
                ).exit_code
                == 0
            )
    return path


@pytest.mark.slow
def test_tick_runs_what_is_due_and_then_nothing(tmp_path, runner):
    path = _workspace(tmp_path, runner)
    with freeze_time(T0):
        first = _invoke(runner, "tick", "-w", path)
        assert first.exit_code == 0, first.output
        assert "consolidate: done" in first.output and "dream: committed" in first.output
        again = _invoke(runner, "tick", "-w", path)
        assert again.output.strip() == (
            "Nothing due; next consolidate at 2026-03-12T15:00:00Z, dream at 2026-03-12T16:30:00Z."
        )
    with freeze_time("2026-03-12T15:00:00Z"):
        later = json.loads(_invoke(runner, "tick", "--json", "-w", path).output)
        assert [(run["job"], run["outcome"]) for run in later] == [("consolidate", "done")]
    with freeze_time("2026-03-12T16:30:00Z"):
        due = json.loads(_invoke(runner, "tick", "--json", "-w", path).output)
        assert [(run["job"], run["outcome"]) for run in due] == [
            ("consolidate", "done"),
            ("dream", "skipped"),
        ]
        assert "only 0 new notes" in due[1]["detail"]


@pytest.mark.slow
def test_tick_while_a_dream_runs_is_not_a_failure(tmp_path, runner):
    path = _workspace(tmp_path, runner)
    with freeze_time(T0), Workspace.open(path) as ws, ws.lock():
        result = _invoke(runner, "tick", "-w", path)
    assert result.exit_code == 0
    assert "dream: skipped (dream already running" in result.output


@pytest.mark.slow
def test_status_text_and_json_agree(tmp_path, runner):
    path = _workspace(tmp_path, runner)
    with freeze_time(T0):
        _invoke(runner, "tick", "-w", path)
    with freeze_time("2026-03-12T14:40:00Z"):
        data = json.loads(_invoke(runner, "status", "--json", "-w", path).output)
        text = _invoke(runner, "status", "-w", path).output
    assert data["jobs"]["consolidate"]["last_at"] == T0
    assert data["jobs"]["consolidate"]["next_at"] == "2026-03-12T15:00:00Z"
    assert data["jobs"]["dream"]["next_at"] == "2026-03-12T16:30:00Z"
    assert data["last_dream"]["outcome"] == "committed"
    assert data["crystals"]["consolidated"] == 6 and data["scratch_notes"] == 0
    assert "next 2026-03-12T16:30:00Z" in text
    assert "Last dream: #1 committed at 2026-03-12T14:30:00Z" in text
    assert "Crystals: 0 generated, 6 consolidated" in text
    assert data["runs_last_day"] == {"consolidate": {"done": 1}, "dream": {"committed": 1}}
    assert "consolidate  last 24 h: 1 done" in text


def test_status_of_a_workspace_without_dreams(tmp_path, runner):
    path = str(tmp_path / "ws")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "dreamer.toml").write_text("[memory.dream]\nenabled = false\n")
    _invoke(runner, "init", "-w", path)
    with freeze_time(T0):
        text = _invoke(runner, "status", "-w", path).output
    assert "dream        disabled" in text and "Last dream: none yet" in text


@pytest.mark.slow
def test_feel_and_hormones(tmp_path, runner):
    path = _workspace(tmp_path, runner, notes=0)
    with freeze_time(T0):
        result = _invoke(runner, "feel", "dopamine", "0.5", "--reason", "shipped it", "-w", path)
        assert result.exit_code == 0 and "dopamine 0.65" in result.output
        assert _invoke(runner, "feel", "cortisol", "-0.5", "-w", path).exit_code == 0
    with freeze_time("2026-03-12T15:00:00Z"):  # one dopamine half-life later
        data = json.loads(_invoke(runner, "hormones", "--json", "-w", path).output)
        text = _invoke(runner, "hormones", "-w", path).output
    # cortisol was pushed to 0 and climbs back toward its rest (0.02), half-way in 60 minutes
    assert data["levels"] == {"dopamine": 0.4, "cortisol": 0.005858, "oxytocin": 0.2}
    assert data["mood"] == "energized, calm"
    assert [(row["hormone"], row["source"]) for row in data["history"]] == [
        ("cortisol", "cli"),
        ("dopamine", "cli"),
    ]
    assert "dopamine  0.40" in text and "shipped it" in text


def test_feel_rejects_bad_input(tmp_path, runner):
    path = _workspace(tmp_path, runner, notes=0)
    bad = runner.invoke(main, ["feel", "serotonin", "0.1", "-w", path])
    assert bad.exit_code == 2 and "serotonin" in bad.output
    big = runner.invoke(main, ["feel", "dopamine", "3", "-w", path])
    assert big.exit_code == 2 and "Error: delta must be a number from -1 to 1" in big.output


@pytest.mark.slow
def test_consolidate_by_hand_is_a_recorded_run_and_writes_spike_notes(tmp_path, runner):
    path = _workspace(tmp_path, runner, notes=0)
    with freeze_time(T0):
        _invoke(runner, "feel", "cortisol", "0.9", "--reason", "prod is down", "-w", path)
        result = json.loads(_invoke(runner, "consolidate", "--json", "-w", path).output)
        assert result["outcome"] == "done" and "spikes: cortisol" in result["detail"]
        status = json.loads(_invoke(runner, "status", "--json", "-w", path).output)
    assert status["jobs"]["consolidate"]["last_outcome"] == "done"
    assert status["scratch_notes"] == 1
    scratch = (tmp_path / "ws" / "memory" / "scratch.md").read_text()
    assert (
        "(importance: 0.8) [AUTO] Hormonal event: cortisol spike (error/urgency detected)."
        " Peaked at 0.92 at 2026-03-12T14:30:00Z after: prod is down."
    ) in scratch


def test_commands_need_an_existing_workspace(tmp_path, runner):
    for command in ("tick", "status", "consolidate", "hormones"):
        result = runner.invoke(main, [command, "-w", str(tmp_path / "nope")])
        assert result.exit_code == 1 and "dream init" in result.output
