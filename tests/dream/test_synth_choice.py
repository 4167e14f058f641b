"""Issue 23, choosing: which synthesizer writes the next dream, why, and who may change it.

``auto`` never spends a subscription or an endpoint the user did not name; ``dream status`` and
``dream config`` say which backend will write the next dream and why; ``dream claude install``
offers the claude-code synthesizer as a visible line of its diff, which ``--no-synthesizer``
declines and ``dream claude uninstall`` takes back.
"""

from __future__ import annotations

import json

import pytest

from dreamer.cli import main
from dreamer.config import load_settings

LINE = 'synthesizer = "claude-code"'


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An isolated HOME and a project folder to run `dream claude` in."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    return home


def status_says(runner, ws) -> str:
    """The 'Next dream written by' line of `dream status`."""
    out = runner.invoke(main, ["status", "-w", str(ws.root)], catch_exceptions=False).output
    return next(line for line in out.splitlines() if line.startswith("Next dream written by:"))


@pytest.mark.parametrize(
    "env, toml, says",
    [
        ({}, "", "offline: auto, no ANTHROPIC_API_KEY"),
        (
            {"ANTHROPIC_API_KEY": "sk-ant-test"},
            "",
            "claude (claude-sonnet-5-5): auto, ANTHROPIC_API_KEY is set",
        ),
        (
            {},
            '[memory.dream]\nsynthesizer = "claude-code"\n',
            "claude-code (sonnet): set in dreamer.toml",
        ),
        (
            {"DREAM_SYNTHESIZER": "openai", "DREAM_MODEL": "qwen2.5:14b"},
            '[memory.dream]\nsynthesizer = "claude-code"\n',
            "openai (qwen2.5:14b): set by DREAM_SYNTHESIZER",
        ),
        ({}, '[memory.dream]\nsynthesizer = "offline"\n', "offline: set in dreamer.toml"),
    ],
    ids=["auto-offline", "auto-claude", "toml", "env-beats-toml", "offline"],
)
def test_status_and_config_name_the_next_dream_s_synthesizer_and_why(
    ws, runner, monkeypatch, env, toml, says
):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if toml:
        (ws.root / "dreamer.toml").write_text(toml, encoding="utf-8")
    assert status_says(runner, ws) == f"Next dream written by: {says}"
    config = runner.invoke(main, ["config", "-w", str(ws.root)], catch_exceptions=False).output
    assert f"Next dream written by: {says}" in config.splitlines()
    info = json.loads(runner.invoke(main, ["status", "--json", "-w", str(ws.root)]).output)
    assert info["synthesizer"]["says"] == says


def test_auto_never_spends_a_subscription_or_an_endpoint_it_was_not_named(tmp_path):
    environ = {
        "OPENAI_BASE_URL": "http://127.0.0.1:11434/v1",
        "OPENAI_API_KEY": "sk-local",
        "DREAM_MODEL": "qwen2.5:14b",
        "DREAM_CLAUDE_CLI": "/usr/bin/true",
        "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat-test",
    }
    assert load_settings(None, environ).synthesis() == ("offline", "auto, no ANTHROPIC_API_KEY")
    with_key = load_settings(None, {**environ, "ANTHROPIC_API_KEY": "sk-ant-test"})
    assert with_key.synthesis()[0] == "claude"


def test_install_offers_the_claude_code_synthesizer_as_a_line_of_its_diff(home, runner, ws):
    dry = runner.invoke(
        main, ["claude", "install", "--scope", "user", "-w", str(ws.root), "--dry-run"]
    )
    assert dry.exit_code == 0, dry.output
    assert f"+{LINE}" in dry.output.splitlines()
    assert not (ws.root / "dreamer.toml").exists()  # a dry run writes nothing
    done = runner.invoke(main, ["claude", "install", "--scope", "user", "-w", str(ws.root)])
    assert done.exit_code == 0, done.output
    assert (ws.root / "dreamer.toml").read_text() == f"[memory.dream]\n{LINE}\n"
    assert status_says(runner, ws).endswith("claude-code (sonnet): set in dreamer.toml")
    again = runner.invoke(main, ["claude", "install", "--scope", "user", "-w", str(ws.root)])
    assert "Already installed" in again.output
    gone = runner.invoke(main, ["claude", "uninstall", "--scope", "user", "-w", str(ws.root)])
    assert gone.exit_code == 0, gone.output
    assert not (ws.root / "dreamer.toml").exists()


def test_no_synthesizer_declines_the_offer(home, runner, ws):
    done = runner.invoke(
        main, ["claude", "install", "--scope", "user", "--no-synthesizer", "-w", str(ws.root)]
    )
    assert done.exit_code == 0, done.output
    assert LINE not in done.output
    assert not (ws.root / "dreamer.toml").exists()
    assert status_says(runner, ws).endswith("offline: auto, no ANTHROPIC_API_KEY")


def test_a_synthesizer_the_user_chose_is_left_alone(home, runner, ws):
    toml = ws.root / "dreamer.toml"
    toml.write_text('[memory.dream]\nsynthesizer = "offline"\n', encoding="utf-8")
    done = runner.invoke(main, ["claude", "install", "--scope", "user", "-w", str(ws.root)])
    assert done.exit_code == 0 and LINE not in done.output
    assert toml.read_text() == '[memory.dream]\nsynthesizer = "offline"\n'


def test_the_line_joins_the_user_s_settings_and_leaves_with_uninstall(home, runner, ws):
    toml = ws.root / "dreamer.toml"
    before = (
        "# my settings\n[memory.dream]\nintervalMinutes = 60\n\n"
        '[memory.search]\nsources = ["memory"]\n'
    )
    toml.write_text(before, encoding="utf-8")
    done = runner.invoke(main, ["claude", "install", "--scope", "user", "-w", str(ws.root)])
    assert done.exit_code == 0, done.output
    settings = load_settings(toml, {})
    assert settings.synthesizer == "claude-code" and settings.dream_interval_minutes == 60
    runner.invoke(main, ["claude", "uninstall", "--scope", "user", "-w", str(ws.root)])
    assert toml.read_text() == before


def test_a_dreamer_toml_the_line_cannot_join_is_one_error_and_untouched(home, runner, ws):
    toml = ws.root / "dreamer.toml"
    toml.write_text("[memory]\ndream = { intervalMinutes = 60 }\n", encoding="utf-8")
    done = runner.invoke(main, ["claude", "install", "--scope", "user", "-w", str(ws.root)])
    assert done.exit_code == 2
    errors = [line for line in done.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "--no-synthesizer" in errors[0]
    assert toml.read_text() == "[memory]\ndream = { intervalMinutes = 60 }\n"
    assert not (home / ".claude" / "settings.json").exists()  # no half install


def test_claude_without_a_key_in_a_scrubbed_hook_says_why(ws, runner, monkeypatch):
    """A dream started by a Claude Code hook may run with the credentials scrubbed away."""
    (ws.root / "dreamer.toml").write_text('[memory.dream]\nsynthesizer = "claude"\n')
    monkeypatch.setenv("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", "1")
    ws.note("Maya prefers tea", importance=0.5)
    result = runner.invoke(main, ["run", "--force", "-w", str(ws.root)])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1
    assert "ANTHROPIC_API_KEY" in errors[0] and "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB" in errors[0]
    assert [note.text for note in ws.scratch.notes()] == ["Maya prefers tea"]


def test_dream_run_takes_every_backend_by_flag(ws, runner, monkeypatch):
    monkeypatch.setenv("DREAM_CLAUDE_CLI", "/nonexistent/claude")
    ws.note("Maya prefers tea", importance=0.5)
    result = runner.invoke(
        main, ["run", "--force", "--synthesizer", "claude-code", "-w", str(ws.root)]
    )
    assert result.exit_code == 1 and "Claude Code's CLI" in result.output
    assert ws.store.journal.dream_entries(1)[0]["synthesizer"] == "claude-code"


def test_config_masks_the_openai_key(ws, runner, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-abcdefghijklmnopqrstuvwxyz0123")
    out = runner.invoke(main, ["config", "-w", str(ws.root)], catch_exceptions=False).output
    assert "abcdefghijklmnopqrstuvwxyz0123" not in out and "sk-proj…" in out
