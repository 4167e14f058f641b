"""The progress line of long commands: counts and the time left on a terminal, nothing when
stderr is a pipe, a file or a test's capture, nothing with -q."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys

import pytest

from dreamer import Workspace
from dreamer.agents import export
from dreamer.cli import main
from dreamer.cli.progress import ProgressLine
from dreamer.store import NewCrystal


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_on_a_terminal_the_line_shows_counts_and_the_time_left():
    stream, clock = Terminal(), Clock()
    with ProgressLine("Importing", stream=stream, clock=clock) as progress:
        progress(0, 4_000)
        clock.now += 10
        progress(1_000, 4_000)  # 100 a second: 3,000 more take 30 s
        clock.now += 0.05
        progress(1_001, 4_000)  # too soon to draw again
        clock.now += 10
        progress(4_000, 4_000)
    drawn = stream.getvalue().split("\r")
    assert drawn[1].strip() == "Importing: 0/4,000 (0%)"
    assert drawn[2].strip() == "Importing: 1,000/4,000 (25%), about 30 s left"
    assert drawn[3].strip() == "Importing: 4,000/4,000 (100%)"  # the last one always
    assert drawn[3].endswith("\n")  # then the line ends: what follows starts on its own
    assert len(drawn) == 4


def test_the_estimate_follows_the_recent_pace():
    stream, clock = Terminal(), Clock()
    progress = ProgressLine("Embedding", stream=stream, clock=clock)
    for done in range(0, 1_001, 100):  # fast at first: 100 a second
        progress(done, 2_000)
        clock.now += 1
    for done in range(1_010, 1_200, 10):  # then 10 a second for a minute
        clock.now += 1
        progress(done, 2_000)
    clock.now += 60
    progress(1_800, 2_000)
    assert stream.getvalue().rsplit("\r", 1)[-1].strip().endswith("about 20 s left")


def test_nothing_is_written_to_a_pipe_or_when_quiet():
    for stream, quiet in ((io.StringIO(), False), (Terminal(), True)):
        with ProgressLine("Importing", stream=stream, quiet=quiet) as progress:
            progress(1, 2)
            progress(2, 2)
        assert stream.getvalue() == "", quiet


def _export_file(tmp_path, now, count):
    with Workspace.open(tmp_path / "from", overrides={"embedder": "hashing"}) as ws:
        ws.init()
        ws.store.crystals.add_crystals(
            [
                NewCrystal(
                    f"Kiln batch {i} fired at cone six on shelf {i % 7}",
                    importance=0.5,
                    source="scratch",
                    semantic_type="experience",
                    at=now,
                )
                for i in range(count)
            ]
        )
        export.export_all(ws, tmp_path / "all.jsonl", now)
    return tmp_path / "all.jsonl"


def test_import_export_reindex_print_no_progress_when_not_a_terminal(tmp_path, now, runner):
    exported = _export_file(tmp_path, now, 50)
    env = {"DREAM_EMBEDDER": "hashing"}
    commands = [
        ["import", str(exported), "-w", str(tmp_path / "to")],
        ["export", "--all", "--to", str(tmp_path / "again.jsonl"), "-w", str(tmp_path / "to")],
        ["reindex", "-w", str(tmp_path / "to")],
        ["redact", "--scan", "-w", str(tmp_path / "to")],
    ]
    for args in commands:
        result = runner.invoke(main, args, env=env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert "\r" not in result.output and "%)" not in result.output, args


@pytest.mark.slow
def test_dream_import_of_2000_crystals_shows_progress_on_a_terminal(tmp_path, now):
    exported = _export_file(tmp_path, now, 2_000)
    parent, child = pty.openpty()  # stderr a real terminal, stdout a pipe
    env = {**os.environ, "DREAM_EMBEDDER": "hashing", "DREAM_WORKSPACE": ""}
    process = subprocess.Popen(
        [sys.executable, "-m", "dreamer.cli", "import", str(exported), "-w", str(tmp_path / "to")],
        stdout=subprocess.PIPE,
        stderr=child,
        env=env,
    )
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(parent)
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0, seen.decode(errors="replace")
    assert "Imported" in out.decode() and b"Importing" not in out
    lines = [part.strip() for part in seen.decode().split("\r") if "Importing" in part]
    assert lines[-1] == "Importing: 4,001/4,001 (100%)"  # 2,001 records, then 2,000 vectors
    assert all(
        re.fullmatch(r"Importing: [\d,]+/4,001 \(\d+%\)(, about .+ left)?", x) for x in lines
    )
