"""A recording, fault-injecting file layer for crash-safety tests.

``Disk(monkeypatch)`` wraps ``os.open``, ``os.write``, ``os.fsync``, ``os.replace`` and
``os.unlink`` (the calls ``dreamer.support.files`` and the scratch make) with pass-through
fakes that record what reached which path, in order. ``crash_at(kind, n, after=...)`` makes
the n-th call of a kind raise ``Killed`` (a BaseException, as a kill is: no ``except OSError``
or ``except Exception`` can swallow it) before or right after the real call, which stands in
for a process killed between two steps. Only the ``os`` module is faked: the boundary below
dreamer, never dreamer's own functions.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR


class Killed(BaseException):
    """The process died here."""


@dataclass
class Event:
    """One call that reached the file layer."""

    kind: str  # open | write | fsync | replace | unlink
    path: str
    target: str | None = None  # replace: the destination
    flags: int = 0


@dataclass
class Disk:
    """Records the file calls and kills the process at the chosen one."""

    monkeypatch: pytest.MonkeyPatch
    events: list[Event] = field(default_factory=list)
    checks: list[Any] = field(default_factory=list)  # called with each event before it runs
    _paths: dict[int, str] = field(default_factory=dict)
    _crash: tuple[str, int, bool] | None = None
    _seen: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        real = {name: getattr(os, name) for name in ("open", "write", "fsync", "replace", "unlink")}

        def opened(path: Any, flags: int, mode: int = 0o777, *, dir_fd: Any = None) -> int:
            event = Event("open", str(Path(os.fspath(path)).resolve()), flags=flags)
            self._before(event)
            fd = real["open"](path, flags, mode, dir_fd=dir_fd)
            self._paths[fd] = event.path
            return fd

        def write(fd: int, data: Any) -> int:
            event = Event("write", self._paths.get(fd, f"fd:{fd}"))
            self._before(event)
            written = real["write"](fd, data)
            self._after(event)
            return written

        def fsync(fd: Any) -> None:
            number = fd if isinstance(fd, int) else fd.fileno()
            event = Event("fsync", self._paths.get(number, f"fd:{number}"))
            self._before(event)
            real["fsync"](fd)
            self._after(event)

        def replace(src: Any, dst: Any, **kwargs: Any) -> None:
            event = Event("replace", str(Path(src).resolve()), str(Path(dst).resolve()))
            self._before(event)
            real["replace"](src, dst, **kwargs)
            self._after(event)

        def unlink(path: Any, **kwargs: Any) -> None:
            event = Event("unlink", str(Path(path).resolve()))
            self._before(event)
            real["unlink"](path, **kwargs)
            self._after(event)

        for name, fake in (
            ("open", opened),
            ("write", write),
            ("fsync", fsync),
            ("replace", replace),
            ("unlink", unlink),
        ):
            self.monkeypatch.setattr(os, name, fake)

    def _before(self, event: Event) -> None:
        self.events.append(event)
        for check in self.checks:
            check(event)
        self._seen[event.kind] = self._seen.get(event.kind, 0) + 1
        if self._crash and self._crash[:2] == (event.kind, self._seen[event.kind]):
            if not self._crash[2]:
                raise Killed(f"killed before {event.kind} #{self._seen[event.kind]}")

    def _after(self, event: Event) -> None:
        if self._crash and self._crash[:2] == (event.kind, self._seen[event.kind]):
            if self._crash[2]:
                raise Killed(f"killed after {event.kind} #{self._seen[event.kind]}")

    def crash_at(self, kind: str, number: int, *, after: bool = False) -> None:
        """Kill the process at the ``number``-th (1-based) ``kind`` call from now on."""
        self._seen = {}
        self._crash = (kind, number, after)

    def reset(self) -> None:
        """Forget the recorded calls and the planned crash."""
        self.events.clear()
        self._seen = {}
        self._crash = None

    def count(self, kind: str) -> int:
        """How many calls of a kind were recorded."""
        return sum(1 for event in self.events if event.kind == kind)

    def unsynced(self) -> set[str]:
        """Paths written to whose last write no fsync of the same path followed."""
        dirty: set[str] = set()
        for event in self.events:
            if event.kind == "write":
                dirty.add(event.path)
            elif event.kind == "fsync":
                dirty.discard(event.path)
        return dirty

    def opened_for_writing(self) -> list[str]:
        """Paths opened with a write flag, in order."""
        return [e.path for e in self.events if e.kind == "open" and e.flags & _WRITE_FLAGS]
