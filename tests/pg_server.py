"""A throwaway PostgreSQL 16 (with pgvector) that the test suite and the benchmarks start.

The server comes from the `pgserver` wheel, which ships PostgreSQL and the pgvector extension as
relocatable binaries: nothing is installed by hand, so a fresh clone with the project's own pip
extras gets the same server on a laptop and in CI. Only the binaries are used; pgserver's own
Python API is not (as root it runs `useradd` and widens the permissions of every folder above
its data and install folders, which a test suite should not do to the machine).

    with start_postgres(tmp_path) as server:
        psycopg.connect(server.url)           # the `postgres` superuser, database `postgres`
        psycopg.connect(server.url_for("x"))  # another database on the same server

How it runs:

- `initdb` makes a fresh cluster (UTF-8, C.UTF-8 locale when the C library has it, timezone UTC,
  `trust` authentication), then `postgres` runs in the foreground as our child, in its own
  session. It listens on a unix socket only, in a private (0700) folder, never on TCP, so no
  port can clash and no other user on the machine can connect. Durability is off
  (`fsync`, `synchronous_commit`, `full_page_writes`): the data is thrown away anyway.
- PostgreSQL refuses to run as root. When the tests run as root (CI does), the server runs as an
  unprivileged account instead: `nobody` by default (present on every Linux; nothing is created),
  or the account named by `DREAMER_PG_USER`. Its folder is then made in a temporary folder that
  account can reach, and the wheel's binaries are hard-linked (or copied) into it, since the
  virtualenv may sit in a folder only root can enter (`mktemp -d` makes such folders).
- Start-up is bounded: `initdb` and the wait for "ready" share one deadline (`timeout`, or
  `DREAMER_PG_START_TIMEOUT` seconds, default 60); past it everything started is killed and
  `PostgresUnavailable` says what happened, with the end of the server's log.
- `stop()` always stops the server (fast shutdown, then immediate, then SIGKILL to its process
  group) and removes its folder. It also runs at interpreter exit, and on Linux the server is
  asked to shut down if the thread that started it dies, so a killed test run leaves no server.

Any reason the server cannot start raises `PostgresUnavailable(reason)`; the test fixtures
(`tests/pg_fixture.py`) turn it into a skip with that reason (or a failure when
`DREAMER_REQUIRE_POSTGRES` is set), `dream bench fleet` into one error line.

It is the tests' (`tests/pg.py` re-exports it, adding `unavailable`) and imports only the
standard library, so the suite runs without the benchmarks installed. `dream bench fleet` and
`pg-compare` start their server the same way: the benchmarks package (benchmarks/) holds a link
to this file, and its wheel a copy of it, so there is one starter to maintain.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO, Any
from urllib.parse import quote

__all__ = ["PgServer", "PostgresUnavailable", "start_postgres"]

SUPERUSER = "postgres"
PORT = 5432  # only names the socket file (.s.PGSQL.5432); every server has its own socket folder
DEFAULT_START_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
# The server's settings, on its command line so that they are visible in `ps`.
SETTINGS = {
    "listen_addresses": "",  # unix socket only
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "timezone": "UTC",
}
# Unix socket paths are limited to about 104-108 bytes, depending on the system.
_MAX_SOCKET_PATH = 100


class PostgresUnavailable(RuntimeError):
    """PostgreSQL could not be started here; `reason` says why, in one sentence or two."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PgServer:
    """A running server: connect with `url`; `stop()` (or leaving the `with`) ends it."""

    def __init__(
        self,
        *,
        process: subprocess.Popen[bytes],
        root: Path,
        data_dir: Path,
        socket_dir: Path,
        log_path: Path,
        version: str,
        owned_dirs: list[Path],
        respawn: Callable[[], subprocess.Popen[bytes]] | None = None,
    ) -> None:
        self.process = process
        self.root = root
        self.data_dir = data_dir
        self.socket_dir = socket_dir
        self.log_path = log_path
        self.version = version
        self._owned_dirs = owned_dirs
        self._respawn = respawn
        self._stopped = False
        self._owner_pid = os.getpid()
        self.url = self.url_for(SUPERUSER)
        atexit.register(self._stop_at_exit)

    @property
    def pid(self) -> int:
        """The postmaster's process id (its backends are its children)."""
        return self.process.pid

    def url_for(self, database: str) -> str:
        """A libpq URL for `database` on this server, as the superuser, over the unix socket."""
        host = quote(str(self.socket_dir), safe="")
        return f"postgresql://{SUPERUSER}@/{quote(database, safe='')}?host={host}&port={PORT}"

    def restart(self, *, timeout: float = DEFAULT_START_TIMEOUT) -> None:
        """Shut the server down (fast: every connection is closed) and start it again on the
        same data and socket, as a restart by an administrator or a crash and recovery does."""
        self.halt()
        self.resume(timeout=timeout)

    def halt(self) -> None:
        """Shut the server down, keeping its data: `resume()` starts it again."""
        if self._stopped or self._respawn is None:
            raise PostgresUnavailable("this server cannot be restarted (stopped, or not ours)")
        _terminate(self.process)

    def resume(self, *, timeout: float = DEFAULT_START_TIMEOUT) -> None:
        """Start a halted server again on the same data and socket; return when it is ready."""
        if self._stopped or self._respawn is None or self.process.poll() is None:
            raise PostgresUnavailable("only a halted server can be resumed")
        self.process = self._respawn()
        try:
            _wait_ready(
                self.process, self.data_dir, self.socket_dir, _Deadline(timeout), self.log_path
            )
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server, whatever state it is in, and remove its folders. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self._stop_at_exit)
        try:
            _terminate(self.process)
        finally:
            for folder in self._owned_dirs:
                shutil.rmtree(folder, ignore_errors=True)

    def _stop_at_exit(self) -> None:
        if os.getpid() == self._owner_pid:  # not in a forked child that exits normally
            self.stop()

    def __enter__(self) -> PgServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else f"pid {self.pid}"
        return f"<PgServer PostgreSQL {self.version} {state} at {self.socket_dir}>"


def start_postgres(tmp_dir: Path | str, *, timeout: float | None = None) -> PgServer:
    """Start a fresh PostgreSQL server with its files under `tmp_dir` and return it when ready.

    Raises `PostgresUnavailable` (never hangs) when it cannot: no `pgserver` wheel, not a POSIX
    system, no unprivileged account to run as when we are root, or not ready within `timeout`
    seconds (default `DREAMER_PG_START_TIMEOUT`, else 60). Nothing is left behind on failure.
    """
    if timeout is None:
        timeout = float(os.environ.get("DREAMER_PG_START_TIMEOUT", DEFAULT_START_TIMEOUT))
    deadline = _Deadline(timeout)
    if os.name != "posix":
        raise PostgresUnavailable("the test PostgreSQL needs a POSIX system (unix sockets)")
    install = _wheel_install()
    account = _service_account()  # None: run as ourselves

    owned_dirs: list[Path] = []
    try:
        try:
            root = _make_root(Path(tmp_dir), account)
            owned_dirs.append(root)
            bindir = install / "bin"
            if account is not None:
                bindir = _mirror_install(install, root / "pg")
            socket_dir = root / "socket"
            if len(str(socket_dir / f".s.PGSQL.{PORT}")) > _MAX_SOCKET_PATH:
                socket_dir = Path(tempfile.mkdtemp(prefix="pg-", dir="/tmp"))
                owned_dirs.append(socket_dir)
            else:
                socket_dir.mkdir(mode=0o700)
            if account is not None:
                os.chown(socket_dir, account.uid, account.gid)
        except OSError as exc:
            raise PostgresUnavailable(f"cannot prepare the server's folders: {exc}") from exc
        data_dir = root / "data"
        log_path = root / "postgres.log"

        version = _run([str(bindir / "postgres"), "-V"], account, deadline, log_path).strip()
        _initdb(bindir, data_dir, account, deadline, log_path)
        process = _spawn_postgres(bindir, data_dir, socket_dir, account, log_path)
        try:
            _wait_ready(process, data_dir, socket_dir, deadline, log_path)
        except BaseException:
            _terminate(process)
            raise
        return PgServer(
            process=process,
            root=root,
            data_dir=data_dir,
            socket_dir=socket_dir,
            log_path=log_path,
            version=version.removeprefix("postgres (PostgreSQL) "),
            owned_dirs=owned_dirs,
            respawn=lambda: _spawn_postgres(bindir, data_dir, socket_dir, account, log_path),
        )
    except BaseException:
        for folder in owned_dirs:
            shutil.rmtree(folder, ignore_errors=True)
        raise


# --- where the binaries are, and who runs them --------------------------------------------------


def _wheel_install() -> Path:
    """The `pginstall` folder inside the installed pgserver wheel (found without importing it)."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailable(
            "the pgserver wheel (PostgreSQL + pgvector binaries) is not installed; "
            "install it with pip install 'pgserver>=0.1.4,<0.2' (the project's test extra has it)"
        )
    install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if not (install / "bin" / "postgres").is_file():
        raise PostgresUnavailable(f"the pgserver wheel has no PostgreSQL binaries in {install}")
    return install


class _Account:
    """The unprivileged account the server runs as when we are root."""

    def __init__(self, name: str, uid: int, gid: int) -> None:
        self.name, self.uid, self.gid = name, uid, gid


def _service_account() -> _Account | None:
    if os.geteuid() != 0:
        return None
    import pwd

    name = os.environ.get("DREAMER_PG_USER", "nobody")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise PostgresUnavailable(
            f"PostgreSQL refuses to run as root and there is no account {name!r} to run it as; "
            "set DREAMER_PG_USER to an unprivileged account"
        ) from None
    if entry.pw_uid == 0:
        raise PostgresUnavailable(f"DREAMER_PG_USER={name!r} is root; PostgreSQL refuses root")
    return _Account(name, entry.pw_uid, entry.pw_gid)


def _reachable(folder: Path, account: _Account) -> bool:
    """Whether `account` may enter `folder` (search permission on it and every parent)."""
    for part in (folder, *folder.parents):
        st = part.stat()
        if st.st_uid == account.uid:
            bit = stat.S_IXUSR
        elif st.st_gid == account.gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return False
    return True


def _make_root(tmp_dir: Path, account: _Account | None) -> Path:
    """A fresh private folder for this server: in `tmp_dir`, or, when the server's account
    cannot enter `tmp_dir` (pytest's are 0700 root), in the system's temporary folder."""
    tmp_dir = tmp_dir.resolve()
    if account is not None:
        candidates = [tmp_dir, Path(tempfile.gettempdir()).resolve(), Path("/tmp")]
        usable = [c for c in candidates if c.is_dir() and _reachable(c, account)]
        if not usable:
            raise PostgresUnavailable(
                f"no temporary folder that account {account.name!r} can enter "
                f"(tried {', '.join(map(str, candidates))})"
            )
        tmp_dir = usable[0]
    root = Path(tempfile.mkdtemp(prefix="dreamer-pg-", dir=tmp_dir))
    if account is not None:
        os.chown(root, account.uid, account.gid)
    return root


def _mirror_install(install: Path, dest: Path) -> Path:
    """Hard-link (or copy) the wheel's PostgreSQL into `dest`, where the server's account can
    read it, keeping the layout the binaries' RPATH expects ($ORIGIN/../../../pgserver.libs).
    Hard links cost no space; a file the account could not read through its link is copied."""
    package = install.parent
    sources = [(install, dest / package.name / install.name)]
    libs = package.parent / f"{package.name}.libs"  # auditwheel's vendored libpq & co.
    if libs.is_dir():
        sources.append((libs, dest / libs.name))
    for source, target in sources:
        shutil.copytree(source, target, symlinks=True, copy_function=_link_or_copy)
    for folder, _dirs, _files in os.walk(dest):
        os.chmod(folder, 0o755)
    return dest / package.name / install.name / "bin"


def _link_or_copy(source: str, target: str) -> None:
    mode = os.stat(source).st_mode
    needed = stat.S_IROTH | (stat.S_IXOTH if mode & stat.S_IXUSR else 0)
    if mode & needed == needed:
        try:
            os.link(source, target)
            return
        except OSError:  # another file system, or links not allowed: copy
            pass
    shutil.copy2(source, target)
    os.chmod(target, stat.S_IMODE(mode) | needed)


class _Deadline:
    """One time limit shared by every step of the start-up."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self._end - time.monotonic())


# --- running the binaries ----------------------------------------------------------------------


def _env() -> dict[str, str]:
    """Our environment without PG* variables (PGPORT, PGDATA ... would steer the server)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["TZ"] = "UTC"  # initdb otherwise probes the zone files for the timezone
    return env


def _parent_death_signal() -> Callable[[], None] | None:
    """On Linux, a `preexec_fn` asking the kernel to send SIGINT (fast shutdown) to the child
    when the thread that started it dies, so that a killed test run leaves no server behind.
    It runs after the switch to the server's account (which would clear the setting)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:  # resolved now: the child, between fork and exec, must not import or load anything
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig, sigint = 1, int(signal.SIGINT)
    return lambda: prctl(pr_set_pdeathsig, sigint)


_DIE_WITH_PARENT = _parent_death_signal()


def _popen(
    args: list[str],
    account: _Account | None,
    stdout: int | IO[bytes],
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    user: dict[str, Any] = {}
    if account is not None:  # drop root: uid, gid, and no supplementary groups
        user = {"user": account.uid, "group": account.gid, "extra_groups": []}
    try:
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.STDOUT,
            env=_env(),
            start_new_session=True,  # own process group: killable as a whole, no terminal ^C
            preexec_fn=preexec_fn,
            **user,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        who = f" as {account.name!r}" if account else ""
        raise PostgresUnavailable(f"cannot run {Path(args[0]).name}{who}: {exc}") from exc


def _run(args: list[str], account: _Account | None, deadline: _Deadline, log_path: Path) -> str:
    """Run a short command to completion before `deadline`; its output, or the reason it failed."""
    name = Path(args[0]).name
    process = _popen(args, account, subprocess.PIPE)
    try:
        out, _ = process.communicate(timeout=deadline.left())
    except subprocess.TimeoutExpired:
        _kill_group(process)
        raise PostgresUnavailable(f"{name} did not finish within {_limit(deadline)}") from None
    text = out.decode(errors="replace")
    with open(log_path, "a") as log:
        log.write(f"$ {' '.join(args)}\n{text}\n")
    if process.returncode != 0:
        raise PostgresUnavailable(
            f"{name} failed with exit code {process.returncode}: {_tail(text)}"
        )
    return text


def _initdb(
    bindir: Path, data_dir: Path, account: _Account | None, deadline: _Deadline, log_path: Path
) -> None:
    base = [str(bindir / "initdb"), "-D", str(data_dir), "-U", SUPERUSER, "--auth=trust"]
    base += ["--encoding=UTF8", "--no-sync", "--no-instructions"]
    try:  # C.UTF-8: byte-order collation, but Unicode-aware lower() and full-text parsing
        _run([*base, "--locale=C.UTF-8"], account, deadline, log_path)
    except PostgresUnavailable as exc:
        if "locale" not in exc.reason:
            raise
        shutil.rmtree(data_dir, ignore_errors=True)
        _run([*base, "--locale=C"], account, deadline, log_path)


def _spawn_postgres(
    bindir: Path, data_dir: Path, socket_dir: Path, account: _Account | None, log_path: Path
) -> subprocess.Popen[bytes]:
    args = [str(bindir / "postgres"), "-D", str(data_dir), "-k", str(socket_dir), "-p", str(PORT)]
    for name, value in SETTINGS.items():
        args += ["-c", f"{name}={value}"]
    with open(log_path, "ab") as log:  # the child keeps its own descriptor
        return _popen(args, account, log, _DIE_WITH_PARENT)


def _wait_ready(
    process: subprocess.Popen[bytes],
    data_dir: Path,
    socket_dir: Path,
    deadline: _Deadline,
    log_path: Path,
) -> None:
    """Wait until postmaster.pid says "ready" (what `pg_ctl -w` waits for) and the socket is
    there; fail fast if the server exits, and at the deadline."""
    pid_file = data_dir / "postmaster.pid"
    socket = socket_dir / f".s.PGSQL.{PORT}"
    while True:
        code = process.poll()
        if code is not None:
            raise PostgresUnavailable(
                f"postgres exited with code {code} while starting: {_tail(_read(log_path))}"
            )
        lines = _read(pid_file).splitlines()
        if len(lines) >= 8 and lines[7].strip() == "ready" and socket.exists():
            return
        if deadline.left() == 0:
            raise PostgresUnavailable(
                f"PostgreSQL was not ready within {_limit(deadline)}: {_tail(_read(log_path))}"
            )
        time.sleep(0.02)


def _terminate(process: subprocess.Popen[bytes]) -> None:
    """Fast shutdown (SIGINT); if that hangs, immediate shutdown (SIGQUIT); then SIGKILL."""
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGINT, STOP_TIMEOUT), (signal.SIGQUIT, 5.0)):
        try:
            process.send_signal(sig)
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue
    _kill_group(process)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process and everything in its group (it leads its own session), reap it,
    and give the rest of the group (initdb's or the postmaster's children) a moment to go.
    Killing before reaping keeps the group id from being reused by an unrelated process."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)


def _limit(deadline: _Deadline) -> str:
    return f"the start-up timeout of {deadline.seconds:g}s (DREAMER_PG_START_TIMEOUT)"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _tail(text: str, lines: int = 8) -> str:
    return " | ".join(line for line in text.strip().splitlines()[-lines:]) or "(no output)"
