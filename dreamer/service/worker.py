"""``dream worker``: processes on any number of machines sharing the jobs of many workspaces
through a PostgreSQL jobs table (``dreamer.store.postgres.jobs``).

A workspace is registered once (``dream worker add PATH``): one row per enabled job
(``consolidate``, ``dream``), first due when the workspace's own journal says (as ``dream serve``
would continue it), at the interval its settings give. A worker loops: claim one due job
(``FOR UPDATE SKIP LOCKED``, so two workers never take the same row), run it exactly as ``dream
tick`` does (``schedule.run_job``: the outcome lands in the workspace's ``runs`` and ``dream
status`` too), then finish it, which schedules the next due time and counts the run, but only
while the worker's lease still holds (its fencing token). While a job runs, a heartbeat renews
the lease every third of its length, so a long dream keeps its job; a worker that dies (SIGKILL,
a lost machine) stops renewing and, once its lease expires, another worker takes the job and
runs that same due time. A due time therefore counts one finished run, whatever the workers do.

A workspace is named in the jobs table by its absolute path. Its store may be a SQLite file in
its folder, which then must be the same folder for every machine running its jobs, or rows in
PostgreSQL (``memory.store.url``): crystals, the scratch, MEMORY.md's committed state, the
journal and the lease all live there, so a worker whose machine has no folder at that path
makes an empty one (for the lock file and the MEMORY.md it writes) and runs the job. Settings
come from the folder's ``dreamer.toml`` if there is one, else from the worker's environment
(run workers with ``DREAM_STORE_URL`` set). Time is a parameter (``clock``); only the CLI uses
the real one.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamer.config import load_settings
from dreamer.dream.synth import Synthesizer
from dreamer.errors import DreamError, StoreUnavailable
from dreamer.memory.workspace import Workspace
from dreamer.service.schedule import (
    Clock,
    cadence,
    enabled_jobs,
    ensure_migrated,
    interval,
    next_due,
    run_job,
)
from dreamer.store import is_postgres
from dreamer.support.times import as_utc, utc_now

if TYPE_CHECKING:
    from dreamer.store.postgres.jobs import Claim, JobQueue

log = logging.getLogger("dreamer.worker")
DEFAULT_LEASE = timedelta(minutes=5)
RECENT_OUTCOMES = 100  # a worker runs for months: it keeps the newest outcomes, counts them all


def default_owner() -> str:
    """A worker's name: host and process id."""
    return f"{socket.gethostname()}:{os.getpid()}"


def add_workspaces(
    queue: JobQueue,
    roots: Iterable[str | Path],
    now: datetime,
    *,
    environ: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Register every enabled job of these workspaces; what was added or updated."""
    added = []
    for root in roots:
        with Workspace.open(root, create=False, environ=environ) as ws:
            for job in enabled_jobs(ws):
                due = next_due(ws, job, now) or as_utc(now)
                every = interval(ws, job, now).total_seconds()
                new = queue.register(str(ws.root), job, every, due)
                added.append({"workspace": str(ws.root), "job": job, "new": new, "due": due})
    return added


def _store_is_shared(root: str | Path, environ: dict[str, str] | None) -> bool:
    """Whether this workspace's store is PostgreSQL as seen from here, so its folder may be
    missing on this machine (the worker then makes an empty one)."""
    folder = Path(root)
    if (folder / "memory").is_dir():
        return False  # it is here: nothing to make
    settings = load_settings(folder / "dreamer.toml", environ=environ)
    return is_postgres(settings.store_url)


@dataclass
class Outcome:
    """What a worker did with one claimed job."""

    claim: Claim
    outcome: str
    detail: str | None
    counted: bool  # False when the job lease was lost before the run finished


class _Heartbeat:
    """Renews a claim's lease every third of its length while the job runs."""

    def __init__(self, queue: JobQueue, claim: Claim, clock: Clock, lease: timedelta):
        self.queue, self.claim, self.clock, self.lease = queue, claim, clock, lease
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name="lease-heartbeat")

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        while not self._stop.wait(self.lease.total_seconds() / 3):
            try:
                renewed = self.queue.renew(self.claim, as_utc(self.clock()), self.lease)
            except StoreUnavailable as e:  # try again at the next beat; finish will tell
                log.error("%s %s: lease not renewed: %s", self.claim.workspace, self.claim.kind, e)
                continue
            if not renewed:
                log.warning("%s %s: job lease lost", self.claim.workspace, self.claim.kind)
                return


def run_claim(
    queue: JobQueue,
    claim: Claim,
    *,
    clock: Clock = utc_now,
    lease: timedelta = DEFAULT_LEASE,
    environ: dict[str, str] | None = None,
    synthesizer: Synthesizer | None = None,
) -> Outcome:
    """Run one claimed job in its workspace and finish it in the jobs table."""
    begun = as_utc(clock())  # to the microsecond: job lateness is measured from it
    started = begun.replace(microsecond=0)
    every: float | None = None
    following: datetime | None = None
    with _Heartbeat(queue, claim, clock, lease):
        try:
            shared = _store_is_shared(claim.workspace, environ)
            with Workspace.open(claim.workspace, create=shared, environ=environ) as ws:
                ensure_migrated(ws, started)
                every = interval(ws, claim.kind, started).total_seconds()
                record = run_job(ws, claim.kind, started, clock=clock, synthesizer=synthesizer)
                outcome, detail = record.outcome, record.detail
                if cadence(ws, claim.kind).is_cron:  # the next cron time, not due + interval
                    following = cadence(ws, claim.kind).first_after(started)
        except DreamError as e:  # the workspace is gone, unreadable, misconfigured ...
            outcome, detail = "failed", f"{type(e).__name__}: {e}"
        except Exception as e:  # a bug in one workspace's job must not stop the fleet
            log.exception("%s %s: failed", claim.workspace, claim.kind)
            outcome, detail = "failed", f"{type(e).__name__}: {e}"
    counted = queue.finish(claim, begun, as_utc(clock()), outcome, detail, every, following)
    if not counted:
        log.warning("%s %s: job lease lost; this run is not counted", claim.workspace, claim.kind)
    return Outcome(claim, outcome, detail, counted)


class Worker:
    """One worker process: claims due jobs one at a time until stopped."""

    def __init__(
        self,
        queue: JobQueue,
        *,
        owner: str | None = None,
        clock: Clock = utc_now,
        lease: timedelta = DEFAULT_LEASE,
        poll_seconds: float = 1.0,
        environ: dict[str, str] | None = None,
        synthesizer: Synthesizer | None = None,
        keep: int = RECENT_OUTCOMES,
    ):
        self.queue = queue
        self.owner = owner or default_owner()
        self.clock = clock
        self.lease = lease
        self.poll_seconds = poll_seconds
        self.environ = environ
        self.synthesizer = synthesizer
        self.done: deque[Outcome] = deque(maxlen=keep)  # the newest outcomes, for logs and tests
        self.counts: Counter[str] = Counter()  # every outcome since start, by name
        self._stop = threading.Event()

    def step(self) -> Outcome | None:
        """Claim and run one due job; None when nothing is due."""
        claims = self.queue.claim(self.owner, as_utc(self.clock()), self.lease)
        if not claims:
            return None
        outcome = run_claim(
            self.queue,
            claims[0],
            clock=self.clock,
            lease=self.lease,
            environ=self.environ,
            synthesizer=self.synthesizer,
        )
        log.info(
            "%s %s (due %s): %s%s",
            outcome.claim.workspace,
            outcome.claim.kind,
            outcome.claim.due_at.isoformat(),
            outcome.outcome,
            "" if outcome.counted else " (job lease lost: not counted)",
        )
        self.done.append(outcome)
        self.counts[outcome.outcome] += 1
        return outcome

    def stop(self, *_: Any) -> None:
        """Stop after the job in hand (signal handlers call this)."""
        self._stop.set()

    def run(self, *, until_idle: bool = False, max_jobs: int | None = None) -> int:
        """Work until stopped (or, with ``until_idle``, until no job is due or held); the
        number of jobs run."""
        ran = 0
        log.info("worker %s: ready", self.owner)
        while not self._stop.is_set() and (max_jobs is None or ran < max_jobs):
            try:
                if self.step() is not None:
                    ran += 1
                    continue
                if until_idle and self.queue.pending(as_utc(self.clock())) == (0, 0):
                    break
            except StoreUnavailable as e:
                # The jobs database went away (a restart, the network): wait, reconnect, go on.
                # A job in hand was not counted; its lease expires and its due time runs again.
                log.error("worker %s: %s", self.owner, e)
                self._stop.wait(self.poll_seconds)
                try:
                    self.queue.reconnect()
                except StoreUnavailable as again:
                    log.error("worker %s: %s", self.owner, again)
                continue
            self._stop.wait(self.poll_seconds)
        return ran
