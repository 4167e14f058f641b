"""Settings given as command-line flags beat the environment, which beats dreamer.toml."""

from __future__ import annotations

from dreamer import Workspace
from dreamer.cli import main
from dreamer.service.serve import Service


def _workspace_with_a_note(tmp_path):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        ws.note("User prefers tea over coffee in the morning meetings", at="2026-03-12T09:00:00Z")
    (root / "dreamer.toml").write_text("[memory.dream]\nminChunksForDream = 50\n")
    return root


def test_env_beats_toml_and_flag_beats_env_for_dream_readiness(tmp_path, runner, monkeypatch):
    root = _workspace_with_a_note(tmp_path)
    result = runner.invoke(main, ["run", "-w", str(root)], catch_exceptions=False)
    assert result.exit_code == 0 and "needs 50" in result.output

    monkeypatch.setenv("DREAM_MIN_CHUNKS_FOR_DREAM", "7")
    result = runner.invoke(main, ["run", "-w", str(root)], catch_exceptions=False)
    assert result.exit_code == 0 and "needs 7" in result.output
    assert not (root / "MEMORY.md").exists()

    result = runner.invoke(
        main, ["run", "-w", str(root), "--min-chunks", "1"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "tea" in (root / "MEMORY.md").read_text()


def test_config_reports_where_each_value_came_from(tmp_path, runner, monkeypatch):
    root = _workspace_with_a_note(tmp_path)
    monkeypatch.setenv("DREAM_CONSOLIDATION_INTERVAL_MINUTES", "12")
    result = runner.invoke(main, ["config", "-w", str(root), "--json"], catch_exceptions=False)
    rows = {row["key"]: row for row in __import__("json").loads(result.output)}
    assert rows["memory.dream.minChunksForDream"]["source"] == "dreamer.toml"
    assert rows["memory.consolidation.intervalMinutes"] == {
        "key": "memory.consolidation.intervalMinutes",
        "env": "DREAM_CONSOLIDATION_INTERVAL_MINUTES",
        "value": 12.0,
        "source": "env",
    }
    assert rows["memory.dream.intervalMinutes"]["source"] == "default"


def test_serve_interval_flags_reach_every_workspace(tmp_path, monkeypatch):
    root = _workspace_with_a_note(tmp_path)
    monkeypatch.setenv("DREAM_DREAM_INTERVAL_MINUTES", "60")
    service = Service(
        [root], overrides={"dream_interval_minutes": 0.5, "consolidation_interval_minutes": None}
    )
    with service._open(root) as ws:
        assert ws.settings.dream_interval_minutes == 0.5
        assert ws.settings.sources["dream_interval_minutes"] == "flag"
        assert ws.settings.consolidation_interval_minutes == 30.0


def test_a_bad_flag_value_is_a_usage_error(tmp_path, runner):
    root = _workspace_with_a_note(tmp_path)
    result = runner.invoke(main, ["tick", "-w", str(root), "--dream-interval", "-1"])
    assert result.exit_code == 2
    assert "must be a number above 0" in result.output
