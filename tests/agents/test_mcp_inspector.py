"""`dream mcp` checked by the official MCP Inspector in CLI mode (a Node program, not our code).

The Inspector is found at `$DREAM_MCP_INSPECTOR` (CI installs a pinned version from npm into
its work folder and sets it) or as `mcp-inspector` on PATH. Where it is not installed these
tests skip with that reason; with `DREAM_REQUIRE_INSPECTOR=1` (CI) that is a failure instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from mcp_session import dream_command

from dreamer import Workspace

pytestmark = pytest.mark.cli


def inspector() -> str:
    found = os.environ.get("DREAM_MCP_INSPECTOR") or shutil.which("mcp-inspector")
    if not found or not os.access(found, os.X_OK):
        reason = "the MCP Inspector is not installed (npm install @modelcontextprotocol/inspector)"
        if os.environ.get("DREAM_REQUIRE_INSPECTOR") == "1":
            pytest.fail(reason + ", and DREAM_REQUIRE_INSPECTOR=1")
        pytest.skip(reason)
    return found


def inspect(root, *method: str) -> dict:
    done = subprocess.run(
        [inspector(), "--cli", dream_command(), "mcp", "-w", str(root), "--method", *method],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def root(tmp_path):
    with Workspace.open(tmp_path / "ws") as ws:
        ws.note("Ada prefers dark mode in every editor", importance=0.8)
    return tmp_path / "ws"


def test_the_inspector_lists_the_tools_with_annotations_and_output_schemas(root):
    listed = {tool["name"]: tool for tool in inspect(root, "tools/list")["tools"]}
    assert set(listed) == {
        "working_memory_note",
        "memory_search",
        "memory_get",
        "memory_feel",
        "memory_forget",
        "memory_held",
        "memory_accept",
    }
    assert listed["memory_search"]["annotations"]["readOnlyHint"] is True
    assert listed["memory_held"]["annotations"]["readOnlyHint"] is True
    assert listed["memory_accept"]["annotations"]["destructiveHint"] is True
    assert listed["memory_get"]["annotations"]["readOnlyHint"] is True
    assert listed["memory_forget"]["annotations"]["destructiveHint"] is True
    assert all(
        tool["title"] and tool["outputSchema"]["type"] == "object" for tool in listed.values()
    )


def test_the_inspector_lists_the_crystal_template_and_calls_a_tool(root):
    templates = inspect(root, "resources/templates/list")["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["dreamer://crystal/{id}"]
    found = inspect(root, "tools/call", "--tool-name", "memory_search", "--tool-arg", "query=dark")
    assert found["isError"] is False
    assert (
        found["structuredContent"]["results"][0]["text"] == "Ada prefers dark mode in every editor"
    )
