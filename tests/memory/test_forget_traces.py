"""Forgotten means gone: no byte of a forgotten text stays in any file of the workspace (report,
seed backup, database, WAL, free pages), nor in the PostgreSQL database (lexemes included)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamer import Workspace, run_dream
from dreamer.cli import main
from dreamer.errors import LockHeld
from dreamer.store import NewCrystal

pytest_plugins = ["pg_fixture"]

TOKEN = "Zorbulax"  # one distinctive word, so that the full-text index holds it as a lexeme
LOCKER = f"Ada's gym locker code is {TOKEN} 7731"
HAND_WRITTEN = f"# Notes about Ada\n\n- {LOCKER}\n- Ada prefers tea over coffee\n"
OTHER = [
    "Maya prefers concise answers with the code first",
    "The billing service deploys on Tuesdays",
    "Priya is Maya's manager and approves releases",
]


def holding(root: Path, word: str = TOKEN) -> list[str]:
    """The files under root whose bytes hold the word (any case: the index lower-cases it)."""
    needle = word.lower().encode()
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and needle in path.read_bytes().lower()
    )


def dream(root: Path, env: dict[str, str], now) -> None:
    with Workspace.open(root, environ=env) as ws:
        for i, text in enumerate([f"Reminder: {LOCKER}", *OTHER]):
            ws.note(text, at=now - timedelta(hours=4 - i))
        assert run_dream(ws, now=now, force=True).committed
        assert TOKEN in ws.read_memory()


def forget_everything_that_holds_it(root: Path, env: dict[str, str]) -> None:
    runner = CliRunner(env=env)
    report = runner.invoke(main, ["report", "-w", str(root)])
    assert report.exit_code == 0, report.output
    before = holding(root)
    assert "memory/report.html" in before and "MEMORY.md.seed-backup" in before
    found = runner.invoke(main, ["search", TOKEN, "--json", "-w", str(root)])
    ids = [str(hit["id"]) for hit in json.loads(found.output) if TOKEN in hit["text"]]
    assert len(ids) == 2  # the seed's line and the note
    result = runner.invoke(main, ["forget", *ids, "-w", str(root)])
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_forget_leaves_no_byte_in_any_file_on_sqlite(tmp_path, now):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "MEMORY.md").write_text(HAND_WRITTEN)
    dream(root, {}, now)
    forget_everything_that_holds_it(root, {})
    assert holding(root) == []
    wal = root / "memory" / "crystals.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    with Workspace.open(root) as ws:
        # The seed crystal was the whole hand-written file, so all of it is forgotten; the
        # crystals that did not hold the word stay, and the backup stays as a file.
        assert "Maya prefers concise answers" in ws.read_memory()
        assert ws.seed_backup.is_file() and "Ada prefers tea" not in ws.seed_backup.read_text()
        assert all(TOKEN not in hit.text for hit in ws.search("locker code", now=now))


def test_forget_leaves_no_byte_on_postgresql(tmp_path, now, pg_database):
    env = {"DREAM_STORE_URL": pg_database}
    root = tmp_path / "ws"
    root.mkdir()
    (root / "MEMORY.md").write_text(HAND_WRITTEN)
    dream(root, env, now)
    assert TOKEN.lower().encode() in pg_dump(pg_database)
    forget_everything_that_holds_it(root, env)
    assert holding(root) == []
    assert TOKEN.lower().encode() not in pg_dump(pg_database)  # lexemes (terms) included


def pg_dump(url: str) -> bytes:
    import pgserver

    binary = Path(pgserver.__file__).parent / "pginstall" / "bin" / "pg_dump"
    done = subprocess.run(
        [str(binary), "--data-only", "--dbname", url], capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.lower()


SESSION_TURN = f"user: where did I leave the spare key? assistant: {LOCKER}. " + "filler " * 900

# A writer that did not zero what it freed (an older dreamer, a tool on the file), killed in the
# middle of its next write: the freed pages still hold the text, and the WAL an unfinished write.
KILLED_WRITER = """
import os, signal, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA secure_delete = OFF")
turn = int(sys.argv[2])
conn.execute("UPDATE crystals SET text = " + " || ".join(["text"] * 8) + " WHERE id = ?", (turn,))
conn.execute("UPDATE crystals SET text = substr(text, 1, length(text) / 8) WHERE id = ?", (turn,))
conn.execute("BEGIN")
conn.execute("UPDATE crystals SET importance = 0.9 WHERE id = ?", (turn,))
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.skipif(os.name != "posix", reason="kills a process with SIGKILL")
def test_no_copy_in_free_pages_after_an_ingest_and_a_killed_writer(tmp_path, now):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        for text in OTHER:
            ws.note(text, at=now)
        # As a SessionEnd capture stores an exchange: long, so it spills into overflow pages.
        turn = ws.index(NewCrystal(SESSION_TURN, importance=0.5, at=now, source="sessions"))
    db = root / "memory" / "crystals.db"
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(db), str(turn)])
    assert killed.returncode == -signal.SIGKILL
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA freelist_count").fetchone()[0] > 0
    result = CliRunner().invoke(main, ["forget", str(turn), "-w", str(root)])
    assert result.exit_code == 0, result.output
    assert holding(root) == []


def dream_command() -> str:
    beside_python = Path(sys.executable).with_name("dream")
    return str(beside_python) if beside_python.exists() else "dream"


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="kills a process with SIGKILL")
def test_no_copy_after_an_ingest_and_a_dream_killed_mid_way(tmp_path, now):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        for i, text in enumerate(OTHER * 3):
            ws.note(f"{text} ({i})", at=now)
    transcript = tmp_path / "session.md"
    transcript.write_text("\n\n".join(f"User: turn {i}\n\n{SESSION_TURN}" for i in range(6)))
    ingested = CliRunner().invoke(main, ["ingest", str(transcript), "-w", str(root)])
    assert ingested.exit_code == 0, ingested.output
    dreaming = subprocess.Popen(
        [dream_command(), "run", "--force", "-w", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rotated = root / "memory" / "scratch.dreaming.md"
    try:
        while not rotated.exists():  # once the dream rotated the scratch, it is under way
            with contextlib.suppress(subprocess.TimeoutExpired):
                dreaming.wait(timeout=0.005)
            assert dreaming.returncode is None, "the dream ended before it could be killed"
    finally:
        dreaming.send_signal(signal.SIGKILL)
        dreaming.wait()
    with Workspace.open(root) as ws:
        ids = [str(c.id) for c in ws.store.crystals.select() if TOKEN in c.text]
    assert ids
    result = CliRunner().invoke(main, ["forget", *ids, "-w", str(root)])
    assert result.exit_code == 0, result.output
    assert holding(root) == []


def test_redact_scan_removes_the_secret_from_the_report(tmp_path, now):
    key = "ghp_" + "R8kD2mQ7vX4bN9cL1tY6wH3sJ5pF0gZa8eUq"
    root = tmp_path / "ws"
    root.mkdir()
    (root / "dreamer.toml").write_text("[memory.secrets]\nredact = false\n")
    with Workspace.open(root) as ws:
        for i, text in enumerate([f"CI token {key} for the release job", *OTHER]):
            ws.note(text, at=now - timedelta(hours=4 - i))
        assert run_dream(ws, now=now, force=True).committed
    runner = CliRunner()
    assert runner.invoke(main, ["report", "-w", str(root)]).exit_code == 0
    assert "memory/report.html" in holding(root, key)
    (root / "dreamer.toml").unlink()
    done = runner.invoke(main, ["redact", "--scan", "-w", str(root)])
    assert done.exit_code == 0, done.output
    assert holding(root, key) == []
    assert "[secret:github-token#" in (root / "memory" / "report.html").read_text()


def test_a_reader_that_keeps_old_pages_in_the_wal_makes_the_forget_say_so(tmp_path, now):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        for text in [LOCKER, *OTHER]:
            ws.note(text, at=now)
        # Another process reading an older snapshot (a fault at the boundary): the WAL cannot
        # be emptied while it reads. Its wait is cut short so the test does not take a minute.
        reader = sqlite3.connect(ws.db_path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM crystals").fetchone()
        ws.store.db.execute("PRAGMA busy_timeout = 50")
        try:
            with pytest.raises(LockHeld, match="another process kept reading crystals.db"):
                ws.forget([1], now=now)
            assert "memory/crystals.db-wal" in holding(root)  # what the error warns about
        finally:
            reader.close()
    again = CliRunner().invoke(main, ["redact", "--scan", "-w", str(root)])
    assert again.exit_code == 0, again.output
    assert holding(root) == []
