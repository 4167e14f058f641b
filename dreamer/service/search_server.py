"""The search door: ``dream serve`` answers a fresh ``dream search`` of the same user.

A fresh ``dream search`` spends most of its time importing numpy and loading the embedder
before it can embed one query. A running serve has both loaded already, so it listens on a
Unix socket (``dreamer.support.search_wire.socket_path``: ``$XDG_RUNTIME_DIR/dreamer/search.sock``,
else ``door/search.sock`` in dreamer's cache folder) and searches for the process that asks.
For each request it opens the workspace the request names (``Workspace.open``, as the CLI
does), runs ``ws.search`` (which embeds waiting notes and logs the search, as the CLI's does),
closes it (the search log is written then) and answers the hits as dicts. The exchange and
why it has a ``go`` step are in ``dreamer.support.search_wire``.

The door answers only what the asking process would have answered itself. It opens the
workspace with the asker's settings variables (``DREAM_*``, and the few others
``dreamer.config`` reads, keys masked: ``dreamer.support.search_wire.settings_env``), not serve's
own, and declines anything else (the process then searches by itself, with the same
output): another door protocol, another dreamer version or copy of the package, dreamer's
code changed on disk since serve loaded it, a workspace folder that is not the same folder
here (another mount namespace), a workspace kept in PostgreSQL or one that cannot be opened.
Only the same user gets in: the folder is 0700, the socket 0600, and where the platform
tells (``SO_PEERCRED``) the peer's uid is checked too.

Requests are read on short-lived threads (at most ``MAX_CLIENTS`` at once) and searched one
at a time; a request that waits ``LOCK_WAIT`` seconds for its turn is declined as busy, so
the asking process can still search by itself within its budget.

The door a search leaves open (``keep_open``, the ``dream door`` command): without a serve,
a ``dream search`` that searched by itself starts a door of its own in the background
(``dreamer.memory.search_client.leave_open``), so the searches after it are answered warm. That
door is the same one serve opens, with three differences: it leaves after ``idle`` seconds without
a request; it leaves as soon as it cannot answer a request because it is stale (another
dreamer version or copy asked, or its code changed on disk), so the next search starts a
current one; and it leaves when asked to (``{"stop": true}``: ``dream door --stop``, or a
``dream serve`` starting, which then opens its own door in its place).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dreamer.errors import DreamError, LockHeld
from dreamer.memory.workspace import MAX_SEARCH_LIMIT, Workspace
from dreamer.store.kinds import SEARCH_TYPES
from dreamer.store.sqlite.store import SQLiteStore
from dreamer.support.files import DIR_MODE, FILE_MODE
from dreamer.support.locks import hold
from dreamer.support.search_wire import (
    LOCK_NAME,
    MAX_REQUEST_BYTES,
    PROTOCOL,
    available,
    is_setting,
    package_dir,
    too_long,
)
from dreamer.support.version import __version__

LOCK_WAIT = 2.0  # seconds a request waits for its turn; under the asking side's BUDGET
TAKE_OVER_WAIT = 5.0  # seconds serve waits for a door a search left to leave, once asked
DRAIN_WAIT = 30.0  # seconds a leaving standalone door gives the searches it is answering
CODE_CHECK_EVERY = 5.0  # seconds between a standalone door's looks at its code on disk
READ_WAIT = 2.0  # seconds a client gets to send its request, and then its go
MAX_CLIENTS = 8  # connections read at once; more are closed (they search by themselves)
log = logging.getLogger("dreamer.door")


class _Gone(Exception):
    """The asking process closed the connection, stalled, or sent more than a request holds."""


class Door:
    """A listening search door (``open``) until ``close``."""

    def __init__(
        self,
        path: Path,
        *,
        environ: Mapping[str, str] | None = None,
        warm: Sequence[Path] = (),
        standalone: bool = False,
    ):
        self.path = path
        # A door a search left (``keep_open``), not serve's: it leaves when stale or asked.
        self.standalone = standalone
        self.environ = dict(os.environ if environ is None else environ)  # for the warm-up
        self._warm = list(warm)
        self._stack = contextlib.ExitStack()
        self._listener: socket.socket | None = None
        self._bound: tuple[int, int] | None = None  # (device, inode) of the socket file made
        self._closed = threading.Event()
        self._turn = threading.Lock()  # one search at a time
        self._slots = threading.BoundedSemaphore(MAX_CLIENTS)
        self._code: dict[str, int] = {}  # dreamer module file -> its mtime when first seen
        self._warned: set[str] = set()
        self.held = False  # open() found the door's lock held by another process
        self.holder = ""  # that process's pid, as its lock file says
        self.used = time.monotonic()  # when a request last came (a standalone door's idle)
        self.leaving: str | None = None  # why a standalone door leaves (set once)
        self._leave = threading.Event()

    # --- opening and closing --------------------------------------------------------------

    def open(self) -> bool:
        """Listen at ``path``; False, with a log line saying why, when this serve opens none."""
        if not available():
            log.info("search door: none on this platform; each 'dream search' runs by itself")
            return False
        if too_long(self.path):
            log.warning(
                "search door: not opened, %s is too long for a Unix socket; set XDG_RUNTIME_DIR "
                "to a shorter folder (each 'dream search' runs by itself meanwhile)",
                self.path,
            )
            return False
        try:
            _own_folder(self.path.parent)
            self._stack.enter_context(hold(self.path.parent / LOCK_NAME, wait=False, busy="{pid}"))
        except LockHeld as e:
            self.held = True
            self.holder = str(e)
            if self.standalone:  # serve says who holds it once it has asked (take_over)
                log.info(
                    "search door: another process (pid %s) answers searches at %s; this one "
                    "opens none",
                    e,
                    self.path,
                )
            return False
        except (DreamError, OSError) as e:
            log.warning("search door: not opened (%s); each 'dream search' runs by itself", e)
            return False
        try:
            listener = self._listen()
        except (DreamError, OSError) as e:
            self._stack.close()
            log.warning("search door: not opened (%s); each 'dream search' runs by itself", e)
            return False
        if listener is None:
            self._stack.close()
            return False
        self.held = False
        self._listener = listener
        self._code_changed()  # what serve has loaded so far, as it is on disk now
        threading.Thread(target=self._accept, name="dreamer-door", daemon=True).start()
        if self._warm:
            threading.Thread(target=self._warm_up, name="dreamer-door-warm", daemon=True).start()
        log.info(
            "search door: open at %s; a fresh 'dream search' of this user is answered here (%s)",
            self.path,
            "until it is idle; stop it with 'dream door --stop'"
            if self.standalone
            else "turn it off with --no-door",
        )
        return True

    def take_over(self) -> bool:
        """``open``, first asking a door a search left to leave (serve's door replaces it)."""
        if self.open():
            return True
        if not self.held:
            return False  # it logged why
        if "stopped" not in (_ask_to_leave(self.path) or {}):  # another serve's door declines
            log.info(
                "search door: another dream serve (pid %s) answers searches at %s; this one "
                "opens none",
                self.holder,
                self.path,
            )
            return False
        deadline = time.monotonic() + TAKE_OVER_WAIT
        while time.monotonic() < deadline:
            time.sleep(0.1)
            if self.open():
                log.info("search door: the door a search left (pid %s) gave way", self.holder)
                return True
        log.warning(
            "search door: the door a search left (pid %s) did not leave within %g s; each "
            "'dream search' it does not answer runs by itself",
            self.holder,
            TAKE_OVER_WAIT,
        )
        return False

    def _listen(self) -> socket.socket | None:
        """The listening socket at ``path`` (the lock is ours), replacing a stale one."""
        try:
            found = os.lstat(self.path)
        except FileNotFoundError:
            found = None
        if found is not None:
            if not stat.S_ISSOCK(found.st_mode):
                log.warning(
                    "search door: not opened, %s is not a socket; remove it and restart serve",
                    self.path,
                )
                return None
            if _answers(self.path):
                log.warning(
                    "search door: not opened, something else answers at %s; each 'dream "
                    "search' runs by itself",
                    self.path,
                )
                return None
            os.unlink(self.path)
            log.info("search door: replaced a stale socket at %s (its serve was killed)", self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(self.path))
            os.chmod(self.path, FILE_MODE)  # the folder (0700) already keeps others out
            made = os.stat(self.path)
            self._bound = (made.st_dev, made.st_ino)
            listener.listen(16)
            listener.settimeout(0.5)  # accept wakes up to see a close
        except BaseException:
            listener.close()
            raise
        return listener

    def close(self) -> None:
        """Stop answering: close the socket, remove its file, let the door's lock go."""
        self._closed.set()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            with contextlib.suppress(OSError):
                now = os.lstat(self.path)
                if (now.st_dev, now.st_ino) == self._bound:  # never another serve's socket
                    os.unlink(self.path)
            log.info("search door: closed")
        self._stack.close()

    def drain(self, timeout: float) -> bool:
        """After ``close``: wait up to ``timeout`` seconds for the requests being answered
        (a process that exits under one cuts its search short); whether all finished."""
        deadline = time.monotonic() + timeout
        taken = 0
        for _ in range(MAX_CLIENTS):
            if not self._slots.acquire(timeout=max(deadline - time.monotonic(), 0)):
                break
            taken += 1
        for _ in range(taken):
            self._slots.release()
        return taken == MAX_CLIENTS

    def __enter__(self) -> Door:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- answering ------------------------------------------------------------------------

    def _accept(self) -> None:
        try:
            self._accept_until_closed()
        except Exception:  # noqa: BLE001 - a bug: stop answering, but never leave a socket
            # that accepts and never answers (every search would wait out its budget)
            log.exception("search door: stopped answering; each 'dream search' runs by itself")
            self.close()

    def _accept_until_closed(self) -> None:
        while not self._closed.is_set():
            listener = self._listener
            if listener is None:
                return
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError as e:
                if self._closed.is_set():
                    return
                log.warning("search door: accept failed (%s)", e)
                time.sleep(0.5)  # e.g. out of file descriptors: do not spin
                continue
            if not self._slots.acquire(blocking=False):
                conn.close()  # too many at once: that process searches by itself
                continue
            try:
                threading.Thread(target=self._serve_one, args=(conn,), daemon=True).start()
            except RuntimeError as e:  # no thread to be had: that process searches itself
                log.warning("search door: could not take a request (%s)", e)
                self._slots.release()
                conn.close()

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            with conn:
                conn.settimeout(READ_WAIT)
                peer = _peer_uid(conn)
                if peer is not None and peer != os.geteuid():
                    log.warning("search door: refused a connection from uid %d", peer)
                    return
                self._exchange(conn)
        except _Gone:
            log.debug("search door: the asking process went away")
        except Exception:  # noqa: BLE001 - one bad request must never stop serve
            log.exception("search door: a request failed")
        finally:
            self._slots.release()

    def _exchange(self, conn: socket.socket) -> None:
        started = time.perf_counter()
        self.used = time.monotonic()
        try:
            request = json.loads(_read_line(conn))
        except ValueError as e:
            _send(conn, {"declined": f"not a JSON request ({e})"})
            return
        if isinstance(request, dict) and request.get("stop") is True:
            self._stop_asked(conn)
            return
        why = self._check(request)
        if why is not None:
            log.debug("search door: declined (%s)", why)
            _send(conn, {"declined": why})
            if self.standalone and self._stale(request):
                self.leave(f"stale: {why}")  # the next search starts a current door
            return
        if not self._turn.acquire(timeout=LOCK_WAIT):
            _send(conn, {"declined": f"busy with other searches for {LOCK_WAIT:g} s"})
            return
        try:
            answer = self._search(conn, request)
        finally:
            self._turn.release()
        if answer is None:
            return
        log.debug(
            "search door: answered %s in %.0f ms",
            f"{len(answer['hits'])} hit(s)" if "hits" in answer else answer,
            (time.perf_counter() - started) * 1000,
        )

    def _search(self, conn: socket.socket, request: dict[str, Any]) -> dict[str, Any] | None:
        """Open, say ready, wait for go, search, answer, close: the answer sent (None when
        there was none to send: declined, or the asker left)."""
        try:
            # The asker's settings, not serve's: a serve started with other DREAM_* variables
            # (a systemd unit's) answers each search as its own process would.
            ws = Workspace.open(request["root"], create=False, environ=request["env"])
        except Exception as e:  # noqa: BLE001 - the asker opens it itself and says what is wrong
            _send(conn, {"declined": f"cannot open the workspace ({_describe(e)})"})
            return None
        try:
            if ws.settings.store_url:
                _send(conn, {"declined": "the workspace is kept in PostgreSQL"})
                return None
            _send(conn, {"ready": True})
            if _read_json(conn) != {"go": True}:
                raise _Gone  # it gave up before go: nothing searched, nothing logged
            answer = _answer(ws, request)
            # Sent before the connection closes (SQLite checkpoints its log then): the asker
            # need not wait for that. The search log is already written, as the command
            # writes it before it prints.
            _send(conn, answer)
            return answer
        finally:
            try:
                ws.close()
            except Exception as e:  # noqa: BLE001 - answered already; serve goes on
                log.warning("search door: closing %s failed (%s)", request["root"], _describe(e))

    def _stop_asked(self, conn: socket.socket) -> None:
        """``{"stop": true}``: a standalone door leaves; serve's stays while serve runs."""
        if not self.standalone:
            _send(conn, {"declined": "this door is dream serve's; it closes when serve stops"})
            return
        _send(conn, {"stopped": os.getpid()})
        self.leave("asked to stop")

    def _stale(self, request: Any) -> bool:
        """Whether ``request`` was declined because this door's code is not the asker's."""
        if not isinstance(request, dict):
            return False
        if (request.get("protocol"), request.get("version")) != (PROTOCOL, __version__):
            return True
        return request.get("package") != package_dir() or self._code_changed() is not None

    def leave(self, why: str) -> None:
        """Make ``wait`` return (a standalone door): the first reason given is kept."""
        if self.leaving is None:
            self.leaving = why
        self._leave.set()

    def wait(self, idle: float) -> str:
        """Until this door should leave: ``idle`` seconds without a request (0: never idle),
        ``leave`` called, or its code changed on disk. Returns why."""
        checked = time.monotonic()
        while not self._leave.wait(0.5):
            now = time.monotonic()
            if self._closed.is_set():
                self.leave("closed")
            elif idle and now - self.used >= idle and not self._turn.locked():
                self.leave(f"idle for {idle:g} s")
            elif now - checked >= CODE_CHECK_EVERY:
                checked = now
                changed = self._code_changed()
                if changed is not None:
                    self.leave(f"stale: {changed} changed on disk")
        return self.leaving or "closed"

    def _check(self, request: Any) -> str | None:
        """Why this door must not answer ``request`` (None: it answers exactly as the asker)."""
        if not isinstance(request, dict):
            return "a request is a JSON object"
        if request.get("protocol") != PROTOCOL:
            return f"door protocol {request.get('protocol')!r} asked; this serve speaks {PROTOCOL}"
        if request.get("version") != __version__:
            return f"dreamer {request.get('version')!r} asked; this serve runs {__version__}"
        if request.get("package") != package_dir():
            return f"dreamer from {request.get('package')!r}; this serve runs {package_dir()}"
        env = request.get("env")
        if not isinstance(env, dict) or not all(
            isinstance(name, str) and is_setting(name) and isinstance(value, str)
            for name, value in env.items()
        ):
            return "env: the asker's settings variables (DREAM_* and the like) are required"
        root, query, limit = request.get("root"), request.get("query"), request.get("limit")
        if not isinstance(root, str) or not os.path.isabs(root):
            return "root: an absolute workspace folder is required"
        if not isinstance(query, str):
            return "query: text is required"
        if isinstance(limit, bool) or not isinstance(limit, int):
            return "limit: a whole number is required"
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            return f"limit: from 1 to {MAX_SEARCH_LIMIT}"
        if request.get("search_type") not in SEARCH_TYPES:
            return f"search_type: one of {', '.join(SEARCH_TYPES)}"
        try:
            memory = os.stat(os.path.join(root, "memory"))
        except OSError as e:
            return f"the workspace's memory folder: {e.strerror}"
        if request.get("memory") != [memory.st_dev, memory.st_ino]:
            return "the workspace is another folder here (another mount namespace?)"
        changed = self._code_changed()
        if changed is not None:
            if changed not in self._warned:
                self._warned.add(changed)
                log.warning(
                    "search door: %s changed since serve loaded it; searches run by themselves "
                    "until 'dream serve' restarts",
                    changed,
                )
            return f"{changed} changed since serve loaded it; restart dream serve"
        return None

    def _code_changed(self) -> str | None:
        """A dreamer module file changed on disk since serve loaded it (an upgrade, an edit)."""
        for name, module in list(sys.modules.items()):
            if name != "dreamer" and not name.startswith("dreamer."):
                continue
            file = getattr(module, "__file__", None)
            if not file:
                continue
            try:
                mtime = os.stat(file).st_mtime_ns
            except OSError:
                return file
            if self._code.setdefault(file, mtime) != mtime:
                return file
        return None

    def _warm_up(self) -> None:
        """Load each served workspace's embedder and the search code before the first search."""
        from dreamer.retrieval.embed import embed_texts

        seen: set[str] = set()
        for root in self._warm:
            try:
                with Workspace.open(root, create=False, environ=self.environ) as ws:
                    if ws.embedder.name in seen:
                        continue
                    seen.add(ws.embedder.name)
                    embed_texts(ws.embedder, ["warm up"])
                    import dreamer.retrieval.search  # noqa: F401 - loaded before the first ask
            except Exception as e:  # noqa: BLE001 - the first search loads it instead
                log.debug("search door: no warm-up for %s (%s)", root, _describe(e))
        self._code_changed()
        log.debug("search door: warm (%s)", ", ".join(sorted(seen)) or "nothing")


def keep_open(
    path: Path,
    *,
    idle: float,
    warm: Sequence[Path] = (),
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """Run a standalone door at ``path`` until it should leave (``Door.wait``): why it left,
    or None when it did not open (another process answers there, or no door here)."""
    door = Door(path, environ=environ, warm=warm, standalone=True)
    if not door.open():
        return None
    try:
        why = door.wait(idle)
    finally:
        door.close()
        door.drain(DRAIN_WAIT)
    log.info("search door: left (%s)", why)
    return why


def stop(path: Path) -> str:
    """Ask the door at ``path`` to leave: what it answered, in words."""
    if not available():
        return "no search door on this platform"
    answer = _ask_to_leave(path)
    if answer is None:
        return f"no search door answers at {path}"
    if "stopped" in answer:
        return f"the search door (pid {answer['stopped']}) at {path} is leaving"
    return f"the search door at {path} stays: {answer.get('declined', answer)}"


def _ask_to_leave(path: Path) -> dict[str, Any] | None:
    """Send ``{"stop": true}`` to the door at ``path``: its answer (``{"stopped": pid}`` when
    it is leaving), or None when nothing of this user's answers there."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(READ_WAIT)
            sock.connect(str(path))
            peer = _peer_uid(sock)
            if peer is not None and peer != os.geteuid():
                return None
            sock.sendall(b'{"stop": true}\n')
            answer = json.loads(_read_line(sock))
    except (OSError, ValueError, _Gone):
        return None
    return answer if isinstance(answer, dict) else {"declined": repr(answer)}


def _answer(ws: Workspace, request: dict[str, Any]) -> dict[str, Any]:
    """Search and write the search log, as ``dream search`` does before it prints."""
    try:
        hits = ws.search(
            request["query"], limit=request["limit"], search_type=request["search_type"]
        )
        store = ws.store
        if isinstance(store, SQLiteStore):  # always (PostgreSQL is declined); the log is written
            store.settle()  # here, where the command's close writes it, and fails as it would
    except Exception as e:  # noqa: BLE001 - the asker searches itself and reports it
        log.warning("search door: a search failed (%s); it runs again in its process", _describe(e))
        return {"failed": _describe(e)}
    return {"hits": [hit.to_dict() for hit in hits]}


def _own_folder(folder: Path) -> None:
    """Make ``folder`` (0700) or check that it is this user's own and only theirs."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=DIR_MODE)
    found = os.lstat(folder)
    if not stat.S_ISDIR(found.st_mode):
        raise OSError(errno.ENOTDIR, f"{folder} is not a folder; remove it")
    if found.st_uid != os.geteuid():
        raise OSError(errno.EPERM, f"{folder} belongs to uid {found.st_uid}, not to this user")
    if found.st_mode & 0o777 != DIR_MODE:
        os.chmod(folder, DIR_MODE)


def _answers(path: Path) -> bool:
    """Whether a process still accepts connections at the socket ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def _peer_uid(conn: socket.socket) -> int | None:
    """The connected process's uid, where the platform tells (Linux: SO_PEERCRED)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None  # the folder's 0700 is the guard there
    creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def _read_line(conn: socket.socket) -> bytes:
    data = bytearray()
    while True:
        try:
            chunk = conn.recv(65536)
        except OSError as e:  # a timeout included
            raise _Gone from e
        if not chunk:
            raise _Gone
        end = chunk.find(b"\n")
        if end >= 0:
            return bytes(data + chunk[:end])
        data += chunk
        if len(data) > MAX_REQUEST_BYTES:
            raise _Gone


def _read_json(conn: socket.socket) -> Any:
    try:
        return json.loads(_read_line(conn))
    except (_Gone, ValueError):
        return None


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    try:
        # default=str: what the command's own --json does with a value JSON has no type for
        conn.sendall(json.dumps(message, default=str).encode("ascii") + b"\n")
    except OSError as e:
        raise _Gone from e


def _describe(error: BaseException) -> str:
    return str(error) if isinstance(error, DreamError) else f"{type(error).__name__}: {error}"
