"""Errors that tell the truth: each cause is one ``Error:`` line naming it and its fix.

Every cause is produced for real where the machine allows: a full disk by SQLite's
``max_page_count`` (the same SQLITE_FULL a full disk gives), the file-size limit by
``RLIMIT_FSIZE`` in a child process, damaged pages by overwriting a page of a real database,
a permission by a read-only database file, opened by an unprivileged user (as root, the child
drops to ``nobody``, so the test runs in CI too). "Damaged" is said only when
``PRAGMA quick_check`` says so.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dreamer import Workspace
from dreamer.cli import main
from dreamer.errors import DiskFull, StorageIOError, StoreCorrupt
from dreamer.store.sqlite import errors as sqlite_errors

ROOT = Path(__file__).resolve().parents[2]
PAGE = 4096


def _dream(*args: str, preexec=None, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dreamer.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        preexec_fn=preexec,
        timeout=120,
    )


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr
    return lines[0]


def _workspace(root: Path, notes: int = 30) -> Path:
    with Workspace.open(root) as ws:
        ws.init()
        for i in range(notes):
            ws.note(f"Note {i}: the greenhouse vents opened at {i} degrees " + "word " * 40)
    return root


# --- a full disk ---------------------------------------------------------------------------------


def test_a_full_disk_is_a_full_disk_not_a_corrupt_database(tmp_path):
    root = _workspace(tmp_path / "ws")
    with Workspace.open(root) as ws:
        db = ws.store.db  # type: ignore[attr-defined]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages}")  # not one page more: SQLITE_FULL
        with pytest.raises(DiskFull) as caught:
            for i in range(200):
                ws.note(f"Another long note {i}: " + "compost " * 400)
    message = str(caught.value)
    assert "no space left on the disk holding" in message and "free some space" in message
    assert "corrupt" not in message and "damaged" not in message


def _fill(ws: Workspace) -> None:
    """Use up every page crystals.db may have, as a filling disk would."""
    db = ws.store.db  # type: ignore[attr-defined]
    db.execute("PRAGMA max_page_count = " + str(db.execute("PRAGMA page_count").fetchone()[0]))
    for size in (4096, 512, 64, 8):
        try:
            for i in range(100_000):
                ws.store.records.set_meta(f"filler.{size}.{i}", "x" * size)
        except DiskFull:
            continue


@pytest.mark.slow
def test_a_dream_whose_disk_fills_after_the_commit_is_reported_committed(tmp_path, now):
    from dreamer.dream import cycle as dream

    root = _workspace(tmp_path / "ws")  # a state too big for the journal's free page
    with Workspace.open(root) as ws:

        def disk_fills(step: str) -> None:
            if step == "journal":  # MEMORY.md is written; the disk fills right then
                _fill(ws)

        result = dream.run(ws, now=now, force=True, step=disk_fills)
        assert result.outcome == "committed" and ws.memory_md.read_text() == result.state_text
        assert re.search(r"MEMORY.md was written, but the \w+ step after it failed", result.reason)
        assert "no space left on the disk" in result.reason and "corrupt" not in result.reason


# --- the file-size limit -------------------------------------------------------------------------


def _file_size_limit(limit: int):
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return apply


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="sets a limit in the child before exec")
def test_the_file_size_limit_is_named_with_ulimit_f(tmp_path):
    root = _workspace(tmp_path / "ws", notes=3)
    scratch = root / "memory" / "scratch.md"
    before = scratch.read_bytes()
    done = _dream(
        "note",
        "-w",
        str(root),
        "a very long note " * 1800,  # ~30 KB: within a note's size limit
        preexec=_file_size_limit(len(before) + 200),
    )
    line = _one_error_line(done.stderr)
    assert done.returncode == 1
    assert "file-size limit" in line and "ulimit -f" in line
    assert scratch.read_bytes() == before  # all or nothing


# --- damaged pages -------------------------------------------------------------------------------


def _damage(db_path: Path) -> None:
    size = db_path.stat().st_size
    assert size >= 6 * PAGE
    with db_path.open("r+b") as handle:
        for page in range(2, size // PAGE - 1):  # every page but the header page
            handle.seek(page * PAGE)
            handle.write(b"\xa5" * PAGE)


@pytest.mark.slow
def test_damaged_pages_are_called_damaged_because_the_integrity_check_says_so(tmp_path):
    root = _workspace(tmp_path / "ws")
    db_path = root / "memory" / "crystals.db"
    _damage(db_path)
    assert sqlite_errors.integrity_problem(db_path) is not None
    done = _dream("search", "-w", str(root), "greenhouse vents")
    line = _one_error_line(done.stderr)
    assert done.returncode == 1
    assert "is damaged (PRAGMA quick_check:" in line and ".recover" in line


def test_a_corruption_error_the_integrity_check_does_not_confirm_is_not_called_corrupt(tmp_path):
    root = _workspace(tmp_path / "ws", notes=2)
    db_path = root / "memory" / "crystals.db"
    error = sqlite3.DatabaseError("database disk image is malformed")
    error.sqlite_errorname = "SQLITE_CORRUPT"  # type: ignore[attr-defined]
    found = sqlite_errors.translate(error, db_path)
    assert isinstance(found, StorageIOError) and not isinstance(found, StoreCorrupt)
    message = str(found).replace(str(db_path), "crystals.db")
    assert "integrity check (PRAGMA quick_check) finds no damage" in message
    assert not re.search("corrupt|damaged|malformed", message)


# --- permissions ---------------------------------------------------------------------------------


def _write_protect(path: Path) -> Callable[[], None]:
    """Make ``path`` unwritable for this user, root included; return the undo.

    A mode is enough for a user; root ignores modes, but not the immutable attribute
    (``chattr +i``), which is how CI, running as root, still meets a real EPERM.
    """
    if os.getuid() != 0:
        path.chmod(0o444)
        return lambda: path.chmod(0o600)
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)]).returncode != 0:
        pytest.skip("running as root, which ignores file modes, and chattr +i is unavailable")
    return lambda: subprocess.run([chattr, "-i", str(path)], check=True)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_database_this_user_may_not_write_is_permission_denied(tmp_path):
    root = _workspace(tmp_path / "ws", notes=2)
    db_path = root / "memory" / "crystals.db"
    undo = _write_protect(db_path)
    try:
        done = _dream("note", "-w", str(root), "a note that cannot be stored")
    finally:
        undo()
    line = _one_error_line(done.stderr)
    assert done.returncode == 1
    assert "permission denied for" in line and "crystals.db" in line and "chmod" in line
    assert "corrupt" not in line and "damaged" not in line


# --- the open-files limit ------------------------------------------------------------------------


def _open_files_limit(limit: int):
    def apply() -> None:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))

    return apply


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="sets a limit in the child before exec")
def test_the_open_files_limit_is_named_with_ulimit_n_wherever_it_strikes(tmp_path):
    root = _workspace(tmp_path / "ws", notes=1)
    struck = []
    for limit in range(3, 14):  # where it strikes first depends on what Python itself holds
        done = _dream("note", "-w", str(root), f"note {limit}", preexec=_open_files_limit(limit))
        if done.returncode == 0 or re.search("Fatal Python error|shared librar", done.stderr):
            continue  # done, or too low for Python itself to start: not dreamer's to explain
        line = _one_error_line(done.stderr)
        assert f"too many open files ({limit} allowed)" in line and "ulimit -n" in line, line
        assert "permission" not in line and "corrupt" not in line
        struck.append(limit)
    assert struck  # the lowest limits are too low for a note


def test_a_database_locked_too_long_is_named_not_a_traceback(tmp_path):
    error = sqlite3.OperationalError("database is locked")
    error.sqlite_errorname = "SQLITE_BUSY"  # type: ignore[attr-defined]
    found = sqlite_errors.translate(error, tmp_path / "crystals.db")
    assert found is not None and "stayed locked by another process" in str(found)


# --- absurd settings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--dream-interval", "0", "--dream-interval must be a number above 0"),
        ("--consolidation-interval", "0", "--consolidation-interval must be a number above 0"),
        ("--dream-interval", "1e308", "--dream-interval must be at most 525600"),
        ("--dream-interval", "nan", "--dream-interval must be a number above 0"),
    ],
)
def test_an_absurd_interval_names_the_real_flag(tmp_path, runner, flag, value, says):
    root = _workspace(tmp_path / "ws", notes=1)
    result = runner.invoke(main, ["tick", "-w", str(root), flag, value])
    assert result.exit_code == 2
    assert says in result.output and "Traceback" not in result.output
