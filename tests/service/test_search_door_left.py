"""The door a search leaves: without a serve, a ``dream search`` that searched by itself starts
``dream door`` in the background, which answers the searches after it exactly as they would
answer themselves, holds nothing of the process that started it, and leaves when idle, when a
stale request shows another dreamer, when asked, and when a serve takes its place. Real
processes throughout: fresh searches, a real door, a real serve."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_search_door import DREAM, NOTES, PROBE, Serve, door_env

from dreamer import Workspace
from dreamer.config import load_settings
from dreamer.errors import InvalidSetting
from dreamer.memory import search_client as knock
from dreamer.support import search_wire
from dreamer.support.version import __version__

WAIT = 30.0  # seconds a real process gets to start, answer or leave


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """A search leaves a door for a minute."""
    return door_env(tmp_path, "1")


@pytest.fixture
def root(tmp_path, env) -> Path:
    """A workspace of a few embedded notes; afterwards, no door of this test is left running."""
    path = tmp_path / "a"
    with Workspace.open(path) as ws:
        ws.init()
        for text in NOTES:
            ws.note(text)
    yield path
    subprocess.run([DREAM, "door", "--stop"], env=env, capture_output=True, timeout=WAIT)
    pid = _door_pid(env)
    if pid is not None and _alive(pid):
        os.kill(pid, signal.SIGKILL)


def _sock(env: dict[str, str]) -> Path:
    return search_wire.socket_path(env)


def _door_pid(env: dict[str, str]) -> int | None:
    try:
        return int((_sock(env).parent / search_wire.LOCK_NAME).read_text())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (a door a test started and has not reaped) is gone for this purpose.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


def _listening(env: dict[str, str]) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(_sock(env)))
        except OSError:
            return False
    return True


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"not within {WAIT} s: {what}"
        time.sleep(0.05)


def _search(root: Path, query: str, env: dict[str, str], probe: Path) -> tuple[str, list[str]]:
    """What a fresh `dream search` printed (it must return at once: a door it leaves holds
    none of its pipes), and the modules it imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "search", query, "--json", "-w", str(root)],
        env={**env, "PROBE_OUT": str(probe)},
        cwd=env["HOME"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout, probe.read_text().split()


def _logged(root: Path) -> list[str]:
    with Workspace.open(root, create=False) as ws:
        return ws.store.search.search_queries("")


@pytest.mark.slow
def test_a_search_leaves_a_door_that_answers_the_next_search_as_it_would_itself(
    tmp_path, env, root
):
    alone, modules = _search(root, "when is the deploy", env, tmp_path / "first")
    assert "numpy" in modules  # no door yet: it searched by itself
    _until(lambda: _listening(env), "a door left by the search")
    pid = _door_pid(env)
    assert pid is not None and _alive(pid)
    assert os.readlink(f"/proc/{pid}/cwd") == "/"  # holds no folder of the search's

    answered, modules = _search(root, "when is the deploy", env, tmp_path / "second")
    assert "numpy" not in modules and "dreamer.store.sqlite" not in modules
    assert json.loads(answered) == json.loads(alone)
    assert _logged(root) == ["when is the deploy", "when is the deploy"]  # once each

    stopped = subprocess.run(
        [DREAM, "door", "--stop"], env=env, capture_output=True, text=True, timeout=WAIT
    )
    assert stopped.returncode == 0
    assert f"(pid {pid})" in stopped.stdout and "is leaving" in stopped.stdout
    _until(lambda: not _alive(pid), "the door leaving when asked")
    assert not _sock(env).exists()
    log = (_sock(env).parent / "door.log").read_text()
    assert "search door: open at" in log and "left (asked to stop)" in log


@pytest.mark.slow
def test_a_door_left_holds_no_descriptor_the_search_inherited(tmp_path, env, root):
    """A caller reading a pipe the search inherited to its end must not wait for the door."""
    read, write = os.pipe()
    os.set_inheritable(write, True)
    try:
        search = subprocess.Popen(
            [DREAM, "search", "when is the deploy", "-w", str(root)],
            env=env,
            stdout=subprocess.DEVNULL,
            pass_fds=(write,),
        )
        os.close(write)
        write = -1
        assert search.wait(timeout=WAIT) == 0
        _until(lambda: _listening(env), "a door left by the search")
        ready, _, _ = select.select([read], [], [], WAIT)
        assert ready and os.read(read, 1) == b""  # end of file: no process holds it open
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)


@pytest.mark.slow
def test_no_door_is_left_at_zero_warm_minutes_or_beside_a_listening_one(
    tmp_path, env, root, monkeypatch
):
    assert knock.leave_open(root, 0) is False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other:
        _sock(env).parent.mkdir(mode=0o700, exist_ok=True)
        other.bind(str(_sock(env)))
        other.listen(1)
        monkeypatch.setenv("XDG_RUNTIME_DIR", env["XDG_RUNTIME_DIR"])
        assert knock.leave_open(root, 1) is False  # something listens: no second door
    assert _door_pid(env) is None
    # a runtime folder another user owns: no door could open there, none is started
    os.unlink(_sock(env))
    os.chown(_sock(env).parent, 12345, 12345)
    assert knock.leave_open(root, 1) is False
    os.chown(_sock(env).parent, os.geteuid(), os.getegid())

    # End to end: with 0 the search leaves nothing (the door a 1 leaves appears in this time).
    off = {**env, "DREAM_SEARCH_WARM_MINUTES": "0"}
    _search(root, "when is the deploy", off, tmp_path / "off")
    on = {**env, "XDG_RUNTIME_DIR": str(tmp_path / "run-on")}
    (tmp_path / "run-on").mkdir(mode=0o700)
    _search(root, "when is the deploy", on, tmp_path / "on")
    _until(lambda: _listening(on), "the door a search at 1 minute leaves")
    assert not _sock(env).exists() and _door_pid(env) is None
    subprocess.run([DREAM, "door", "--stop"], env=on, capture_output=True, timeout=WAIT)


@pytest.mark.parametrize("value", ["-1", "1441", "soon", "nan"])
def test_warm_minutes_out_of_range_is_one_clear_error(value):
    with pytest.raises(InvalidSetting, match="memory.search.warmMinutes|DREAM_SEARCH_WARM"):
        load_settings(None, environ={"DREAM_SEARCH_WARM_MINUTES": value})


def _door(env: dict[str, str], *args: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [DREAM, "door", *args], env=env, stderr=subprocess.PIPE, text=True, cwd=env["HOME"]
    )
    _until(lambda: _listening(env) or proc.poll() is not None, "the door opening")
    assert proc.poll() is None, proc.communicate()[1]
    return proc


def _left(proc: subprocess.Popen) -> str:
    """The door's log once it has left by itself (exit 0)."""
    _, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 0, err
    return err


@pytest.mark.slow
def test_a_door_leaves_when_idle(env, root):
    proc = _door(env, "--idle-minutes", "0.01")
    assert "left (idle for 0.6 s)" in _left(proc)
    assert not _sock(env).exists()


@pytest.mark.slow
def test_a_door_leaves_as_soon_as_another_dreamer_asks(env, root):
    proc = _door(env, "--idle-minutes", "0")
    request = {
        "protocol": search_wire.PROTOCOL,
        "version": __version__ + ".other",
        "package": search_wire.package_dir(),
        "env": {},
        "root": str(root),
        "memory": [0, 0],
        "query": "deploy",
        "limit": 1,
        "search_type": "both",
    }
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(WAIT)
        sock.connect(str(_sock(env)))
        sock.sendall(json.dumps(request).encode() + b"\n")
        answer = json.loads(sock.makefile().readline())
    assert "declined" in answer and ".other" in answer["declined"]
    assert "left (stale: dreamer" in _left(proc)  # the next search starts a current one


@pytest.mark.slow
def test_serve_takes_the_place_of_a_door_a_search_left(env, root):
    proc = _door(env, "--idle-minutes", "0")
    serve = Serve(root, env)
    try:
        serve.wait_for("search door: open at")
        assert "left (asked to stop)" in _left(proc)
        # serve's door stays when asked: it closes with serve
        said = subprocess.run(
            [DREAM, "door", "--stop"], env=env, capture_output=True, text=True, timeout=WAIT
        ).stdout
        assert "stays: this door is dream serve's" in said
        assert _listening(env) and serve.proc.poll() is None
    finally:
        serve.stop()


@pytest.mark.slow
def test_a_door_that_cannot_open_says_why_and_exits_1(env, root):
    proc = _door(env, "--idle-minutes", "0")
    try:
        second = subprocess.run(
            [DREAM, "door"], env=env, capture_output=True, text=True, timeout=WAIT
        )
        assert second.returncode == 1
        assert f"another process (pid {proc.pid}) answers searches" in second.stderr
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 0 and "search door: closed" in err


@pytest.mark.slow
def test_a_recall_hook_is_answered_by_the_door_the_previous_prompt_left(tmp_path, env, root):
    """Recall on every prompt: the first hook searches and leaves a door, the next is answered
    by it without numpy, with the same context."""
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "when is the deploy"})

    def hook(probe: Path) -> tuple[dict, list[str]]:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, "hook", "user-prompt-submit", "--recall"],
            input=prompt,
            env={**env, "PROBE_OUT": str(probe), "DREAM_WORKSPACE": str(root)},
            cwd=env["HOME"],
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return json.loads(done.stdout), probe.read_text().split()

    alone, modules = hook(tmp_path / "first")
    assert "numpy" in modules
    assert "deploy of the billing service" in alone["hookSpecificOutput"]["additionalContext"]
    _until(lambda: _listening(env), "a door left by the hook's search")
    answered, modules = hook(tmp_path / "second")
    assert "numpy" not in modules
    assert answered == alone
    assert _logged(root) == ["when is the deploy", "when is the deploy"]
