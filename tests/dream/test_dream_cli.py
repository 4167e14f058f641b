"""The dream commands through the CLI: run, log, show, diff, restore, demo; exit codes."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from freezegun import freeze_time

from dreamer import Workspace
from dreamer.cli import main
from dreamer.memory import scratch
from dreamer.memory import state as wm

NOTES = [
    "User prefers concise answers with code first",
    "Acme report deadline is Friday",
    "Deployed the staging server after the nginx change",
    "CI keeps failing on the flaky payment test",
    "Deployed staging again with the new flags",
    "What timezone is the Acme client in?",
]
FROZEN = "2026-03-12T14:30:00Z"


@pytest.fixture
def root(tmp_path, now):
    path = tmp_path / "ws"
    with Workspace.open(path) as ws:
        for i, text in enumerate(NOTES):
            ws.note(text, at=now - timedelta(hours=10 - i))
    return path


def invoke(runner, *args):
    with freeze_time(FROZEN):
        return runner.invoke(main, list(args), catch_exceptions=False)


def test_run_commits_then_skips_and_log_shows_both(runner, root):
    first = invoke(runner, "run", "-w", str(root))
    assert first.exit_code == 0, first.output
    assert first.output.startswith("Dream #1 committed: MEMORY.md rewritten")
    text = (root / "MEMORY.md").read_text()
    assert all(f"## {s.title}" in text for s in wm.sections())
    assert scratch.parse(root / "memory" / "scratch.md").notes == []
    second = invoke(runner, "run", "-w", str(root))
    assert second.exit_code == 0
    assert second.output.startswith("Dream skipped: only 0 new notes")
    log = invoke(runner, "log", "-w", str(root))
    lines = log.output.splitlines()
    assert "skipped" in lines[0] and "committed" in lines[1] and "consumed 6" in lines[1]
    rows = json.loads(invoke(runner, "log", "--json", "-w", str(root)).output)
    assert [r["outcome"] for r in rows] == ["skipped", "committed"]


def test_run_json(runner, root):
    result = invoke(runner, "run", "--json", "-w", str(root))
    data = json.loads(result.output)
    assert data["outcome"] == "committed" and data["report"]["ok"] is True
    assert data["state_text"] == (root / "MEMORY.md").read_text()
    assert data["synthesizer"] == "offline"


def test_dry_run_shows_the_candidate_and_changes_nothing(runner, root):
    before = (root / "memory" / "scratch.md").read_bytes()
    result = invoke(runner, "run", "--dry-run", "-w", str(root))
    assert result.exit_code == 0
    assert "# Working Memory State" in result.output and "--- guard report ---" in result.output
    assert "nothing changed" in result.output
    assert not (root / "MEMORY.md").exists()
    assert (root / "memory" / "scratch.md").read_bytes() == before


def test_rejected_dream_exits_3_and_keeps_memory(runner, root, monkeypatch):
    # A mature state whose every Active Context line fades and whose pointers lead nowhere:
    # the offline draft collapses it; with no revisions allowed the guards reject it.
    lines = "\n".join(
        f"- Task: negotiate greenhouse contract number {i} with the orchard "
        f"cooperative about irrigation pumps and seedlings"
        for i in range(30)
    )
    mature = f"# Working Memory State\n\n## Active Context\n{lines}\n"
    (root / "MEMORY.md").write_text(mature)
    monkeypatch.setenv("DREAM_MAX_REVISIONS", "0")
    result = invoke(runner, "run", "-w", str(root))
    assert result.exit_code == 3, result.output
    assert "mass drop" in result.output
    assert (root / "MEMORY.md").read_text() == mature
    assert len(scratch.parse(root / "memory" / "scratch.md").notes) == 6
    row = json.loads(invoke(runner, "log", "--json", "-w", str(root)).output)[0]
    assert row["outcome"] == "rejected"
    as_json = invoke(runner, "run", "--json", "-w", str(root))
    assert as_json.exit_code == 3
    data = json.loads(as_json.output)
    assert data["outcome"] == "rejected" and data["dream_id"] == row["id"] + 1
    assert any("mass drop" in reason for reason in data["reasons"])


def test_show_diff_and_restore(runner, root):
    (root / "MEMORY.md").write_text("# Working Memory State\n\n## The Bond\n- User is Maya\n")
    invoke(runner, "run", "-w", str(root))
    show = invoke(runner, "show", "1", "-w", str(root))
    assert "outcome: committed" in show.output and "--- state written ---" in show.output
    diff = invoke(runner, "diff", "-w", str(root))
    assert diff.output.startswith("--- MEMORY.md before dream 1")
    assert "+## Active Context" in diff.output or "+- " in diff.output
    restored = invoke(runner, "restore", "1", "--before", "-w", str(root))
    assert restored.exit_code == 0 and "journal #2" in restored.output
    assert (root / "MEMORY.md").read_text().endswith("- User is Maya\n")
    log = json.loads(invoke(runner, "log", "--json", "-w", str(root)).output)
    assert log[0]["outcome"] == "restored"
    again = invoke(runner, "restore", "1", "-w", str(root))
    assert again.exit_code == 0
    assert "## Active Context" in (root / "MEMORY.md").read_text()


def test_unknown_dream_and_nothing_to_diff_are_usage_errors(runner, root):
    assert invoke(runner, "show", "99", "-w", str(root)).exit_code == 2
    nothing = invoke(runner, "diff", "-w", str(root))
    assert nothing.exit_code == 2 and "dream run --force" in nothing.output


def test_a_second_dreamer_is_told_a_dream_is_running(runner, root):
    with Workspace.open(root) as ws, ws.lock():
        result = invoke(runner, "run", "-w", str(root))
    assert result.exit_code == 1 and "dream already running" in result.output


@pytest.mark.slow
def test_demo_dreams_offline_and_prints_memory(runner, tmp_path):
    target = tmp_path / "demo"
    result = invoke(runner, "demo", str(target))
    assert result.exit_code == 0, result.output
    assert f"Demo workspace: {target}" in result.output
    assert "committed" in result.output
    text = (target / "MEMORY.md").read_text()
    assert text in result.output
    state = wm.parse(text)
    assert "Maya" in state.body("bond") and "tabs over spaces" in state.body("bond")
    assert "billing" in state.body("niche")
    assert "moved to next Wednesday" in state.body("active_context")
    assert state.skills() and state.body("curiosity_gaps")
    assert invoke(runner, "demo", str(target)).exit_code == 2


@pytest.mark.slow
def test_demo_without_a_path_uses_a_new_temporary_folder(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    result = invoke(runner, "demo")
    assert result.exit_code == 0
    folder = result.output.splitlines()[0].removeprefix("Demo workspace: ")
    assert folder.startswith(str(tmp_path)) and (tmp_path / folder / "MEMORY.md").exists()


@pytest.mark.parametrize("command", ["run", "log", "show", "diff", "restore", "demo"])
def test_every_dream_command_has_help_with_an_example(runner, command):
    result = runner.invoke(main, [command, "--help"])
    assert result.exit_code == 0 and "Example" in result.output


@pytest.mark.slow
def test_demo_ignores_dream_workspace_from_the_environment(runner, tmp_path, root, monkeypatch):
    monkeypatch.setenv("DREAM_WORKSPACE", str(root))
    target = tmp_path / "demo-w"
    result = invoke(runner, "demo", "-w", str(target))
    assert result.exit_code == 0 and (target / "MEMORY.md").exists()
    other = tmp_path / "demo-arg"
    assert invoke(runner, "demo", str(other)).exit_code == 0
    assert not (root / "MEMORY.md").exists()
