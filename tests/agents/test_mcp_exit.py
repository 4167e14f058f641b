"""`dream mcp` leaves promptly once its client closes stdin: after a handshake the front
answered alone (the MCP SDK still loading), and after a tool call the SDK server answered."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

LEAVES_WITHIN = 3.0  # seconds after stdin closes; it used to take 5 to 12 (the SDK's import)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "memory_search", "arguments": {"query": "editor theme"}},
}


def _session(tmp_path, *requests: dict) -> subprocess.CompletedProcess:
    """Send each message (reading the answer of each request), close stdin, wait at most
    LEAVES_WITHIN seconds for the server to exit."""
    server = subprocess.Popen(
        [sys.executable, "-m", "dreamer.cli", "mcp", "-w", str(tmp_path / "ws")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        for message in requests:
            server.stdin.write(json.dumps(message).encode() + b"\n")
            server.stdin.flush()
            if "id" in message:
                answer = json.loads(server.stdout.readline())
                assert answer["id"] == message["id"] and "result" in answer, answer
        server.stdin.close()
        code = server.wait(timeout=LEAVES_WITHIN)  # raises TimeoutExpired when it lingers
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return subprocess.CompletedProcess(
        server.args, code, server.stdout.read(), server.stderr.read()
    )


@pytest.mark.parametrize(
    "requests",
    [(INITIALIZE, INITIALIZED), (INITIALIZE, INITIALIZED, LIST), (INITIALIZE, INITIALIZED, CALL)],
    ids=["handshake", "listing", "tool-call"],
)
def test_dream_mcp_exits_promptly_when_stdin_closes(tmp_path, requests):
    done = _session(tmp_path, *requests)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
