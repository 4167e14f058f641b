"""Driving `dream mcp` as a subprocess with the official MCP client over stdio (shared by the
MCP, plugin, hooks and bounded-input tests)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import anyio
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def dream_command() -> str:
    beside_python = Path(sys.executable).with_name("dream")
    found = str(beside_python) if beside_python.exists() else shutil.which("dream")
    assert found, "the dream command is not installed (pip install -e .)"
    return found


def run_session(
    tmp_path: Path,
    root: Path,
    scenario,
    *,
    era: str = "handshake",
    on_message=None,
    env: dict[str, str] | None = None,
) -> None:
    """Start `dream mcp -w root`, run scenario(client) against it, then let it exit.

    era "handshake": ClientSession with the initialize handshake (protocol <= 2025-11-25);
    era "modern": the high-level Client, which negotiates 2026-07-28 over the same stdio.
    """
    params = StdioServerParameters(command=dream_command(), args=["mcp", "-w", str(root)], env=env)

    async def main() -> None:
        with (tmp_path / "server-stderr.log").open("w") as errlog:
            if era == "modern":
                async with Client(stdio_client(params, errlog=errlog)) as client:
                    assert client.protocol_version == "2026-07-28"
                    with anyio.fail_after(30):
                        await scenario(client)
                return
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, message_handler=on_message) as session:
                    await session.initialize()
                    with anyio.fail_after(30):
                        await scenario(session)

    anyio.run(main)


def text_of(result) -> str:
    assert len(result.content) == 1
    return result.content[0].text
