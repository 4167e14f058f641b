"""`dream codex install|status|uninstall` in a temporary HOME and project."""

from __future__ import annotations

import json
import os
import sys
import tomllib

import pytest
from codex_cli import cli_path, isolate

from dreamer.agents import codex_settings as xs
from dreamer.cli import main


@pytest.fixture
def place(tmp_path, monkeypatch):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(project)
    return home, project


# A config.toml as people write it: comments, odd spacing, no final newline, other servers.
CONFIG = """# my codex setup
model = "gpt-5.5"   # the fast one
approval_policy="on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]

[profiles.deep]
model_reasoning_effort = 'high'"""
# Laid out by hand, as hooks.json files are (no serializer writes this): it comes back as is.
HOOKS = (
    '{\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}\n}'
)


def _ours(hooks: dict) -> dict[str, list[str]]:
    return {
        event: [h["command"] for g in groups for h in g["hooks"] if " hook " in h["command"]]
        for event, groups in hooks["hooks"].items()
    }


def test_user_scope_install_shows_a_diff_and_uninstall_restores_bytes(place, runner, tmp_path):
    home, _ = place
    folder = home / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(CONFIG)
    (folder / "hooks.json").write_text(HOOKS)
    ws = tmp_path / "ws"

    dry = runner.invoke(main, ["codex", "install", "--scope", "user", "-w", str(ws), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "+[mcp_servers.dreamer]" in dry.output and "Would install" in dry.output
    assert (folder / "config.toml").read_text() == CONFIG
    assert (folder / "hooks.json").read_text() == HOOKS

    done = runner.invoke(main, ["codex", "install", "--scope", "user", "-w", str(ws)])
    assert done.exit_code == 0, done.output
    assert "/hooks" in done.output  # the person is told to trust the new hooks
    config = tomllib.loads((folder / "config.toml").read_text())
    assert config["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"]}
    server = config["mcp_servers"]["dreamer"]
    assert server["args"] == ["mcp", "-w", str(ws.absolute())]
    assert server["command"].endswith("dream")
    assert config["profiles"]["deep"] == {"model_reasoning_effort": "high"}
    hooks = json.loads((folder / "hooks.json").read_text())
    assert hooks["hooks"]["Stop"][0]["hooks"][0]["command"] == "notify-send done"  # theirs first
    ours = _ours(hooks)
    assert [c.split(" hook ", 1)[1].split()[0] for e in xs.HOOK_EVENTS for c in ours[e]] == [
        "session-start",
        "pre-compact",
        "stop",
    ]
    assert (folder / "hooks.json").read_text().startswith('{\n    "hooks"')  # its indent kept

    again = runner.invoke(main, ["codex", "install", "--scope", "user", "-w", str(ws)])
    assert "Already installed" in again.output

    status = runner.invoke(main, ["codex", "status", "--json"])
    scopes = json.loads(status.output)["scopes"]
    assert scopes["user"]["hooks"] == list(xs.HOOK_EVENTS) and scopes["user"]["mcp"] is True
    assert scopes["project"] == {**scopes["project"], "hooks": [], "mcp": False}

    gone = runner.invoke(main, ["codex", "uninstall", "--scope", "user"])
    assert gone.exit_code == 0, gone.output
    assert (folder / "config.toml").read_text() == CONFIG
    assert (folder / "hooks.json").read_text() == HOOKS


def test_uninstall_keeps_what_codex_wrote_after_the_install(place, runner):
    """Codex appends its own tables (project trust, hook trust) to config.toml later."""
    home, _ = place
    folder = home / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text(CONFIG + "\n")
    assert runner.invoke(main, ["codex", "install", "--scope", "user"]).exit_code == 0
    later = '\n[projects."/src/app"]\ntrust_level = "trusted"\n'
    with (folder / "config.toml").open("a") as handle:
        handle.write(later)
    assert runner.invoke(main, ["codex", "uninstall", "--scope", "user"]).exit_code == 0
    assert (folder / "config.toml").read_text() == CONFIG + "\n" + later


def test_project_scope_is_portable_and_files_it_made_go_away(place, runner):
    _, project = place
    done = runner.invoke(main, ["codex", "install"])
    assert done.exit_code == 0, done.output
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    config = tomllib.loads((project / ".codex" / "config.toml").read_text())
    assert config["mcp_servers"]["dreamer"] == {"command": "dream", "args": ["mcp"]}
    commands = [c for cs_ in _ours(hooks).values() for c in cs_]
    assert len(commands) == 3
    assert all(c.startswith("command -v dream ") for c in commands)  # found on each PATH
    for local in (str(project), sys.prefix):  # no path of this machine
        assert local not in json.dumps(hooks) + str(config)
    assert (project / ".codex" / "hooks.json").stat().st_mode & 0o777 == 0o644  # shared

    pinned = runner.invoke(main, ["codex", "install", "-w", "/tmp/x"])
    assert pinned.exit_code != 0 and pinned.output.count("Error:") == 1

    gone = runner.invoke(main, ["codex", "uninstall"])
    assert gone.exit_code == 0, gone.output
    assert not (project / ".codex" / "hooks.json").exists()
    assert not (project / ".codex" / "config.toml").exists()
    assert "Nothing to remove" in runner.invoke(main, ["codex", "uninstall"]).output


def test_a_broken_config_is_one_error_and_nothing_changes(place, runner):
    home, _ = place
    folder = home / ".codex"
    folder.mkdir()
    (folder / "config.toml").write_text("model = [unclosed\n")
    result = runner.invoke(main, ["codex", "install", "--scope", "user"])
    assert result.exit_code != 0
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "config.toml is not valid TOML" in errors[0]
    assert (folder / "config.toml").read_text() == "model = [unclosed\n"
    assert not (folder / "hooks.json").exists()


def test_codex_home_moves_the_user_scope(place, runner, tmp_path, monkeypatch):
    elsewhere = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(elsewhere))
    assert runner.invoke(main, ["codex", "install", "--scope", "user"]).exit_code == 0
    assert (elsewhere / "hooks.json").is_file() and (elsewhere / "config.toml").is_file()
    assert (elsewhere / "config.toml").stat().st_mode & 0o777 == 0o600  # a new user file: private
    assert not (place[0] / ".codex").exists()


def test_the_documented_config_table_is_what_install_writes():
    from pathlib import Path

    docs = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "codex.md").read_text()
    shown = docs.split("```toml\n[mcp_servers.dreamer]", 1)[1].split("```", 1)[0]
    written = xs.server_block("/home/ada/.venv/bin/dream", Path("/home/ada/agents/ada"))
    assert "[mcp_servers.dreamer]" + shown == written


def test_a_file_edited_after_install_loses_only_dreamers_entries(place, runner):
    home, _ = place
    folder = home / ".codex"
    folder.mkdir()
    theirs = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send"}]}]}}
    (folder / "hooks.json").write_text(json.dumps(theirs, indent=2) + "\n")
    assert runner.invoke(main, ["codex", "install", "--scope", "user"]).exit_code == 0
    data = json.loads((folder / "hooks.json").read_text())
    data["hooks"]["PostToolUse"] = [{"hooks": [{"type": "command", "command": "lint"}]}]
    (folder / "hooks.json").write_text(json.dumps(data, indent=2) + "\n")  # their edit
    assert runner.invoke(main, ["codex", "uninstall", "--scope", "user"]).exit_code == 0
    after = json.loads((folder / "hooks.json").read_text())
    assert after == {"hooks": {**theirs["hooks"], "PostToolUse": data["hooks"]["PostToolUse"]}}
    assert not (folder / "config.toml").exists()  # made by install, untouched since: removed


def test_status_says_what_is_installed_and_what_was_captured(place, runner, tmp_path, now):
    from pathlib import Path

    from dreamer import Workspace
    from dreamer.agents.ingest import ingest

    ws_path = tmp_path / "ws"
    with Workspace.open(ws_path) as ws:
        ingest(ws, [Path(__file__).resolve().parents[1] / "codex_rollout.jsonl"], now)
    assert runner.invoke(main, ["codex", "install", "--scope", "user"]).exit_code == 0
    shown = runner.invoke(main, ["codex", "status", "-w", str(ws_path)])
    assert shown.exit_code == 0, shown.output
    assert "user     hooks: SessionStart, PreCompact, Stop; MCP server: yes" in shown.output
    assert "project  hooks: none; MCP server: no" in shown.output
    assert "captured codex_rollout.jsonl: up to 2026-" in shown.output


# --- hook trust: memory is off until the person trusts the hooks in Codex ---------------------


def _trust(codex_home, hooks_file, hashes: dict[str, str]) -> None:
    """What Codex 0.169.0 writes when a person trusts hooks in /hooks: a [hooks.state] table
    per hook, keyed <hooks.json>:<event>:<group>:<hook>, holding the hook's trusted_hash."""
    data = json.loads(hooks_file.read_text())
    lines = []
    for event, label in xs.EVENT_LABELS.items():
        for g, group in enumerate(data["hooks"][event]):
            for h, hook in enumerate(group["hooks"]):
                key = f"{hooks_file}:{label}:{g}:{h}"
                value = hashes.get(event) or xs.hook_hash(event, group, hook)
                lines.append(f'[hooks.state."{key}"]\ntrusted_hash = "{value}"\n')
    config = codex_home / "config.toml"
    config.write_text(config.read_text() + "\n" + "\n".join(lines))


def test_status_says_memory_is_off_until_the_hooks_are_trusted(place, runner, tmp_path):
    home, _ = place
    codex_home = home / ".codex"
    done = runner.invoke(main, ["codex", "install", "--scope", "user"])
    assert done.exit_code == 0 and "until then this memory is off" in done.output
    report = json.loads(runner.invoke(main, ["codex", "status", "--json"]).output)
    assert report["trust"]["user"]["hooks"] == dict.fromkeys(xs.HOOK_EVENTS, "untrusted")
    assert report["memory"].startswith("off until you trust the hooks")
    assert "/hooks" in runner.invoke(main, ["codex", "status"]).output

    _trust(codex_home, codex_home / "hooks.json", {})
    report = json.loads(runner.invoke(main, ["codex", "status", "--json"]).output)
    assert report["trust"]["user"]["hooks"] == dict.fromkeys(xs.HOOK_EVENTS, "trusted")
    assert report["memory"].startswith("on")
    again = runner.invoke(main, ["codex", "install", "--scope", "user"])
    assert "Already installed" in again.output and "/hooks" not in again.output

    # Installed again with another workspace: the commands change, and Codex stops running
    # them until they are reviewed again; install and status both say so.
    moved = runner.invoke(main, ["codex", "install", "--scope", "user", "-w", str(tmp_path / "w")])
    assert "until then this memory is off" in moved.output
    report = json.loads(runner.invoke(main, ["codex", "status", "--json"]).output)
    assert set(report["trust"]["user"]["hooks"].values()) == {"modified"}
    assert report["memory"].startswith("off: the hooks changed since you trusted them")


def test_a_project_install_is_off_until_codex_trusts_the_project(place, runner):
    home, project = place
    assert runner.invoke(main, ["codex", "install", "--scope", "project"]).exit_code == 0
    hooks_file = project / ".codex" / "hooks.json"
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text("")
    _trust(home / ".codex", hooks_file, {})
    report = json.loads(runner.invoke(main, ["codex", "status", "--json"]).output)
    assert report["trust"]["project"]["hooks"] == dict.fromkeys(xs.HOOK_EVENTS, "trusted")
    assert "trust the project" in report["memory"]
    config = home / ".codex" / "config.toml"
    config.write_text(config.read_text() + f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
    assert json.loads(runner.invoke(main, ["codex", "status", "--json"]).output)[
        "memory"
    ].startswith("on")


def test_codex_install_errors_name_their_file_key_or_variable(place, runner, monkeypatch, tmp_path):
    home, project = place
    folder = home / ".codex"
    folder.mkdir()
    (folder / "hooks.json").write_text('{"hooks": "Stop"}')
    result = runner.invoke(main, ["codex", "install", "--scope", "user"])
    assert result.exit_code == 2 and result.output.count("Error:") == 1, result.output
    assert str(folder / "hooks.json") in result.output and '"hooks" is a string' in result.output
    assert (folder / "hooks.json").read_text() == '{"hooks": "Stop"}'
    assert not (folder / "config.toml").exists()

    monkeypatch.setenv("DREAM_WORKSPACE", str(tmp_path / "ws"))
    result = runner.invoke(main, ["codex", "install", "--scope", "project"])
    assert result.exit_code == 2 and "DREAM_WORKSPACE is set" in result.output
    assert not (project / ".codex").exists()

    monkeypatch.delenv("DREAM_WORKSPACE")
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("HOME", str(tmp_path / "file"))
    result = runner.invoke(main, ["codex", "install", "--scope", "user"])
    assert result.exit_code == 2 and "HOME is" in result.output and "Traceback" not in result.output


def test_dream_status_answers_right_after_a_codex_install(place, runner):
    assert runner.invoke(main, ["codex", "install", "--scope", "user"]).exit_code == 0
    shown = runner.invoke(main, ["status"])
    assert shown.exit_code == 0, shown.output


@pytest.mark.cli
def test_the_trust_hash_is_the_one_the_real_codex_computes(place, runner, monkeypatch):
    """Codex's own `hooks/list` (its app server) names each hook's key, current hash and trust:
    dreamer's reading of the same files agrees, before and after the hooks are trusted."""
    cli = cli_path()
    home, project = place
    codex_home = isolate(monkeypatch, home)
    assert runner.invoke(main, ["codex", "install", "--scope", "user"]).exit_code == 0
    listed = _codex_hooks(cli, project)
    hooks_file = codex_home / "hooks.json"
    data = json.loads(hooks_file.read_text())
    for event, label in xs.EVENT_LABELS.items():
        (entry,) = [h for h in listed if h["key"] == f"{hooks_file}:{label}:0:0"]
        group = data["hooks"][event][0]
        assert entry["currentHash"] == xs.hook_hash(event, group, group["hooks"][0])
        assert entry["trustStatus"] == "untrusted"
    _trust(codex_home, hooks_file, {"Stop": "sha256:" + "0" * 64})
    states = {h["key"].split(":")[-3]: h["trustStatus"] for h in _codex_hooks(cli, project)}
    assert states == {"session_start": "trusted", "pre_compact": "trusted", "stop": "modified"}
    report = json.loads(runner.invoke(main, ["codex", "status", "--json"]).output)
    assert report["trust"]["user"]["hooks"] == {
        "SessionStart": "trusted",
        "PreCompact": "trusted",
        "Stop": "modified",
    }


def _codex_hooks(cli: str, cwd) -> list[dict]:
    """The hooks Codex lists for a folder, through its app server's JSON-RPC on stdio."""
    import subprocess

    child = subprocess.Popen(
        [cli, "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        for message in (
            {
                "id": 1,
                "method": "initialize",
                "params": {"clientInfo": {"name": "t", "version": "0"}},
            },
            {"method": "initialized"},
            {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
        ):
            child.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            child.stdin.flush()
        for line in child.stdout:
            answer = json.loads(line)
            if answer.get("id") == 2:
                return [hook for data in answer["result"]["data"] for hook in data["hooks"]]
    finally:
        child.kill()
        child.wait(timeout=30)
    raise AssertionError("codex app-server gave no hooks/list answer")


def test_a_session_start_that_cannot_load_the_memory_says_so_in_one_line(tmp_path, now):
    """The memory block never goes missing without a word: a workspace whose dreamer.toml is
    broken gives the session one line naming the cause and the log, instead of nothing."""
    import io

    from dreamer import Workspace
    from dreamer.agents import hooks

    Workspace.open(tmp_path / "ws").close()
    (tmp_path / "ws" / "dreamer.toml").write_text("[memory.dream\n")
    payload = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "SessionStart"}
    out = io.StringIO()
    env = {"DREAM_WORKSPACE": str(tmp_path / "ws"), "PATH": os.environ.get("PATH", "")}
    assert hooks.run("session-start", io.StringIO(json.dumps(payload)), out, now, env) == 0
    answer = json.loads(out.getvalue())
    line = answer["systemMessage"]
    assert "\n" not in line and "not loaded" in line and "not valid TOML" in line
    assert str(tmp_path / "ws" / "memory" / "hooks.log") in line
    assert answer["hookSpecificOutput"]["additionalContext"] == line


@pytest.mark.cli
def test_real_codex_gives_the_memory_only_once_status_says_the_hooks_are_trusted(
    tmp_path, runner, monkeypatch
):
    """Codex 0.169.0 without the trust bypass: before trust the memory block never reaches the
    model and status says memory is off; with the trust Codex records (our hash) it does."""
    import subprocess

    from codex_cli import config
    from fake_openai import FakeOpenAI

    from dreamer import Workspace

    cli = cli_path()
    codex_home = isolate(monkeypatch, tmp_path / "home")
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    note = "The build server is called Pelican."
    with Workspace.open(tmp_path / "ws") as ws:
        ws.init()
        ws.note(note)
    fake = FakeOpenAI()
    fake.response("First.").response("Second.")

    def ask(prompt: str) -> None:
        done = subprocess.run(
            [cli, "exec", "--skip-git-repo-check", "-C", str(project), prompt],
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    with fake.serve() as base_url:
        (codex_home / "config.toml").write_text(config(base_url))
        ws_flag = ["-w", str(tmp_path / "ws")]
        assert runner.invoke(main, ["codex", "install", "--scope", "user", *ws_flag]).exit_code == 0
        report = json.loads(runner.invoke(main, ["codex", "status", "--json"]).output)
        assert report["memory"].startswith("off until you trust the hooks")
        ask("hello")
        assert note not in json.dumps(fake.requests[-1].json)  # Codex ran no untrusted hook

        _trust(codex_home, codex_home / "hooks.json", {})
        report = json.loads(runner.invoke(main, ["codex", "status", "--json"]).output)
        assert report["memory"].startswith("on")
        ask("hello again")
        assert note in json.dumps(fake.requests[-1].json)  # the SessionStart block arrived
