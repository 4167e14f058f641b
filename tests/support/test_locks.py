"""The one lock helper: exclusive across processes, non-waiting when asked, the only fcntl user."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dreamer.errors import LockHeld, ScratchError
from dreamer.support.locks import hold

HOLDER = """
import sys
from pathlib import Path
from dreamer.support.locks import hold
with hold(Path(sys.argv[1]), wait=False, busy="held"):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_a_second_holder_is_refused_with_the_holders_pid(tmp_path):
    path = tmp_path / "dream.lock"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "locked"
        with (
            pytest.raises(LockHeld, match=f"pid {child.pid}"),
            hold(path, wait=False, busy="dream already running (pid {pid})"),
        ):
            pass
    finally:
        child.communicate("\n", timeout=10)
    with hold(path, wait=False, busy="unexpected"):  # free again once the holder is gone
        assert (path.stat().st_mode & 0o777) == 0o600


def test_a_killed_holder_leaves_the_lock_free(tmp_path):
    path = tmp_path / "dream.lock"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "locked"
    child.kill()
    child.wait(timeout=10)
    with hold(path, wait=False, busy="still held after the holder died"):
        pass


def test_a_waiting_holder_gets_the_lock_when_it_is_released(tmp_path):
    path = tmp_path / "scratch.lock"
    order: list[str] = []
    released = threading.Event()

    def second() -> None:
        with hold(path):
            order.append("second")

    with hold(path):
        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.05)  # give it the chance to (wrongly) get in; it must wait instead
        order.append("first")
        released.set()
    thread.join(timeout=10)
    assert order == ["first", "second"]


def test_an_unopenable_lock_raises_the_callers_error_naming_the_fix(tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    with (
        pytest.raises(ScratchError, match="check its permissions"),
        hold(tmp_path / "a-file" / "scratch.lock", error=ScratchError),
    ):
        pass


def test_no_module_of_dreamer_but_the_lock_helper_uses_fcntl():
    package = Path(__file__).resolve().parents[2] / "dreamer"
    users = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "fcntl" in path.read_text(encoding="utf-8")
    )
    assert users == ["support/locks.py"], "lock through dreamer.support.locks (Windows too)"


def test_note_search_and_run_hold_their_locks_through_the_helper(tmp_path, runner):
    from dreamer.cli import main

    ws = tmp_path / "ws"
    for text in ("one note", "two notes", "three notes"):
        assert runner.invoke(main, ["note", "-w", str(ws), text]).exit_code == 0
    assert "two notes" in runner.invoke(main, ["search", "-w", str(ws), "two"]).output
    done = runner.invoke(main, ["run", "-w", str(ws), "--force"])
    assert done.exit_code == 0, done.output
    locks = sorted(path.name for path in (ws / "memory").glob("*.lock"))
    assert {"dream.lock", "scratch.lock"} <= set(locks)
    assert all((path.stat().st_mode & 0o777) == 0o600 for path in (ws / "memory").glob("*.lock"))
    assert os.access(ws / "MEMORY.md", os.R_OK)


def test_a_waiter_takes_the_lock_as_soon_as_the_holder_lets_go(tmp_path):
    lock = tmp_path / "w.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
        with pytest.raises(LockHeld):
            with hold(lock, wait=False, busy="busy"):
                pass
        taken = threading.Event()

        def wait_for_it() -> None:
            with hold(lock):
                taken.set()

        waiter = threading.Thread(target=wait_for_it)
        waiter.start()
        assert not taken.wait(0.2)  # still held by the other process
        assert holder.stdin is not None
        holder.stdin.close()  # the holder lets go and exits
        holder.wait(timeout=10)
        assert taken.wait(10)
        waiter.join(10)
    finally:
        holder.kill()
    assert (lock.stat().st_mode & 0o777) == 0o600
