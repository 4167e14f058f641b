"""The small edges of issue 22 (item 9): each one clear error line, or the right behaviour.

- ``dream export --to`` / ``dream report -o`` a missing folder: one ``Error:`` line (the folder
  is not made: a mistyped one would hide the file where nobody looks);
- NUL characters: a note with one is refused at the door on both backends, ingested text
  loses them on both (SQLite would keep one, PostgreSQL refuse the row);
- symbolic links in ``memory/``: never written through, one line naming the link;
- folders ``dream init`` makes are owner-only whatever the umask;
- a read-only file system is named as such, and the read-only commands still work on it;
- the open-files limit during a dream is named as the cause;
- a lease whose holder is a zombie of this machine is taken over at once.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamer import Workspace
from dreamer.agents.ingest import ingest
from dreamer.cli import main
from dreamer.errors import InvalidNote, LinkRefused
from dreamer.support.files import atomic_write
from dreamer.support.times import utc_now

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

HASHING = {"DREAM_EMBEDDER": "hashing"}


def _dreamt(root: Path, now) -> None:
    with Workspace.open(root, environ=HASHING) as ws:
        for i in range(6):
            ws.note(f"Deploy {i} of the billing service went out", at=now)
    result = CliRunner(env=HASHING).invoke(main, ["run", "--force", "-w", str(root)])
    assert result.exit_code == 0, result.output


def _one_error_line(result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output
    return result.stderr


# --- a missing folder for --to / -o -------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "option"),
    [(["export"], "--to"), (["export", "--all"], "--to"), (["report"], "-o")],
    ids=["export", "export-all", "report"],
)
def test_writing_to_a_missing_folder_is_one_error_line_and_makes_nothing(
    tmp_path, now, command, option
):
    root = tmp_path / "ws"
    _dreamt(root, now)
    target = tmp_path / "missing" / "deeper" / "MEMORY.md"
    result = CliRunner().invoke(main, [*command, option, str(target), "-w", str(root)])
    line = _one_error_line(result)
    assert f"the folder {target.parent} does not exist" in line and "mkdir -p" in line
    assert not (tmp_path / "missing").exists()
    # An existing folder works as before.
    target.parent.mkdir(parents=True)
    done = CliRunner().invoke(main, [*command, option, str(target), "-w", str(root)])
    assert done.exit_code == 0, done.output
    assert target.read_text(encoding="utf-8").strip()


# --- NUL characters, the same on both backends -------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend_env(request, tmp_path) -> dict[str, str]:
    if request.param == "sqlite":
        return dict(HASHING)
    return {**HASHING, "DREAM_STORE_URL": request.getfixturevalue("pg_database")}


def test_a_note_with_a_nul_is_refused_on_both_backends(tmp_path, now, backend_env):
    root = tmp_path / "ws"
    with Workspace.open(root, environ=backend_env) as ws:
        ws.note("Ada prefers short answers", at=now)
        with pytest.raises(InvalidNote, match=r"NUL character \(at character 6\)"):
            ws.note("before\x00after", at=now)
        assert [c.text for c in ws.store.crystals.select()] == ["Ada prefers short answers"]
        assert [note.text for note in ws.scratch.notes()] == ["Ada prefers short answers"]
    result = CliRunner(env=backend_env).invoke(main, ["note", "-", "-w", str(root)], input=b"a\0b")
    assert "NUL character" in _one_error_line(result)


def test_ingested_text_loses_its_nul_characters_on_both_backends(tmp_path, now, backend_env):
    chat = tmp_path / "chat.jsonl"
    lines = [
        {"role": "user", "content": "The serial port sends\u0000 a zero byte"},
        {"role": "assistant", "content": "Then strip it before parsing."},
    ]
    chat.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with Workspace.open(tmp_path / "ws", environ=backend_env) as ws:
        report = ingest(ws, [chat], now)
        assert not report.failed, [r.error for r in report.failed]
        texts = [c.text for c in ws.store.crystals.select()]
        assert len(texts) == 1 and "sends a zero byte" in texts[0] and "\x00" not in texts[0]
        again = ingest(ws, [chat], now)  # the same file again: nothing new (hashes agree)
        assert again.created == 0


# --- symbolic links inside memory/ -------------------------------------------------------------


@pytest.fixture
def outside(tmp_path) -> Path:
    path = tmp_path / "outside.txt"
    path.write_text("precious\n")
    return path


def _assert_refused(result, link: Path, outside: Path) -> None:
    line = _one_error_line(result, code=1)
    assert f"{link} is a symbolic link (to {outside})" in line
    assert outside.read_text() == "precious\n"


def test_a_linked_scratch_is_never_appended_through(tmp_path, now, outside):
    root = tmp_path / "ws"
    Workspace.open(root, environ=HASHING).init()
    link = root / "memory" / "scratch.md"
    link.unlink()
    link.symlink_to(outside)
    result = CliRunner().invoke(main, ["note", "hello", "-w", str(root)])
    _assert_refused(result, link, outside)
    with Workspace.open(root, environ=HASHING) as ws:
        assert ws.store.crystals.select() == []  # refused before the crystal, too


@pytest.mark.parametrize("name", ["crystals.db", "dream.lock"])
def test_a_linked_database_or_lock_is_refused(tmp_path, now, outside, name):
    root = tmp_path / "ws"
    _dreamt(root, now)
    link = root / "memory" / name
    link.unlink()
    link.symlink_to(outside)
    result = CliRunner(env=HASHING).invoke(main, ["run", "--force", "-w", str(root)])
    _assert_refused(result, link, outside)


def test_a_linked_report_is_refused(tmp_path, now, outside):
    root = tmp_path / "ws"
    _dreamt(root, now)
    link = root / "memory" / "report.html"
    link.symlink_to(outside)
    result = CliRunner().invoke(main, ["report", "-w", str(root)])
    _assert_refused(result, link, outside)


def test_a_temp_file_planted_as_a_link_is_not_written_through(tmp_path, outside):
    target = tmp_path / "MEMORY.md"
    target.write_text("old state\n")
    # The temp name atomic_write uses in this thread, planted as a link to a file outside.
    planted = tmp_path / f".MEMORY.md.{os.getpid()}.{threading.get_ident()}.tmp"
    planted.symlink_to(outside)
    with pytest.raises(LinkRefused, match=r"\.MEMORY\.md\..*\.tmp is a symbolic link"):
        atomic_write(target, "new state\n")
    assert outside.read_text() == "precious\n"
    assert target.read_text() == "old state\n"
    planted.unlink()
    planted.write_text("a stale temp file left by a crash")  # a plain leftover is replaced
    atomic_write(target, "new state\n")
    assert target.read_text() == "new state\n" and not planted.exists()


# --- dream init: owner-only folders whatever the umask -----------------------------------------


def test_init_makes_every_missing_parent_owner_only_whatever_the_umask(tmp_path):
    root = tmp_path / "a" / "b" / "ws"
    old = os.umask(0)
    try:
        result = CliRunner().invoke(main, ["init", "-w", str(root)])
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    for folder in (tmp_path / "a", tmp_path / "a" / "b", root, root / "memory"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


# --- a read-only file system ------------------------------------------------------------------


@pytest.fixture
def read_only_copy(tmp_path, now):
    """A dreamt workspace seen through a read-only bind mount (root with mount rights only)."""
    root = tmp_path / "ws"
    _dreamt(root, now)
    with Workspace.open(root, environ=HASHING) as ws:
        ws.note("A note waiting for the next dream", at=now + timedelta(minutes=1))
    mounted = tmp_path / "ro"
    mounted.mkdir()
    try:
        subprocess.run(
            ["mount", "--bind", str(root), str(mounted)], check=True, capture_output=True
        )
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot bind-mount here ({e}); needs root with CAP_SYS_ADMIN")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", mounted], check=True, capture_output=True)
        yield mounted
    finally:
        subprocess.run(["umount", str(mounted)], check=True)


def test_a_read_only_file_system_is_named_and_reading_still_works(read_only_copy):
    root = str(read_only_copy)
    runner = CliRunner(env=HASHING)
    before = {p.name: p.read_bytes() for p in (read_only_copy / "memory").iterdir()}
    for args, expected in [
        (["search", "billing deploy"], "Deploy"),
        (["status"], "Last dream: #1 committed"),
        (["log"], "committed"),
        (["bootstrap"], "A note waiting for the next dream"),
        (["get", "1"], "Deploy"),
    ]:
        result = runner.invoke(main, [*args, "-w", root])
        assert result.exit_code == 0, (args, result.output)
        assert expected in result.output, (args, result.output)
    for args in (["note", "hello"], ["run", "--force"]):
        result = runner.invoke(main, [*args, "-w", root])
        line = _one_error_line(result, code=1)
        assert "is on a read-only file system" in line and "permissions" not in line, line
    assert {p.name: p.read_bytes() for p in (read_only_copy / "memory").iterdir()} == before


# --- the open-files limit during a dream ------------------------------------------------------

EMFILE_SCRIPT = textwrap.dedent(
    """
    import os, resource, sys
    from datetime import UTC, datetime, timedelta
    from dreamer import Workspace
    from dreamer.dream.cycle import run
    from dreamer.errors import DreamError
    import dreamer.memory.scratch, dreamer.memory.scratch_rows, dreamer.dream.synth.offline
    import dreamer.store.sqlite.store

    root, now = sys.argv[1], datetime(2026, 3, 12, 14, 30, tzinfo=UTC)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for extra in range(8):
        with Workspace.open(root, environ={"DREAM_EMBEDDER": "hashing"}) as ws:
            for i in range(6):
                ws.note(f"Deploy {extra}.{i} of the billing service", at=now)
            # No descriptor to spare, then one more each round: every open of the dream in turn
            # meets the limit.
            in_use = len(os.listdir("/proc/self/fd")) - 1
            resource.setrlimit(resource.RLIMIT_NOFILE, (in_use + extra, hard))
            try:
                result = run(ws, now=now + timedelta(hours=extra + 1), force=True)
                print(f"{extra}\\t{result.outcome}")
            except DreamError as e:
                print(f"{extra}\\tError: {e}")
            finally:
                resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    """
)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_the_open_files_limit_during_a_dream_is_named_as_the_cause(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", EMFILE_SCRIPT, str(tmp_path / "ws")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    outcomes = dict(line.split("\t", 1) for line in done.stdout.splitlines())
    errors = [text for text in outcomes.values() if text.startswith("Error:")]
    assert errors, done.stdout  # the limit was met at least once
    for text in errors:
        assert "too many open files" in text and "ulimit -n" in text, text
        assert "permissions" not in text, text
    assert "committed" in outcomes.values()  # and with room to spare the dream runs


# --- a zombie lease holder ---------------------------------------------------------------------


def test_a_lease_held_by_a_zombie_of_this_machine_is_taken_over(pg_database, tmp_path, now):
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    # Wait for it to exit without reaping it: it stays a zombie, and answers signal 0.
    os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)
    try:
        os.kill(zombie.pid, 0)  # the check that alone took it for alive
        with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}) as ws:
            ws.init()
            ws.store.acquire_lease(
                f"{socket.gethostname()}:{zombie.pid}:x", utc_now(), timedelta(minutes=2)
            )
            with ws.lock():  # taken at once, not when the lease expires
                assert ws.store.lease_holder()[0] != f"{socket.gethostname()}:{zombie.pid}:x"
    finally:
        zombie.wait()
