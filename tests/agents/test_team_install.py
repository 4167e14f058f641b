"""A project-scope install committed by one user works in a teammate's clone.

The teammate's ``dream`` lives somewhere else (a shim on a different PATH); the hook lines of
``.claude/settings.json`` run through a shell and the ``.mcp.json`` server is launched the way
Claude Code launches it (command and args, resolved on PATH). Where the real Claude Code CLI is
at hand (``DREAM_CLAUDE_CLI``; ``DREAM_REQUIRE_CLAUDE_CLI=1`` makes its absence a failure), its
own sessions in the clone, against a loopback Messages API, show no hook error and a connected
MCP server.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from claude_cli import cli_path
from fake_anthropic import FakeAnthropic, Scripted, message_body
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from dreamer import Workspace
from dreamer.agents import claude_settings as cs
from dreamer.agents import hooks
from dreamer.cli import main

SYSTEM_PATH = "/usr/bin:/bin"


@pytest.fixture
def committed(tmp_path, monkeypatch, runner):
    """A project where the first user ran `dream claude install --scope project`."""
    home, project = tmp_path / "alice", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    result = runner.invoke(main, ["claude", "install", "--scope", "project"])
    assert result.exit_code == 0, result.output
    return project


def teammate(tmp_path: Path) -> tuple[Path, Path]:
    """A second user's clone of the project and a `dream` in a folder of their own."""
    clone = tmp_path / "bob" / "clone"
    shutil.copytree(tmp_path / "project", clone)
    bin_dir = tmp_path / "bob" / "tools" / "bin"
    bin_dir.mkdir(parents=True)
    shim = bin_dir / "dream"
    # Runs this dreamer wherever it is installed, and leaves a trace that it was this one.
    calls = bin_dir / "calls"
    shim.write_text(
        f'#!/bin/sh\necho "$@" >> "{calls}"\nexec "{sys.executable}" -m dreamer.cli "$@"\n'
    )
    shim.chmod(0o755)
    return clone, bin_dir


def hook_commands(settings: Path) -> dict[str, str]:
    data = json.loads(settings.read_text())
    return {
        event: hook["command"]
        for event, groups in data["hooks"].items()
        for group in groups
        for hook in group["hooks"]
        if cs.is_ours(hook)
    }


def run_hook(command: str, clone: Path, path: str, home: Path) -> subprocess.CompletedProcess:
    event = {"session_id": "s1", "cwd": str(clone), "hook_event_name": "SessionStart"}
    env = {"PATH": path, "HOME": str(home), "DREAM_WORKSPACE": str(clone.parent / "ws")}
    return subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        cwd=clone,
        env=env,
        timeout=60,
    )


def test_project_install_names_no_path_of_the_installing_machine(committed, tmp_path):
    written = (committed / ".claude" / "settings.json").read_text()
    written += (committed / ".mcp.json").read_text()
    assert str(Path(sys.executable).parent) not in written and str(tmp_path) not in written
    server = json.loads((committed / ".mcp.json").read_text())["mcpServers"]["dreamer"]
    assert server["command"] == "dream" and server["args"] == ["mcp"]


@pytest.mark.slow
def test_the_hooks_run_the_teammates_dream_found_on_path(committed, tmp_path):
    clone, bin_dir = teammate(tmp_path)
    with Workspace.open(clone.parent / "ws") as ws:
        ws.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Bob likes tea.\n")
    commands = hook_commands(clone / ".claude" / "settings.json")
    assert set(commands) == {"SessionStart", "PreCompact", "SessionEnd"}
    start = run_hook(commands["SessionStart"], clone, f"{bin_dir}:{SYSTEM_PATH}", clone.parent)
    assert start.returncode == 0, start.stderr
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Bob likes tea" in context
    assert (bin_dir / "calls").read_text().startswith("hook session-start")


def test_without_dream_on_path_a_hook_prints_one_hint_and_exits_0(committed, tmp_path):
    clone, _ = teammate(tmp_path)
    commands = hook_commands(clone / ".claude" / "settings.json")
    for event, command in commands.items():
        done = run_hook(command, clone, SYSTEM_PATH, clone.parent)
        assert done.returncode == 0, event
        shown = done.stdout if event == "SessionStart" else done.stderr
        assert shown.strip() == cs.MISSING_HINT, event
        assert (done.stderr if event == "SessionStart" else done.stdout) == ""


@pytest.mark.slow
def test_the_mcp_server_starts_from_the_teammates_path(committed, tmp_path):
    clone, bin_dir = teammate(tmp_path)
    server = json.loads((clone / ".mcp.json").read_text())["mcpServers"]["dreamer"]
    env = {
        "PATH": f"{bin_dir}:{SYSTEM_PATH}",
        "HOME": str(clone.parent),
        "DREAM_WORKSPACE": str(clone.parent / "ws"),
    }
    params = StdioServerParameters(
        command=server["command"], args=server["args"], env=env, cwd=str(clone)
    )
    names: list[str] = []

    async def scenario() -> None:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                with anyio.fail_after(30):
                    names.extend(tool.name for tool in (await session.list_tools()).tools)

    anyio.run(scenario)
    assert "memory_search" in names
    assert (bin_dir / "calls").read_text().startswith("mcp")


def test_install_allows_the_tools_but_forget_and_can_be_declined(tmp_path, monkeypatch, runner):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    settings = project / ".claude" / "settings.json"
    dry = runner.invoke(main, ["claude", "install", "--dry-run"])
    assert '+      "mcp__dreamer__memory_search"' in dry.output  # the rule is shown in the diff
    declined = runner.invoke(main, ["claude", "install", "--no-permissions"])
    assert declined.exit_code == 0 and "permissions" not in json.loads(settings.read_text())
    runner.invoke(main, ["claude", "install"])
    allow = json.loads(settings.read_text())["permissions"]["allow"]
    assert "mcp__dreamer__memory_search" in allow and "mcp__dreamer__working_memory_note" in allow
    assert not any("forget" in rule for rule in allow)
    runner.invoke(main, ["claude", "uninstall"])
    assert not settings.exists()


def test_a_project_install_refuses_to_pin_this_machines_workspace(tmp_path, monkeypatch, runner):
    (tmp_path / "p" / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path / "p")
    result = runner.invoke(main, ["claude", "install", "-w", str(tmp_path / "ws")])
    assert result.exit_code == 2 and result.output.startswith("Error:")
    assert ".dreamer/workspace" in result.output and not (tmp_path / "p" / ".claude").exists()


def test_user_scope_keeps_this_machines_absolute_command(tmp_path, monkeypatch, runner):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(main, ["claude", "install", "--scope", "user"]).exit_code == 0
    server = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["dreamer"]
    assert os.path.isabs(server["command"])


# --- the real Claude Code CLI --------------------------------------------------------------


def claude_cli() -> str:
    """The real `claude` binary (DREAM_CLAUDE_CLI), else a skip (a failure in CI)."""
    return cli_path()


@contextlib.contextmanager
def streaming_messages_api(bodies: list) -> Iterator[str]:
    """A loopback Messages API that answers every request with one streamed text reply."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            bodies.append(body)
            if not body.get("stream"):
                data = json.dumps({"input_tokens": 10}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            message = {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": body.get("model"),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            }
            for event in (
                {"type": "message_start", "message": message},
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "Hello."},
                },
                {"type": "content_block_stop", "index": 0},
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn"},
                    "usage": {"output_tokens": 2},
                },
                {"type": "message_stop"},
            ):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()

        def log_message(self, format: str, *args) -> None:  # noqa: A002
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def claude_session(clone: Path, path: str, base_url: str) -> list[dict]:
    """One `claude -p` session in the clone, as the teammate; its stream-json events."""
    home = clone.parent / "home"
    home.mkdir(exist_ok=True)
    # The teammate accepted the folder's trust dialog once (project permissions need it).
    (home / ".claude.json").write_text(
        json.dumps({"projects": {str(clone): {"hasTrustDialogAccepted": True}}})
    )
    env = {
        "HOME": str(home),
        "PATH": path,
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-0000",
        "DREAM_WORKSPACE": str(clone.parent / "ws"),
    }
    done = subprocess.run(
        [
            claude_cli(),
            "-p",
            "hello",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
        ],
        capture_output=True,
        text=True,
        cwd=clone,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr + done.stdout[-1500:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.cli
def test_real_claude_code_sessions_in_the_clone_show_no_hook_error(committed, tmp_path):
    claude_cli()  # skip before building anything when the CLI is not here
    clone, bin_dir = teammate(tmp_path)
    with Workspace.open(clone.parent / "ws") as ws:
        ws.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Bob likes tea.\n")
    bodies: list = []
    with streaming_messages_api(bodies) as base_url:
        events = claude_session(clone, f"{bin_dir}:{SYSTEM_PATH}", base_url)
        hooks = [e for e in events if e.get("subtype") == "hook_response"]
        assert hooks and all(h["exit_code"] == 0 and h["outcome"] == "success" for h in hooks)
        (init,) = [e for e in events if e.get("subtype") == "init"]
        assert {"name": "dreamer", "status": "connected"} in init["mcp_servers"]
        assert "mcp__dreamer__memory_search" in init["tools"]
        assert "Bob likes tea" in json.dumps(bodies[-1])  # SessionStart's memory reached the model

        # A teammate without dreamer: the session runs, the hook says why, no hook error.
        events = claude_session(clone, SYSTEM_PATH, base_url)
        (start,) = [
            e
            for e in events
            if e.get("hook_event") == "SessionStart" and e.get("subtype") == "hook_response"
        ]
        assert start["exit_code"] == 0 and start["outcome"] == "success"
        assert start["stdout"].strip() == cs.MISSING_HINT


def test_installing_again_replaces_an_old_machine_specific_project_install(
    tmp_path, monkeypatch, runner
):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".claude").mkdir(parents=True)
    (project / ".git").mkdir()
    old = "/home/alice/.venvs/dreamer/bin/dream"
    settings = {
        "hooks": {
            event: [{"hooks": [{"type": "command", "command": f"{old} hook {name}"}]}]
            for event, name in cs.HOOK_EVENTS.items()
        }
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
    servers = {"mcpServers": {"dreamer": {"type": "stdio", "command": old, "args": ["mcp"]}}}
    (project / ".mcp.json").write_text(json.dumps(servers, indent=2))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    assert runner.invoke(main, ["claude", "install"]).exit_code == 0
    written = (project / ".claude" / "settings.json").read_text() + (
        project / ".mcp.json"
    ).read_text()
    assert old not in written
    data = json.loads((project / ".claude" / "settings.json").read_text())
    ours = [h for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert len(ours) == 3 and all(cs.is_ours(h) for h in ours)  # replaced, not added


# --- the team's model choice ------------------------------------------------------------------

CHOICE = Path(".dreamer") / "synthesizer"
STATE = {  # the dream's answer through the claude CLI
    "phenotype": "- Careful collaborator.",
    "bond": "- Bob prefers tea to coffee.",
    "niche": "",
    "active_context": "- Trying dreamer with the team.",
    "crystal_pointers": [],
    "curiosity_gaps": "",
    "emerging_skills": [],
}


def stand_in_claude(folder: Path) -> Path:
    """An executable named `claude` (what the teammate's machine has on PATH when Claude Code
    is installed); adoption only looks for it, nothing here runs it."""
    folder.mkdir(parents=True, exist_ok=True)
    claude = folder / "claude"
    claude.write_text("#!/bin/sh\nexit 0\n")
    claude.chmod(0o755)
    return folder


def session_start(clone: Path, env: dict[str, str], now) -> dict:
    """dreamer's SessionStart hook in the teammate's clone, as Claude Code runs it."""
    import io

    payload = {"session_id": "s1", "cwd": str(clone), "hook_event_name": "SessionStart"}
    out = io.StringIO()
    assert hooks.run("session-start", io.StringIO(json.dumps(payload)), out, now, env) == 0
    return json.loads(out.getvalue()) if out.getvalue() else {}


def bob(tmp_path: Path, path: str, **extra: str) -> dict[str, str]:
    return {
        "PATH": path,
        "HOME": str(tmp_path / "bob"),
        "DREAM_WORKSPACE": str(tmp_path / "ws"),
        **extra,
    }


def test_a_project_install_commits_the_model_choice_and_uninstall_takes_it_back(committed, runner):
    assert (committed / CHOICE).read_text() == "claude-code\n"
    written = (committed / CHOICE).read_text()
    assert "/" not in written  # no path of this machine: a team commits it
    assert runner.invoke(main, ["claude", "uninstall", "--scope", "project"]).exit_code == 0
    assert not (committed / ".dreamer").exists()


def test_no_synthesizer_commits_no_choice(tmp_path, monkeypatch, runner):
    (tmp_path / "p" / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path / "p")
    assert runner.invoke(main, ["claude", "install", "--no-synthesizer"]).exit_code == 0
    assert not (tmp_path / "p" / CHOICE).exists()


def test_a_teammate_with_claude_on_path_takes_up_the_choice(committed, tmp_path, now):
    clone, _ = teammate(tmp_path)
    path = f"{stand_in_claude(tmp_path / 'bob' / 'bin')}:{SYSTEM_PATH}"
    with Workspace.open(tmp_path / "ws") as ws:
        ws.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Bob likes tea.\n")
    answer = session_start(clone, bob(tmp_path, path), now)
    assert "claude-code" in answer["systemMessage"] and str(CHOICE) in answer["systemMessage"]
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert "Bob likes tea" in context and answer["systemMessage"] in context
    toml = (tmp_path / "ws" / "dreamer.toml").read_text()
    assert 'synthesizer = "claude-code"' in toml
    with Workspace.open(tmp_path / "ws", environ={}) as ws:
        assert ws.settings.synthesis()[0] == "claude-code"
    again = session_start(clone, bob(tmp_path, path), now)
    assert "systemMessage" not in again  # said once: from now on it is the person's setting


def test_a_teammate_without_claude_is_told_in_one_line_and_nothing_changes(
    committed, tmp_path, now
):
    clone, _ = teammate(tmp_path)
    answer = session_start(clone, bob(tmp_path, SYSTEM_PATH), now)  # first session: no memory yet
    line = answer["systemMessage"]
    assert "\n" not in line and "claude-code" in line and "no 'claude' command" in line
    assert "npm install -g @anthropic-ai/claude-code" in line  # how to opt in
    assert 'memory.dream.synthesizer = "offline"' in line  # how to choose offline instead
    assert not (tmp_path / "ws").exists()  # a session start writes nothing
    with Workspace.open(tmp_path / "ws") as ws:
        ws.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Bob likes tea.\n")
    answer = session_start(clone, bob(tmp_path, SYSTEM_PATH), now)
    assert answer["systemMessage"] == line  # every session, until the person chooses
    assert "Bob likes tea" in answer["hookSpecificOutput"]["additionalContext"]
    assert not (tmp_path / "ws" / "dreamer.toml").exists()


@pytest.mark.parametrize("own", ["toml", "env"])
@pytest.mark.parametrize("has_claude", [True, False])
def test_a_persons_own_choice_stands(committed, tmp_path, now, own, has_claude):
    clone, _ = teammate(tmp_path)
    with Workspace.open(tmp_path / "ws"):
        pass
    path = f"{stand_in_claude(tmp_path / 'bin')}:{SYSTEM_PATH}" if has_claude else SYSTEM_PATH
    env = bob(tmp_path, path)
    toml = tmp_path / "ws" / "dreamer.toml"
    if own == "toml":
        toml.write_text('[memory.dream]\nsynthesizer = "offline"\n')
    else:
        env["DREAM_SYNTHESIZER"] = "offline"
    answer = session_start(clone, env, now)
    assert "systemMessage" not in answer and "hookSpecificOutput" in answer  # nothing to say
    if own == "toml":
        assert toml.read_text() == '[memory.dream]\nsynthesizer = "offline"\n'
    else:
        assert not toml.exists()


def test_a_broken_choice_file_is_named_and_the_memory_still_comes(committed, tmp_path, now):
    clone, _ = teammate(tmp_path)
    (clone / CHOICE).write_text("gpt-9\n")
    with Workspace.open(tmp_path / "ws") as ws:
        ws.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Bob likes tea.\n")
    answer = session_start(clone, bob(tmp_path, SYSTEM_PATH), now)
    assert str(clone / CHOICE) in answer["systemMessage"] and "'gpt-9'" in answer["systemMessage"]
    assert "Bob likes tea" in answer["hookSpecificOutput"]["additionalContext"]


def test_claude_status_shows_the_committed_choice(committed, runner):
    report = json.loads(runner.invoke(main, ["claude", "status", "--json"]).output)
    assert report["team_synthesizer"] == {
        "name": "claude-code",
        "file": str(committed / CHOICE),
    }


@pytest.mark.cli
@pytest.mark.slow
def test_a_teammates_clone_dreams_with_the_installers_backend(
    committed, tmp_path, runner, monkeypatch
):
    """Another HOME, the same dreamer, the real Claude Code CLI found on the teammate's PATH:
    the first session takes up the committed choice and the next dream is written through
    the claude CLI against the fake Messages API; without the CLI, one line says how to opt in."""
    real = claude_cli()
    clone, bin_dir = teammate(tmp_path)
    (bin_dir / "claude").symlink_to(real)
    api = FakeAnthropic()

    def answer(request) -> Scripted:  # the session's turns get text, the dream its schema
        if "dream worker" in json.dumps(request.json.get("system", "")):
            block = {"type": "tool_use", "id": "t1", "name": "StructuredOutput", "input": STATE}
            return Scripted(200, message_body([block], stop_reason="tool_use"))
        return Scripted(200, message_body([{"type": "text", "text": "Hello."}]))

    for _ in range(40):
        api.push(answer)
    with api.serve() as base_url:
        events = claude_session(clone, f"{bin_dir}:{SYSTEM_PATH}", base_url)
        assert all(e["exit_code"] == 0 for e in events if e.get("subtype") == "hook_response")
        ws_root = clone.parent / "ws"
        assert 'synthesizer = "claude-code"' in (ws_root / "dreamer.toml").read_text()
        # The teammate's next dream, as their scheduler or `dream run` starts it.
        home = clone.parent / "home"
        for name, value in {
            "HOME": str(home),
            "PATH": f"{bin_dir}:{SYSTEM_PATH}",
            "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-test-0000",
        }.items():
            monkeypatch.setenv(name, value)
        with Workspace.open(ws_root) as ws:
            ws.note("Bob prefers tea to coffee", importance=0.7)
        result = _dream_when_free(runner, ws_root)
    assert result.exit_code == 0, result.output
    assert "claude-code" in result.output
    with Workspace.open(ws_root) as ws:
        entry = ws.store.journal.dream_entries(1)[0]
        assert (entry["synthesizer"], entry["outcome"]) == ("claude-code", "committed")
    assert any("dream worker" in json.dumps(r.json.get("system", "")) for r in api.requests)

    # A teammate with dreamer but without Claude Code's CLI on PATH: told how to opt in.
    carol = tmp_path / "carol"
    shutil.copytree(clone, carol / "clone")
    (carol / "bin").mkdir()
    shutil.copy2(bin_dir / "dream", carol / "bin" / "dream")
    with api.serve() as base_url:
        events = claude_session(carol / "clone", f"{carol / 'bin'}:{SYSTEM_PATH}", base_url)
    (start,) = [
        e
        for e in events
        if e.get("hook_event") == "SessionStart" and e.get("subtype") == "hook_response"
    ]
    assert start["exit_code"] == 0 and start["outcome"] == "success"
    said = json.loads(start["stdout"])["systemMessage"]
    assert "no 'claude' command" in said and "npm install -g @anthropic-ai/claude-code" in said
    assert (
        not (carol / "ws" / "dreamer.toml").exists()
        or "claude-code" not in (carol / "ws" / "dreamer.toml").read_text()
    )


def _dream_when_free(runner, root: Path):
    """`dream run --force`, once the session's background capture has let the workspace go."""
    import time

    deadline = time.monotonic() + 60
    while True:
        result = runner.invoke(main, ["run", "--force", "-w", str(root)])
        if "already running" not in result.output or time.monotonic() > deadline:
            return result
        time.sleep(0.5)


@pytest.mark.slow
def test_a_capture_takes_up_the_choice_and_logs_it_once(committed, tmp_path, now):
    """The first session's capture (PreCompact here) takes the choice up before any dream can
    run, and says so in hooks.log; a teammate without the CLI gets no line per capture there."""
    import io

    clone, _ = teammate(tmp_path)
    payload = json.dumps({"session_id": "s1", "cwd": str(clone), "hook_event_name": "PreCompact"})
    without = bob(tmp_path, SYSTEM_PATH, DREAM_WORKSPACE=str(tmp_path / "carol-ws"))
    for _ in range(2):
        hooks.run("pre-compact", io.StringIO(payload), io.StringIO(), now, without)
    log = tmp_path / "carol-ws" / "memory" / "hooks.log"
    assert not log.exists() or "synthesizer" not in log.read_text()

    path = f"{stand_in_claude(tmp_path / 'bob' / 'bin')}:{SYSTEM_PATH}"
    for _ in range(2):
        hooks.run("pre-compact", io.StringIO(payload), io.StringIO(), now, bob(tmp_path, path))
    assert 'synthesizer = "claude-code"' in (tmp_path / "ws" / "dreamer.toml").read_text()
    written = (tmp_path / "ws" / "memory" / "hooks.log").read_text()
    assert written.count("now written by claude-code") == 1
