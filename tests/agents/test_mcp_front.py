"""`dream mcp` is ready at once: its front answers the handshake and the listings before the MCP
SDK is loaded, hands the connection over to the SDK server intact, and ends on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from claude_cli import cli_path, isolate
from fake_anthropic import FakeAnthropic
from mcp_session import dream_command
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from dreamer import Workspace
from dreamer.agents import mcp_front, tools

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LISTINGS = ["tools/list", "prompts/list", "resources/list", "resources/templates/list"]


def initialize(version: str = "2025-06-18", ident: object = 0) -> dict:
    client = {"name": "t", "version": "1"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return {"jsonrpc": "2.0", "id": ident, "method": "initialize", "params": params}


class Server:
    """`dream mcp` as a subprocess spoken to line by line."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [dream_command(), "mcp", "-w", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, *messages: dict) -> None:
        assert self.proc.stdin
        for message in messages:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 30) -> dict:
        """The server's next line, or a failure (and the server ended) when none comes."""
        assert self.proc.stdout
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(self.proc.stdout.readline()))
        reader.daemon = True
        reader.start()
        reader.join(timeout)
        if not got:
            self.proc.kill()
            raise AssertionError(f"dream mcp said nothing in {timeout} s")
        return json.loads(got[0])

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin and self.proc.stderr
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        return code, self.proc.stderr.read().decode()


def test_the_front_and_the_sdk_server_give_the_same_answers(tmp_path):
    root = tmp_path / "ws"
    server = Server(root)
    server.send(initialize(), {"jsonrpc": "2.0", "method": "notifications/initialized"})
    front = {"initialize": server.answer()}
    for i, method in enumerate(LISTINGS, start=1):
        server.send({"jsonrpc": "2.0", "id": i, "method": method})
        front[method] = server.answer()
    # A tool call needs the SDK server: the connection is handed over, the handshake replayed.
    call = {"name": "memory_search", "arguments": {"query": "kiln keys"}}
    server.send({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": call})
    searched = server.answer()
    sdk = {}
    for i, method in enumerate(LISTINGS, start=11):
        server.send({"jsonrpc": "2.0", "id": i, "method": method})
        sdk[method] = server.answer()
    code, stderr = server.close()
    # A connection that starts with a ping goes to the SDK server at once: its own handshake.
    other = Server(root)
    other.send({"jsonrpc": "2.0", "id": "p", "method": "ping"}, initialize(ident="i"))
    pong, again = other.answer(), other.answer()
    other.close()

    assert code == 0 and "Traceback" not in stderr
    assert searched["id"] == 10 and searched["result"]["isError"] is False
    for method in LISTINGS:
        assert front[method]["result"] == sdk[method]["result"], method
    assert len(sdk["tools/list"]["result"]["tools"]) == len(tools.TOOL_NAMES) == 7
    result = front["initialize"]["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["instructions"] == mcp_front.INSTRUCTIONS
    assert pong["id"] == "p" and again["id"] == "i"
    # An initialize the SDK server refuses is refused the same way, by it.
    bad = Server(root)
    bad.send({**initialize(), "params": {"protocolVersion": "2025-06-18"}})
    refused = bad.answer()
    bad.close()
    assert refused["error"]["code"] == -32602
    assert again["result"] == result


def test_the_fronts_revisions_are_the_sdks():
    assert mcp_front.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    unknown = mcp_front.initialize_result({"protocolVersion": "1999-01-01"}, "0")
    assert unknown["protocolVersion"] == HANDSHAKE_PROTOCOL_VERSIONS[-1]


PROBE = """
import json, os, sys
from dreamer import Workspace
from dreamer.agents import mcp_front, tools
from dreamer.memory.workspace import Workspace

read_fd, write_fd = os.pipe()
out_read, out_write = os.pipe()
lines = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "memory_search"}},
]
os.write(write_fd, "".join(json.dumps(m) + "\\n" for m in lines).encode())
wire = mcp_front.Wire(read_fd, os.fdopen(out_write, "wb"))
loader = mcp_front.Loader("never_loads")  # an SDK import that takes minutes
first, ws = mcp_front.front(wire, loader, lambda: Workspace.open(sys.argv[1]), "0")
wire.out.close()
answers = [json.loads(line) for line in os.fdopen(out_read).read().splitlines()]
heavy = [m for m in ("mcp", "mcp_types", "pydantic", "anyio") if m in sys.modules]
print(json.dumps({"answered": [a["id"] for a in answers], "first": [json.loads(f) for f in first],
                  "heavy": heavy}))
"""


def test_the_handshake_and_tool_list_load_no_sdk(tmp_path):
    (tmp_path / "never_loads.py").write_text("import time\ntime.sleep(600)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE), str(tmp_path / "ws")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["heavy"] == []
    assert found["answered"] == [1, 2, 3]  # the tool call waits for the server
    replayed, initialized, call = found["first"]
    assert replayed["id"] == mcp_front.REPLAY_ID and replayed["method"] == "initialize"
    assert initialized["method"] == "notifications/initialized"
    assert call["id"] == 4


def test_a_client_the_front_listed_for_still_hears_of_changes(tmp_path):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        ws.init()
    server = Server(root)
    server.send(initialize(), {"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.answer()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "resources/list"})
    assert "resources" in server.answer()["result"]  # the front's answer
    # A request no handler of which notes the session: the hand-over, and the watcher runs.
    prompt = {"name": "bootstrap", "arguments": {}}
    server.send({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": prompt})
    assert server.answer()["id"] == 2
    with Workspace.open(root) as ws:  # another process notes something
        ws.note("the kiln keys are in the blue drawer")
    heard = server.answer(timeout=15)  # the watcher looks once a second
    server.close()
    assert heard["method"] == "notifications/resources/list_changed"


def test_a_new_workspace_is_noted_in_its_log_not_on_stderr(tmp_path):
    root = tmp_path / "fresh" / "ws"
    server = Server(root)
    server.send(initialize(), {"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.answer()
    call = {"name": "memory_search", "arguments": {"query": "kiln"}}
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    assert server.answer()["result"]["isError"] is False
    code, stderr = server.close()
    assert code == 0 and stderr == ""
    log = (root / "memory" / "hooks.log").read_text()
    assert f"mcp: created a new dreamer workspace at {root}" in log


@pytest.mark.parametrize("phase", ["front", "server"])
def test_ctrl_c_ends_dream_mcp_at_once_and_quietly(tmp_path, phase):
    with Workspace.open(tmp_path / "ws") as ws:
        ws.init()
    server = Server(tmp_path / "ws")
    server.send(initialize())
    server.answer()
    if phase == "server":
        call = {"name": "memory_search", "arguments": {"query": "kiln"}}
        server.send(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
        )
        assert server.answer()["id"] == 1  # served by the SDK server now
    server.proc.send_signal(signal.SIGINT)
    code = server.proc.wait(timeout=5)
    assert code == 130
    assert server.proc.stderr and server.proc.stderr.read() == b""


@pytest.mark.cli
def test_headless_claude_code_sessions_get_the_tools_in_their_first_request(tmp_path, monkeypatch):
    claude = cli_path()
    fake = FakeAnthropic()
    for _ in range(12):
        fake.text("Noted.")
    prompt = "Remember that the kiln keys are in the blue drawer."
    with fake.serve() as base_url:
        for i in range(2):
            isolate(monkeypatch, tmp_path / f"home{i}", base_url)
            config = tmp_path / f"mcp{i}.json"
            server = {"command": dream_command(), "args": ["mcp", "-w", str(tmp_path / "ws")]}
            config.write_text(json.dumps({"mcpServers": {"dreamer": server}}))
            before = len(fake.requests)
            done = subprocess.run(
                [claude, "-p", prompt, "--mcp-config", str(config), "--strict-mcp-config"],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=180,
            )
            assert done.returncode == 0, done.stderr
            (first, *_) = [r.json for r in fake.requests[before:] if prompt in r.text()]
            names = {tool["name"] for tool in first["tools"]}
            assert "mcp__dreamer__working_memory_note" in names
            # The server's instructions, in the system prompt or a message.
            assert "dreamer is this agent's long-term memory" in json.dumps(first)
