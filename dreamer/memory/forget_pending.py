"""Forget requests that wait for the user: a note asked to forget something a dream could not
take on its own (too many matches, a name two people share, another form of a word, nothing
clear), so it forgot nothing and asks.

Each waits in the meta table (``forget_request.<id of the asking note>``) until the user
confirms it (its matches are forgotten), dismisses it, or forgets its matches another way.
``pending_forget_requests`` is what ``dream status``, ``dream log``, the report and the
session-start block read (through ``lines``); ``dream forget --pending`` lists them. A request
that is done keeps only its outcome, never its words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Protocol

from dreamer.errors import UsageError
from dreamer.store import Store
from dreamer.support.times import iso

PREFIX = "forget_request."
WAITING = "needs confirmation"
MAX_MATCHES = 50  # ids kept per request; more is a query to narrow, not a list to confirm


class HasStore(Protocol):
    """What reading the waiting requests needs of a workspace."""

    @property
    def store(self) -> Store: ...


class CanForget(HasStore, Protocol):
    """What confirming a request needs of a workspace (``Workspace`` is one)."""

    def forget(self, ids: Sequence[int], *, reason: str, now: datetime) -> Any: ...


@dataclass
class Pending:
    """One forget request waiting for the user: who asked, what, what matched and why not."""

    request_id: int  # the note that asked
    target: str  # what it asked to forget, as written
    matches: list[int] = field(default_factory=list)
    why: str = ""
    at: str = ""
    state: str = WAITING
    names: list[str] = field(default_factory=list)  # a word of it is part of these names

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def record(store: Store, pending: Pending) -> None:
    """Keep a request for the user to confirm or dismiss."""
    pending.matches = pending.matches[:MAX_MATCHES]
    store.records.set_meta(f"{PREFIX}{pending.request_id}", json.dumps(pending.to_dict()))


def pending_forget_requests(ws: HasStore) -> list[Pending]:
    """The forget requests waiting for the user, oldest first."""
    return [item for item in _all(ws.store) if item.state == WAITING]


def lines(ws: HasStore) -> list[str]:
    """One line saying how many requests wait and how to answer them; none when none wait."""
    waiting = pending_forget_requests(ws)
    if not waiting:
        return []
    ids = ", ".join(str(item.request_id) for item in waiting[:5])
    return [
        f"{len(waiting)} forget request(s) need the user's confirmation (note(s) {ids}): "
        "nothing was forgotten; list them with 'dream forget --pending', then "
        "'dream forget --confirm ID' or 'dream forget --dismiss ID'"
    ]


def get(store: Store, request_id: int) -> Pending:
    """One waiting request, or UsageError naming the fix."""
    for item in pending_forget_requests(_Held(store)):
        if item.request_id == request_id:
            return item
    raise UsageError(
        f"no forget request {request_id} is waiting; 'dream forget --pending' lists those that are"
    )


def confirm(ws: CanForget, request_id: int, *, now: datetime) -> Any:
    """Forget what a waiting request matched (the user confirmed it); return the receipt."""
    item = get(ws.store, request_id)
    if item.names:
        raise UsageError(
            f"request {request_id} names one of {len(item.names)} people or things "
            f"({', '.join(item.names)}); forget the one meant by id ('dream forget ID', ids "
            f"{', '.join(map(str, item.matches))}), then 'dream forget --dismiss {request_id}'"
        )
    if not item.matches:
        raise UsageError(
            f"request {request_id} matched no memory clearly; find it with 'dream forget "
            f"--search WORDS', then 'dream forget --dismiss {request_id}'"
        )
    report = ws.forget(item.matches, reason=f"forget request in note #{request_id}", now=now)
    close(ws.store, request_id, "confirmed", now)
    return report


def dismiss(ws: HasStore, request_id: int, *, now: datetime) -> None:
    """Let a waiting request go: nothing is forgotten, and it stops asking."""
    get(ws.store, request_id)
    close(ws.store, request_id, "dismissed", now)


def close(store: Store, request_id: int, state: str, at: datetime) -> None:
    """Mark a request done (confirmed, dismissed, resolved): its words go, its outcome stays."""
    done = {"request_id": request_id, "state": state, "at": iso(at)}
    store.records.set_meta(f"{PREFIX}{request_id}", json.dumps(done))


def after_forget(
    store: Store, forgotten: Sequence[int], clean: Callable[[str], str], now: datetime
) -> int:
    """Drop forgotten ids from waiting requests, clean their words; close those left with no
    match. Return how many requests changed."""
    gone, changed = set(forgotten), 0
    for item in _all(store):
        if item.state != WAITING:
            continue
        matches = [i for i in item.matches if i not in gone]
        target = clean(item.target)
        if item.request_id in gone or (item.matches and not matches):
            close(store, item.request_id, "resolved", now)
            changed += 1
        elif matches != item.matches or target != item.target:
            item.matches, item.target = matches, target
            record(store, item)
            changed += 1
    return changed


def _all(store: Store) -> list[Pending]:
    out = []
    for _, value in store.records.meta_items(PREFIX):
        data = json.loads(value)
        out.append(
            Pending(
                int(data["request_id"]),
                data.get("target", ""),
                [int(i) for i in data.get("matches", [])],
                data.get("why", ""),
                data.get("at", ""),
                data.get("state", WAITING),
                list(data.get("names", [])),
            )
        )
    return sorted(out, key=lambda item: item.request_id)


@dataclass(frozen=True)
class _Held:
    store: Store
