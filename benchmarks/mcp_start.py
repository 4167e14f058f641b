"""How fast ``dream mcp`` is ready, and whether Claude Code's first request carries its tools.

    python benchmarks/mcp_start.py [--runs 20] [--sessions 20] [--claude PATH]

Part 1: ``--runs`` fresh ``dream mcp`` processes; each is sent ``initialize`` at once, then
``tools/list``: the time from the process's start to each answer (p50, p90), beside bare
Python's start (``python -c pass``) and the time to import the MCP SDK server module (what
``dream mcp`` no longer waits for). CPU time too: the server's own (user + system, read from
``/proc`` when its answer arrives, on Linux) against bare Python's. ``--before DIR`` runs a
second checkout's ``dreamer`` (a folder holding ``dreamer/``, ``prompts/`` and ``schemas/``)
in the same rounds, one process of each in turn, so that both see the same load.

Part 2 (needs the Claude Code CLI: ``--claude`` or DREAM_CLAUDE_CLI): ``--sessions`` fresh
headless sessions (``claude -p``, each in a new home) with ``dream mcp`` as their only MCP
server, against a loopback fake of the Messages API (tests/fake_anthropic.py); it counts the
sessions whose first request for the prompt carries dreamer's tools (``mcp__dreamer__*``)
and its instructions. No network: everything runs on 127.0.0.1. Figures go in
docs/contributing/bench.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "mcp_start", "version": "1"},
    },
}
PROMPT = "Remember that the kiln keys are in the blue drawer."


def _line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _p(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _show(name: str, times: list[float]) -> None:
    print(
        f"{name:<34} p50 {statistics.median(times):5.0f} ms  p90 {_p(times, 0.9):5.0f} ms"
        f"  ({len(times)} fresh processes)"
    )


def _cpu_ms(pid: int) -> float | None:
    """A running process's CPU time so far (user + system), where /proc tells it."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def starts(
    ws: str, runs: int, env: dict[str, str], cpu: list[float] | None = None
) -> tuple[list[float], list[float]]:
    """Milliseconds from spawning ``dream mcp`` to its initialize and tools/list answers (and,
    into ``cpu``, the server's CPU time when initialize was answered)."""
    ready, listed = [], []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "dreamer.cli", "mcp", "-w", ws],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdin and proc.stdout
        proc.stdin.write(_line(INITIALIZE))
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        ready.append((time.perf_counter() - start) * 1000)
        used = _cpu_ms(proc.pid)
        if cpu is not None and used is not None:
            cpu.append(used)
        assert answer["result"]["serverInfo"]["name"] == "dreamer", answer
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        proc.stdin.flush()
        tools = json.loads(proc.stdout.readline())["result"]["tools"]
        listed.append((time.perf_counter() - start) * 1000)
        assert any(t["name"] == "memory_search" for t in tools)
        proc.stdin.close()
        proc.wait(timeout=60)
    return ready, listed


def python_starts(
    code: str, runs: int, env: dict[str, str], cpu: list[float] | None = None
) -> list[float]:
    """Wall milliseconds of ``python -c code`` (and its CPU time, into ``cpu``)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        times.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if cpu is not None:
            spent = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
            cpu.append(spent * 1000)
    return times


def sessions(claude: str, count: int, tmp: Path) -> list[bool]:
    """For each fresh headless session: did its first request carry dreamer's tools?"""
    sys.path.insert(0, str(ROOT / "tests"))
    from fake_anthropic import FakeAnthropic

    fake = FakeAnthropic()
    for _ in range(count * 8):  # the prompt's answer, plus any side request the CLI makes
        fake.text("Noted.")
    dream = str(Path(sys.executable).with_name("dream"))
    carried = []
    with fake.serve() as base_url:
        for i in range(count):
            home = tmp / f"home{i}"
            home.mkdir()
            config = tmp / f"mcp{i}.json"
            server = {"command": dream, "args": ["mcp", "-w", str(tmp / f"ws{i}")]}
            config.write_text(json.dumps({"mcpServers": {"dreamer": server}}))
            env = {
                "PATH": os.environ.get("PATH", ""),
                "PYTHONPATH": str(ROOT),  # the server runs this checkout's dreamer
                "HOME": str(home),
                "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                "ANTHROPIC_BASE_URL": base_url,
                "ANTHROPIC_API_KEY": "sk-ant-test-0000",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
            before = len(fake.requests)
            done = subprocess.run(
                [claude, "-p", PROMPT, "--mcp-config", str(config), "--strict-mcp-config"],
                env=env,
                cwd=home,
                capture_output=True,
                text=True,
                timeout=180,
            )
            if done.returncode != 0:
                raise SystemExit(f"claude -p failed: {done.stderr.strip()[-500:]}")
            asked = [r.json for r in fake.requests[before:] if PROMPT in r.text()]
            first = asked[0] if asked else {}
            names = {t.get("name", "") for t in first.get("tools", [])}
            has_tools = "mcp__dreamer__working_memory_note" in names
            has_instructions = "dreamer is this agent's long-term memory" in json.dumps(first)
            carried.append(has_tools and has_instructions)
    return carried


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--claude", default=os.environ.get("DREAM_CLAUDE_CLI"))
    parser.add_argument("--before", type=Path, help="another checkout, measured alongside")
    opts = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cpu, {platform.platform()}, "
        f"Python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        ws = str(Path(tmp) / "ws")
        subprocess.run(
            [sys.executable, "-m", "dreamer.cli", "init", "-w", ws],
            env=env,
            check=True,
            capture_output=True,
        )
        versions = {"": env}
        if opts.before:
            versions[" (before)"] = {**os.environ, "PYTHONPATH": str(opts.before.resolve())}
        bare, bare_cpu = [], []
        walls: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in versions}
        cpus: dict[str, list[float]] = {k: [] for k in versions}
        for _ in range(opts.runs):  # one of each per round: the same load for all
            bare += python_starts("pass", 1, env, bare_cpu)
            for tag, version_env in versions.items():
                ready, listed = starts(ws, 1, version_env, cpus[tag])
                walls[tag][0].extend(ready)
                walls[tag][1].extend(listed)
        _show("python -c pass", bare)
        floor = statistics.median(bare_cpu)
        print(f"{'python -c pass, CPU':<34} p50 {floor:5.0f} ms")
        for tag, (ready, listed) in walls.items():
            _show(f"dream mcp: initialize answered{tag}", ready)
            _show(f"dream mcp: tools/list answered{tag}", listed)
            if cpus[tag]:
                used = statistics.median(cpus[tag])
                print(
                    f"{'dream mcp: CPU at initialize' + tag:<34} p50 {used:5.0f} ms"
                    f"  {used / floor:4.1f}x bare Python's CPU"
                )
        _show(
            "import dreamer.agents.mcp (the SDK)",
            python_starts("import dreamer.agents.mcp", opts.runs, env),
        )
        if not opts.claude or opts.sessions == 0:
            print("Claude Code sessions: skipped (no --claude / DREAM_CLAUDE_CLI)")
            return
        carried = sessions(opts.claude, opts.sessions, Path(tmp))
        print(
            f"Claude Code headless sessions whose first request carries dreamer's tools and "
            f"instructions: {sum(carried)} of {len(carried)}"
        )


if __name__ == "__main__":
    main()
