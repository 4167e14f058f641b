"""Owner-only, always: under umask 000 every file a workspace holds is 0600, every folder 0700."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

DREAM = [sys.executable, "-c", "from dreamer.cli import main; main()"]


def dream(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `dream` as a fresh process with umask 000 (the most permissive a user can set)."""
    env = {**os.environ, "DREAM_WORKSPACE": ""}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run(
        [*DREAM, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.umask(0),
    )


def modes(root: Path) -> dict[str, str]:
    out = {}
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        want = 0o700 if path.is_dir() else 0o600
        if mode != want:
            out[str(path.relative_to(root.parent))] = oct(mode)
    return out


def test_every_command_that_writes_leaves_owner_only_files(tmp_path):
    demo = tmp_path / "demo"
    assert dream("demo", str(demo), cwd=tmp_path).returncode == 0
    ws = tmp_path / "ws"
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(
        json.dumps({"role": "user", "content": "hello"})
        + "\n"
        + json.dumps({"role": "assistant", "content": "hi there"})
        + "\n"
    )
    hand = tmp_path / "hand"
    hand.mkdir()
    hand.chmod(0o777)
    (hand / "MEMORY.md").write_text("# My notes\n\nAda likes tea.\n")
    steps = [
        ("init", "-w", str(ws)),
        ("note", "-w", str(ws), "The staging password is Hunter22-x!"),
        ("note", "-w", str(ws), "Maya prefers concise answers"),
        ("feel", "cortisol", "0.8", "--reason", "outage", "-w", str(ws)),
        ("ingest", str(transcript), "-w", str(ws)),
        ("run", "--force", "-w", str(ws)),
        ("consolidate", "-w", str(ws)),
        ("tick", "-w", str(ws)),
        ("restore", "1", "-w", str(ws)),
        ("forget", "1", "-w", str(ws)),
        ("reindex", "-w", str(ws)),
        ("redact", "--scan", "-w", str(ws)),
        ("migrate", "-w", str(hand)),
    ]
    for step in steps:
        result = dream(*step, cwd=tmp_path)
        assert result.returncode == 0, (step, result.stderr)
    assert modes(demo) == {}
    assert modes(ws) == {}
    # The folder and the MEMORY.md the user made are theirs, untouched by a migration; what
    # dreamer made beside them (the backup, memory/) is owner-only.
    assert stat.S_IMODE(hand.stat().st_mode) == 0o777
    assert (hand / "MEMORY.md.seed-backup").exists()
    assert {k: v for k, v in modes(hand).items() if k not in ("hand", "hand/MEMORY.md")} == {}
