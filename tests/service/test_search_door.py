"""``dream serve``'s search door: a fresh ``dream search`` answered by the running serve prints
exactly what it prints by itself, imports no numpy, and falls back to searching by itself
whenever the door is missing, stale, stopped, or runs with other settings; the search is
logged once either way. Real processes throughout: a real serve, real fresh searches."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dreamer import Workspace
from dreamer.support import search_wire

pytestmark = pytest.mark.slow

DREAM = str(Path(sys.executable).with_name("dream"))
# The fresh search, run as the `dream` script runs it, saying afterwards what it imported.
PROBE = (
    "import atexit, os, sys\n"
    "def said():\n"
    "    open(os.environ['PROBE_OUT'], 'w').write(' '.join(sorted(sys.modules)))\n"
    "atexit.register(said)\n"
    "sys.argv[0] = 'dream'\n"
    "from dreamer.cli import run\n"
    "run()\n"
)
HEAVY = (
    "numpy",
    "dreamer.memory.workspace",
    "dreamer.retrieval.search",
    "dreamer.retrieval.vectors",
    "dreamer.store.sqlite",
)
NOTES = [
    "The deploy of the billing service moved to Friday after the load test",
    "Ada prefers tea over coffee in the morning standups",
    "Rotate the staging database password before the audit on the 12th",
    "The kiln in the studio needs a new thermocouple; order it from the usual shop",
    "Team offsite is in Lisbon this spring, flights booked through the travel desk",
]
QUERIES = [
    ["when is the deploy"],
    ["what does Ada drink", "--json"],
    ["ceramics oven repair", "--limit", "2"],
    ["password rotation", "--type", "facts", "--json"],
    ["zebra crossing quantum", "--json"],
    ["zebra crossing quantum"],
]


class Serve:
    """A real `dream serve` process whose stderr is collected as it runs."""

    def __init__(self, root: Path, env: dict[str, str], *extra: str):
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [DREAM, "serve", "-w", str(root), "-v", *extra],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def log(self) -> str:
        return "".join(self.lines)

    def wait_for(self, text: str, timeout: float = 30, count: int = 1) -> None:
        """Until serve has logged ``text`` (``count`` times: it logs an answer after sending)."""
        deadline = time.monotonic() + timeout
        while self.log().count(text) < count:
            assert self.proc.poll() is None, self.log()
            assert time.monotonic() < deadline, f"no {text!r} in:\n{self.log()}"
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)
        self._reader.join(timeout=5)


def door_env(tmp_path: Path, warm_minutes: str) -> dict[str, str]:
    """Its own home and runtime folder (the door's), dreams off so nothing changes the store
    between the searches compared; a search leaves a door for ``warm_minutes``."""
    home = tmp_path / "home"
    home.mkdir()
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("DREAM_")},
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(run),
        "DREAM_DREAM_ENABLED": "false",
        "DREAM_SEARCH_WARM_MINUTES": warm_minutes,
    }


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """A search leaves no door of its own (see tests/service/test_search_door_left.py): here only
    serve's door answers."""
    return door_env(tmp_path, "0")


@pytest.fixture
def serving(tmp_path, env):
    """A workspace ("a") and a serve over it with its door open and its first jobs done."""
    root = tmp_path / "a"
    _dream(["init", "-w", str(root)], env)
    serve = Serve(root, env)
    try:
        serve.wait_for("search door: open at")
        serve.wait_for("consolidate: done")  # nothing changes the store after this
        yield root, serve
    finally:
        serve.stop()


def _dream(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess:
    done = subprocess.run(
        [DREAM, *args], env=env, input=stdin, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done


def _search(root: Path, args: list[str], env: dict[str, str], probe: Path) -> tuple[str, list[str]]:
    """What a fresh `dream search` printed, and the modules it imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "search", *args, "-w", str(root)],
        env={**env, "PROBE_OUT": str(probe)},
        cwd=env["HOME"],  # -c puts the current folder first on sys.path: not a checkout
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout, probe.read_text().split()


def _logged(root: Path) -> list[str]:
    with Workspace.open(root, create=False) as ws:
        return ws.store.search.search_queries("")


def _no_door(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The same settings, looking for a door where there is none: it searches by itself."""
    empty = tmp_path / "nowhere"
    empty.mkdir(mode=0o700, exist_ok=True)
    return {**env, "XDG_RUNTIME_DIR": str(empty)}


def test_a_search_answered_by_the_door_prints_what_it_prints_by_itself(tmp_path, env, serving):
    root, serve = serving
    for text in NOTES:  # written by fresh processes: no vector yet, the door embeds them
        _dream(["note", text, "-w", str(root)], env)
    twin = tmp_path / "b"  # the same memories, searched by fresh processes themselves
    shutil.copytree(root, twin)
    alone = _no_door(env, tmp_path)
    for n, args in enumerate(QUERIES):
        answered, modules = _search(root, args, env, tmp_path / f"door{n}")
        assert [m for m in HEAVY if m in modules] == [], args  # the door answered it
        by_itself, modules = _search(twin, args, alone, tmp_path / f"self{n}")
        assert "numpy" in modules  # this one searched by itself
        assert answered == by_itself, args
        if "--json" in args:
            assert isinstance(json.loads(answered), list)
    assert json.loads(_search(root, ["deploy", "--json"], env, tmp_path / "p")[0])
    serve.wait_for("search door: answered", count=len(QUERIES) + 1)
    assert serve.log().count("search door: answered") == len(QUERIES) + 1
    # every search logged once, in its own workspace, whoever answered it
    assert _logged(root) == [args[0] for args in QUERIES] + ["deploy"]
    assert _logged(twin) == [args[0] for args in QUERIES]


def test_a_search_with_other_settings_than_serve_gets_its_own(tmp_path, env, serving):
    # serve runs with the default embedder; this search's own settings name another one
    root, serve = serving
    for text in NOTES:
        _dream(["note", text, "-w", str(root)], env)
    twin = tmp_path / "b"
    shutil.copytree(root, twin)
    hashing = {**env, "DREAM_EMBEDDER": "hashing", "ANTHROPIC_API_KEY": "sk-ant-not-sent"}
    args = ["when does the billing deploy happen", "--json"]
    served, modules = _search(root, args, hashing, tmp_path / "p")
    assert "numpy" not in modules  # the door answered ...
    alone, _ = _search(twin, args, _no_door(hashing, tmp_path), tmp_path / "q")
    assert served == alone  # ... with this process's settings
    default, _ = _search(root, args, env, tmp_path / "r")
    assert json.loads(served) and json.loads(default) != json.loads(served)  # not serve's
    serve.wait_for("search door: answered", count=2)
    assert serve.log().count("search door: answered") == 2
    assert "sk-ant-not-sent" not in serve.log()
    assert _logged(root) == [args[0], args[0]]


def test_the_settings_variables_sent_are_those_dreamer_reads():
    from dreamer.config import Settings, describe

    outside = sorted(
        row["env"] for row in describe(Settings()) if not row["env"].startswith("DREAM_")
    )
    assert outside == sorted(search_wire.OTHER_SETTINGS)
    sent = search_wire.settings_env(
        {
            "DREAM_MODEL": "m",
            "DREAM_WORKSPACE": "/w",
            "PATH": "/bin",
            "ANTHROPIC_API_KEY": "sk-ant-secret",
            "OPENAI_API_KEY": "  ",
        }
    )
    # a key travels as whether it is set (a blank one is an error the asker must see)
    assert sent == {"DREAM_MODEL": "m", "ANTHROPIC_API_KEY": "set", "OPENAI_API_KEY": "  "}


def test_another_version_or_copy_of_dreamer_searches_by_itself(tmp_path, env, serving):
    root, serve = serving
    _dream(["note", NOTES[0], "-w", str(root)], env)
    copy = tmp_path / "copy"
    shutil.copytree(
        Path(search_wire.__file__).parents[1],
        copy / "dreamer",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for version, why in ((None, "dreamer from "), ("0.0.0", "dreamer '0.0.0' asked")):
        if version is not None:
            (copy / "dreamer" / "support" / "version.py").write_text(f'__version__ = "{version}"\n')
        other = {**env, "PYTHONPATH": str(copy)}
        out, modules = _search(root, ["deploy"], other, tmp_path / f"p{version}")
        assert "numpy" in modules and NOTES[0] in out
        assert f"declined ({why}" in serve.log()
    assert "search door: answered" not in serve.log()
    assert _logged(root) == ["deploy", "deploy"]


def test_a_stopped_serve_costs_the_budget_and_never_searches_twice(tmp_path, env, serving):
    root, serve = serving
    _dream(["note", NOTES[0], "-w", str(root)], env)
    serve.proc.send_signal(signal.SIGSTOP)  # e.g. Ctrl-Z: the socket takes the connection
    try:
        out, modules = _search(root, ["deploy"], env, tmp_path / "p")
    finally:
        serve.proc.send_signal(signal.SIGCONT)
    assert "numpy" in modules and NOTES[0] in out  # it searched by itself
    # Resumed, the door reads the request, says ready, hears no go: it searches nothing.
    serve.wait_for("the asking process went away")
    assert "search door: answered" not in serve.log()
    assert _logged(root) == ["deploy"]


def test_a_killed_serve_leaves_a_stale_socket_that_the_next_one_replaces(tmp_path, env):
    root = tmp_path / "a"
    _dream(["init", "-w", str(root)], env)
    _dream(["note", NOTES[0], "-w", str(root)], env)
    first = Serve(root, env)
    try:
        first.wait_for("search door: open at")
    finally:
        first.proc.kill()
        first.stop()
    path = search_wire.socket_path(env)
    assert stat.S_ISSOCK(os.lstat(path).st_mode)  # left behind
    out, modules = _search(root, ["deploy"], env, tmp_path / "p")
    assert "numpy" in modules and NOTES[0] in out
    second = Serve(root, env)
    try:
        second.wait_for("search door: open at")
        assert f"replaced a stale socket at {path}" in second.log()
        out, modules = _search(root, ["deploy"], env, tmp_path / "q")
        assert "numpy" not in modules and NOTES[0] in out
    finally:
        second.stop()
    assert not path.exists()  # a clean stop takes its socket away
    assert _logged(root) == ["deploy", "deploy"]


def test_a_second_serve_leaves_the_door_to_the_first(tmp_path, env, serving):
    root, first = serving
    other = tmp_path / "other"
    _dream(["init", "-w", str(other)], env)
    second = Serve(other, env)
    try:
        second.wait_for(f"another dream serve (pid {first.proc.pid}) answers searches")
        _dream(["note", NOTES[1], "-w", str(root)], env)
        out, modules = _search(root, ["tea"], env, tmp_path / "p")
        assert "numpy" not in modules and NOTES[1] in out
    finally:
        second.stop()
    assert search_wire.socket_path(env).exists()  # the second's stop left the first's door alone
    first.wait_for("search door: answered")


def test_the_door_is_only_this_users(tmp_path, env, serving):
    path = search_wire.socket_path(env)
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600


def test_a_door_folder_others_could_enter_is_made_owner_only(tmp_path, env):
    root = tmp_path / "a"
    _dream(["init", "-w", str(root)], env)
    folder = search_wire.socket_path(env).parent
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    serve = Serve(root, env)
    try:
        serve.wait_for("search door: open at")
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    finally:
        serve.stop()


def _request(root: Path, env: dict[str, str], query: str) -> dict:
    """A request as a fresh `dream search` with ``env`` sends it."""
    memory = os.stat(root / "memory")
    return {
        "protocol": search_wire.PROTOCOL,
        "version": __import__("dreamer").__version__,
        "package": search_wire.package_dir(),
        "env": search_wire.settings_env(env),
        "root": str(root),
        "memory": [memory.st_dev, memory.st_ino],
        "query": query,
        "limit": 3,
        "search_type": "both",
    }


def test_a_search_that_never_says_go_is_never_run(tmp_path, env, serving):
    root, serve = serving
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(search_wire.socket_path(env)))
        sock.sendall(json.dumps(_request(root, env, "deploy")).encode() + b"\n")
        assert json.loads(sock.makefile("rb").readline()) == {"ready": True}
        # ... and the asking process gives up here (its budget ran out): no go
    serve.wait_for("the asking process went away")
    assert _logged(root) == []
    assert "search door: answered" not in serve.log()


def test_bad_requests_get_an_answer_and_the_door_stays_open(tmp_path, env, serving):
    root, serve = serving
    path = str(search_wire.socket_path(env))
    good = _request(root, env, "deploy")
    kept_in_postgres = tmp_path / "pg"
    _dream(["init", "-w", str(kept_in_postgres)], env)  # made as SQLite, then pointed away
    (kept_in_postgres / "dreamer.toml").write_text(
        '[memory.store]\nurl = "postgresql://dreamer@127.0.0.1:9/none"\n'
    )
    cases = [
        (b"not json\n", "not a JSON request"),
        (b"[1, 2]\n", "a request is a JSON object"),
        ({**good, "protocol": 99}, "door protocol 99 asked"),
        ({**good, "version": "0.0.1"}, "dreamer '0.0.1' asked"),
        ({**good, "package": "/elsewhere/dreamer"}, "dreamer from '/elsewhere/dreamer'"),
        ({**good, "env": {"PATH": "/bin"}}, "env: the asker's settings variables"),
        ({**good, "env": {"DREAM_MODEL": 3}}, "env: the asker's settings variables"),
        (_request(kept_in_postgres, env, "deploy"), "kept in PostgreSQL"),
        ({**good, "root": "relative/path"}, "root: an absolute workspace folder"),
        ({**good, "limit": True}, "limit: a whole number"),
        ({**good, "limit": 0}, "limit: from 1 to"),
        ({**good, "search_type": "all"}, "search_type: one of"),
        ({**good, "memory": [0, 0]}, "another folder here"),
        ({**good, "root": str(tmp_path / "none")}, "memory folder"),
    ]
    for request, why in cases:
        line = request if isinstance(request, bytes) else json.dumps(request).encode() + b"\n"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(path)
            sock.sendall(line)
            answer = json.loads(sock.makefile("rb").readline())
        assert why in answer["declined"], (request, answer)
    # a well-formed request still gets its answer, after the go
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(path)
        reader = sock.makefile("rb")
        sock.sendall(json.dumps(good).encode() + b"\n")
        assert json.loads(reader.readline()) == {"ready": True}
        sock.sendall(b'{"go": true}\n')
        assert json.loads(reader.readline()) == {"hits": []}
    assert serve.proc.poll() is None
    assert _logged(root) == ["deploy"]  # only the request that said go was searched


def test_serve_without_a_door(tmp_path, env):
    root = tmp_path / "a"
    _dream(["init", "-w", str(root)], env)
    serve = Serve(root, env, "--no-door")
    try:
        serve.wait_for("dream serve: 1 workspace(s)")
        assert not search_wire.socket_path(env).exists()
        assert "search door" not in serve.log()
    finally:
        serve.stop()


def test_a_socket_path_too_long_opens_no_door(tmp_path, env):
    root = tmp_path / "a"
    _dream(["init", "-w", str(root)], env)
    _dream(["note", NOTES[0], "-w", str(root)], env)
    deep = tmp_path / ("r" * 60) / ("u" * 60)
    deep.mkdir(parents=True, mode=0o700)
    long_env = {**env, "XDG_RUNTIME_DIR": str(deep)}
    serve = Serve(root, long_env)
    try:
        serve.wait_for("is too long for a Unix socket")
        out, modules = _search(root, ["deploy"], long_env, tmp_path / "p")
        assert "numpy" in modules and NOTES[0] in out
    finally:
        serve.stop()


def test_a_serve_whose_code_changed_on_disk_lets_searches_run_by_themselves(tmp_path, env):
    # e.g. dreamer upgraded in place, or a checkout edited, while serve runs the old code
    copy = tmp_path / "copy"
    shutil.copytree(
        Path(search_wire.__file__).parents[1],
        copy / "dreamer",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    env = {**env, "PYTHONPATH": str(copy)}
    root = tmp_path / "a"
    _dream(["init", "-w", str(root)], env)
    _dream(["note", NOTES[0], "-w", str(root)], env)
    serve = Serve(root, env)
    try:
        serve.wait_for("search door: warm")
        out, modules = _search(root, ["deploy"], env, tmp_path / "p")
        assert "numpy" not in modules and NOTES[0] in out
        changed = copy / "dreamer" / "retrieval" / "search.py"
        later = changed.stat().st_mtime + 60
        os.utime(changed, (later, later))
        out, modules = _search(root, ["deploy"], env, tmp_path / "q")
        assert "numpy" in modules and NOTES[0] in out
        assert f"{changed} changed since serve loaded it" in serve.log()
    finally:
        serve.stop()
    assert _logged(root) == ["deploy", "deploy"]


def test_a_door_that_dies_after_go_leaves_the_search_to_the_process(tmp_path, env):
    # A fake door at the transport boundary: it takes the request, says ready, hears the go
    # and drops the connection, as a serve killed in the middle of a search would.
    root = tmp_path / "a"
    _dream(["init", "-w", str(root)], env)
    _dream(["note", NOTES[0], "-w", str(root)], env)
    path = search_wire.socket_path(env)
    path.parent.mkdir(mode=0o700)
    heard: list[bytes] = []

    def dying_door(listener: socket.socket) -> None:
        conn, _ = listener.accept()
        with conn:
            reader = conn.makefile("rb")
            heard.append(reader.readline())
            conn.sendall(b'{"ready": true}\n')
            heard.append(reader.readline())

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(1)
        fake = threading.Thread(target=dying_door, args=(listener,), daemon=True)
        fake.start()
        out, modules = _search(root, ["deploy", "--json"], env, tmp_path / "p")
        fake.join(timeout=10)
    assert json.loads(heard[0])["query"] == "deploy" and json.loads(heard[1]) == {"go": True}
    assert "numpy" in modules  # searched by itself after the door went away
    alone, _ = _search(root, ["deploy", "--json"], _no_door(env, tmp_path), tmp_path / "q")
    assert out == alone and json.loads(out)[0]["text"] == NOTES[0]
