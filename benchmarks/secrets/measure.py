"""The secret corpus through dreamer's five doors, and what lands where.

Run from the repository root: ``python benchmarks/secrets/measure.py``. For each door (``dream
note`` on the command line, ``Workspace.note``, the SDK tool handler, ingest of a Claude Code
transcript, the MCP tool over stdio) it writes the 107 secret notes (one by one) and the 300
ordinary notes (ten lines to a note) of benchmarks/secrets/corpus.py into a fresh workspace,
dreams (offline), writes the bootstrap block and report.html, then counts the secret kinds
whose value is found in MEMORY.md, in the database files (crystals.db and its WAL), in the
bootstrap, in report.html, and the ordinary notes that were altered. Then the cost: redact()
p50/p95 per corpus note, and a cold import.

tests/support/test_secrets_corpus.py runs the same doors and asserts no leak and few false
positives.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


corpus = _load("secrets_corpus", Path(__file__).with_name("corpus.py"))

DOORS = ("cli", "api", "tool", "ingest", "mcp")
NOW = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)


def write(door: str, root: Path, notes: Sequence[str], now: datetime = NOW) -> None:
    """Write every note into the workspace at ``root`` through ``door``."""
    from dreamer import Workspace

    if door == "cli":
        from click.testing import CliRunner

        from dreamer.cli import main

        runner = CliRunner()
        for i, text in enumerate(notes):
            at = (now - timedelta(minutes=len(notes) - i)).isoformat()
            done = runner.invoke(main, ["note", "-w", str(root), "--at", at, "--", text])
            assert done.exit_code == 0, done.output
        return
    if door == "mcp":
        _mcp(root, notes)
        return
    with Workspace.open(root) as ws:
        if door == "api":
            for i, text in enumerate(notes):
                ws.note(text, at=now - timedelta(minutes=len(notes) - i))
        elif door == "tool":
            from dreamer.agents import tools

            for i, text in enumerate(notes):
                call = {"id": f"t{i}", "name": "working_memory_note", "input": {"note": text}}
                result = tools.handle(ws, call, now=now - timedelta(minutes=len(notes) - i))
                assert not result["is_error"], result
        elif door == "ingest":
            from claude_code_fixture import SESSION, Session, text_block

            from dreamer.agents.ingest import ingest

            session = Session(SESSION, "main")
            for i, text in enumerate(notes):
                session.user(text)
                session.reply(f"msg_{i:04d}", text_block("Noted."), stop="end_turn")
            path = session.write(root.parent / f"{root.name}-project" / f"{SESSION}.jsonl")
            report = ingest(ws, [path], now)
            assert not report.failed, report
        else:
            raise ValueError(f"no door {door!r}")


def _mcp(root: Path, notes: Sequence[str]) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    beside = Path(sys.executable).with_name("dream")
    command = str(beside) if beside.exists() else shutil.which("dream")
    assert command, "the dream command is not installed (pip install -e .)"
    params = StdioServerParameters(command=command, args=["mcp", "-w", str(root)])

    async def session() -> None:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write_):
                async with ClientSession(read, write_) as client:
                    await client.initialize()
                    for text in notes:
                        result = await client.call_tool("working_memory_note", {"note": text})
                        assert not result.is_error, result

    anyio.run(session)


def finish(root: Path, now: datetime = NOW) -> dict[str, str]:
    """Dream (offline), then the texts a reader gets: MEMORY.md, bootstrap, report.html."""
    from click.testing import CliRunner

    from dreamer import Workspace, run_dream
    from dreamer.agents.bootstrap import bootstrap_block
    from dreamer.cli import main
    from dreamer.dream.synth.offline import OfflineSynthesizer

    with Workspace.open(root) as ws:
        result = run_dream(ws, now=now, force=True, synthesizer=OfflineSynthesizer())
        assert result.committed, result.reason
        block = bootstrap_block(ws, context_window=200_000, now=now)
        memory = ws.memory_md.read_text(encoding="utf-8")
    report = root / "memory" / "report.html"
    done = CliRunner().invoke(main, ["report", "-w", str(root), "-o", str(report)])
    assert done.exit_code == 0, done.output
    return {"MEMORY.md": memory, "bootstrap": block, "report.html": report.read_text()}


def database_bytes(root: Path) -> bytes:
    """crystals.db with its WAL and shared memory, as stored."""
    return b"".join(p.read_bytes() for p in sorted(root.rglob("crystals.db*")) if p.is_file())


def pieces(value: str) -> list[str]:
    """What must not be found of a secret: the value, and each long line of a multi-line one."""
    lines = [line for line in value.splitlines() if len(line) >= 16 and "-----" not in line]
    return [value] + (lines if len(lines) > 1 else [])


def leaked(blob: str | bytes, cases: Sequence[Any]) -> list[str]:
    """The kinds some piece of whose value is in ``blob``."""
    data = blob.encode() if isinstance(blob, str) else blob
    return [c.kind for c in cases if any(p.encode() in data for p in pieces(c.value))]


def stored_texts(root: Path) -> list[str]:
    """The crystals' texts, oldest first."""
    from dreamer import Workspace

    with Workspace.open(root) as ws:
        return [c.text for c in sorted(ws.store.crystals.select(), key=lambda c: c.id)]


def notes() -> list[str]:
    """What a door writes: each secret note alone, the ordinary notes ten lines to a note (the
    detector reads each line the same either way; a door costs a third of the time)."""
    ordinary = corpus.ordinary()
    batches = ["\n".join(ordinary[i : i + 10]) for i in range(0, len(ordinary), 10)]
    return [case.note for case in corpus.secrets()] + batches


def altered(door: str, root: Path, ordinary: Sequence[str]) -> list[str]:
    """The ordinary notes that did not come through unchanged (``door`` is for the record:
    every door must keep every line of them verbatim)."""
    whole = "\n".join(stored_texts(root))
    return [note for note in ordinary if note not in whole]


def run_door(door: str, root: Path) -> dict[str, Any]:
    """The whole corpus through one door: leaks by place, altered ordinary notes."""
    cases = corpus.secrets()
    ordinary = corpus.ordinary()
    write(door, root, notes())
    changed = altered(door, root, ordinary)
    places = finish(root)
    leaks = {place: leaked(text, cases) for place, text in places.items()}
    leaks["crystals.db"] = leaked(database_bytes(root), cases)
    return {"door": door, "kinds": len(cases), "leaks": leaks, "altered": changed}


def _speed() -> dict[str, float]:
    from dreamer.support.secrets import redact

    notes = [c.note for c in corpus.secrets()] + corpus.ordinary()
    for note in notes:
        redact(note)  # warm: every rule a note trips is compiled
    samples = []
    for _ in range(20):
        for note in notes:
            start = time.perf_counter()
            redact(note)
            samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return {
        "p50_ms": statistics.median(samples),
        "p95_ms": samples[int(len(samples) * 0.95)],
        "max_ms": samples[-1],
    }


COLD = """
import sys, time
# What a `dream note` process has imported before it redacts, whatever the detector.
import bisect, collections, dataclasses, functools, hashlib, json, math, pathlib, re, typing
import dreamer.support
t0 = time.perf_counter()
import dreamer.support.secrets as s
t1 = time.perf_counter()
s.redact("Deployed the billing service; the API key for staging was rotated on 2026-03-12.")
t2 = time.perf_counter()
s.redact("Paid with card 4111 1111 1111 1111; the token is ghp_x and pw=Blue-Sky-42")
t3 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000)
"""


def _cold(runs: int = 11) -> dict[str, float]:
    """Medians over fresh processes: the import, the first note, a second note (new rules)."""
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", COLD], capture_output=True, text=True, check=True, cwd=ROOT
        )
        samples.append([float(x) for x in done.stdout.split()])
    return {
        name: statistics.median(sample[i] for sample in samples)
        for i, name in enumerate(("import_ms", "first_note_ms", "second_note_ms"))
    }


def main() -> None:
    """Print the machine, the per-door table and the cost."""
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    cases, ordinary = corpus.secrets(), corpus.ordinary()
    print(f"corpus: {len(cases)} secret kinds, {len(ordinary)} ordinary notes")
    places = ("MEMORY.md", "crystals.db", "bootstrap", "report.html")
    print(f"{'door':8} " + " ".join(f"{p + ' leaks':>18}" for p in places) + "  altered")
    results = []
    for door in DOORS:
        with tempfile.TemporaryDirectory() as tmp:
            result = run_door(door, Path(tmp) / "ws")
        results.append(result)
        row = " ".join(f"{len(result['leaks'][p]):>18}" for p in places)
        print(f"{door:8} {row}  {len(result['altered'])} of {len(ordinary)}")
        for place in places:
            if result["leaks"][place]:
                print(f"  {place}: {', '.join(result['leaks'][place])}")
        for note in result["altered"]:
            print(f"  altered: {note}")
    speed = _speed()
    print(
        f"redact per corpus note: p50 {speed['p50_ms']:.3f} ms, p95 {speed['p95_ms']:.3f} ms, "
        f"max {speed['max_ms']:.3f} ms"
    )
    cold = _cold()
    print(
        f"cold: import {cold['import_ms']:.1f} ms, first note {cold['first_note_ms']:.1f} ms, "
        f"second note {cold['second_note_ms']:.1f} ms"
    )
    if "--json" in sys.argv:
        print(json.dumps({"doors": results, "speed": speed, "cold": cold}))


if __name__ == "__main__":
    main()
