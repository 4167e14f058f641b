"""``dream serve``: one process running the jobs of many workspaces on a bounded pool of workers.

Built for hundreds of workspaces on one machine:

- **Spread, not a herd.** A job that is due (or never ran) when serve starts is first run at a
  stable offset (``phase``: a hash of the workspace path and the job) within a window of
  ``SPREAD_STEP`` per workspace, at most its interval, and every interval after that; so 200
  workspaces' consolidations are spread over the 30 minutes instead of all starting in the
  same second, a restart keeps each job's place, and a single workspace starts at once. A job
  with a cron schedule fires at its cron times (APScheduler's ``CronTrigger``); one whose time
  passed while serve was down runs once, spread the same way.
- **Bounded work, bounded files.** Jobs run on ``workers`` threads (4 by default), whatever the
  number of workspaces. A run opens its workspace (one SQLite connection, its lock files) and
  closes it when done, so the open files are ``workers`` runs' worth, not the workspaces'.
- **One schedule for everyone.** Before running, a job checks the journal under the job's own
  lock file (``schedule.run_if_due``): a run started by ``dream tick``, ``dream run``, or
  another ``dream serve`` counts, so a dream by hand at t+15 s means no scheduled dream at
  t+30 s, and two serves over one workspace do not double its rate. A job that is not due is
  moved to its real due time, without a run.
- **Every outcome is recorded.** A run's outcome goes to the ``runs`` table (``dream status``)
  whatever it is, a failure to even open the workspace included (logged when the table itself
  cannot be written). A job whose previous run was still running, or still waiting for a free
  worker, when it came due again is recorded as ``overrun``: the run is not started twice, and
  the schedule says so instead of a log line alone.
- **A search door.** With ``door`` (the CLI's default), serve also answers a fresh
  ``dream search`` of the same user over a Unix socket, with its embedder already loaded
  (``dreamer.service.search_server``); closed first on a stop. A door a search left open (without a
  serve) is asked to leave, and serve's opens in its place.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, JobSubmissionEvent
from apscheduler.executors.base import BaseExecutor
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from dreamer.dream.synth import Synthesizer
from dreamer.errors import DreamError
from dreamer.memory.workspace import Workspace
from dreamer.service.schedule import (
    Clock,
    RunRecord,
    cadence,
    enabled_jobs,
    ensure_migrated,
    next_due,
    run_if_due,
)
from dreamer.service.search_server import Door
from dreamer.store import open_store
from dreamer.support import heap
from dreamer.support.times import as_utc, iso, utc_now

DEFAULT_WORKERS = 4
SPREAD_STEP = timedelta(seconds=10)  # average spacing of first runs, per workspace
SLACK = 0.05  # a job firing on its beat runs if its last run started up to 5% of an interval late
log = logging.getLogger("dreamer.scheduler")


def phase(root: Path, job: str, window: timedelta) -> timedelta:
    """This job's stable offset within ``window``: the same in every process and restart."""
    share = zlib.crc32(f"{root}\0{job}".encode()) / 2**32
    return timedelta(seconds=round(window.total_seconds() * share, 3))


def spread(every: timedelta, workspaces: int) -> timedelta:
    """The window overdue first runs are spread over: ``SPREAD_STEP`` per other workspace, at
    most the interval (one workspace starts at once; 200 with a 30-minute interval use it all).
    """
    return min(every, SPREAD_STEP * max(0, workspaces - 1))


def first_run(root: Path, job: str, due: datetime, now: datetime, window: timedelta) -> datetime:
    """When serve first runs a job: its due time from the journal, or, if that has passed,
    ``now`` plus its phase (so overdue jobs of many workspaces do not all start at once)."""
    if due > now:
        return due
    return now + phase(root, job, window)


def _job_id(root: Path | str, job: str) -> str:
    return f"{job}:{root}"


class Service:
    """``dream serve``: an APScheduler running the jobs of many workspaces on a bounded pool."""

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        clock: Clock = utc_now,
        synthesizer: Synthesizer | None = None,
        grace_seconds: float = 5.0,
        environ: dict[str, str] | None = None,
        overrides: dict[str, Any] | None = None,
        report_every: int = 0,
        workers: int = DEFAULT_WORKERS,
        door: Path | None = None,
    ):
        self.roots = [Path(root) for root in roots]
        # Where to open the search door (dreamer.service.search_server); None: no door.
        self.door = door
        # Rewrite <workspace>/memory/report.html after every this many dreams (0: never).
        self.report_every = report_every
        self._dreams_since_report: dict[str, int] = {}
        self.overrides = overrides
        self.clock = clock
        self.synthesizer = synthesizer
        self.grace_seconds = grace_seconds
        self.environ = environ
        self.workers = max(1, workers)
        self.scheduler: BackgroundScheduler | None = None
        self._running: dict[tuple[str, str], datetime] = {}
        self._running_lock = threading.Lock()
        self._stop = threading.Event()

    def _open(self, root: Path) -> Workspace:
        return Workspace.open(root, create=False, environ=self.environ, overrides=self.overrides)

    def build(self, now: datetime, executor: BaseExecutor | None = None) -> BackgroundScheduler:
        """A scheduler (not started) with every workspace's jobs, first runs spread out."""
        now = as_utc(now)
        scheduler = BackgroundScheduler(
            executors={"default": executor or ThreadPoolExecutor(self.workers)}, timezone=UTC
        )
        for root in self.roots:
            with self._open(root) as ws:
                ensure_migrated(ws, now)
                for job in enabled_jobs(ws):
                    plan = cadence(ws, job)
                    every = plan.typical_gap(now)
                    due = next_due(ws, job, now) or now  # enabled, so always due
                    window = spread(every, len(self.roots))
                    first = first_run(ws.root, job, due, now, window)
                    trigger = (
                        plan.trigger()
                        if plan.is_cron
                        else IntervalTrigger(
                            seconds=every.total_seconds(), start_date=first, timezone=UTC
                        )
                    )
                    scheduler.add_job(
                        self._fire,
                        trigger,
                        args=[str(ws.root), job],
                        id=_job_id(ws.root, job),
                        name=f"{job} {ws.root}",
                        next_run_time=first,
                        max_instances=1,
                        coalesce=True,
                        misfire_grace_time=None,
                    )
                    log.debug("%s %s: %s, first at %s", ws.root, job, plan.describe(), iso(first))
        scheduler.add_listener(self._overran, EVENT_JOB_MAX_INSTANCES)
        self.scheduler = scheduler
        return scheduler

    def _fire(self, root: str, job: str) -> None:
        now = as_utc(self.clock()).replace(microsecond=0)
        with self._running_lock:
            self._running[(root, job)] = now
        try:
            self._run(root, job, now)
        finally:
            with self._running_lock:
                self._running.pop((root, job), None)
            # What the run freed goes back to the system: else each worker thread's heap
            # keeps its own peak, and the service's memory creeps up for hours.
            heap.release()

    def _run(self, root: str, job: str, now: datetime) -> None:
        try:
            ws = self._open(Path(root))
        except Exception as e:  # the run failed before it could start: still on the record
            self._record_outside(root, job, now, "failed", _describe(e))
            return
        with ws:
            try:
                record = run_if_due(
                    ws, job, now, clock=self.clock, synthesizer=self.synthesizer, slack=SLACK
                )
            except Exception:  # a bug: run_job recorded it; the pool must go on
                log.exception("%s %s: failed", root, job)
                return
            if record is None:  # someone else ran it, or is running it: wait for the real due
                later = as_utc(self.clock())
                due = next_due(ws, job, later)
                if due is not None and due <= later:
                    # Due, yet not run: another process holds the job right now. Its run
                    # will be on the record; look again at the next time, not at once.
                    due = cadence(ws, job).first_after(later)
                self._move(root, job, due)
                return
            if job == "dream":
                self._after_dream(ws, record)

    def _move(self, root: str, job: str, due: datetime | None) -> None:
        if self.scheduler is None or due is None:
            return
        try:
            self.scheduler.modify_job(_job_id(root, job), next_run_time=due)
        except LookupError:  # removed meanwhile (serve stopping)
            return
        log.debug("%s %s: ran elsewhere; next at %s", root, job, iso(due))

    def _overran(self, event: JobSubmissionEvent) -> None:
        """Record a run that could not start: the job's previous run was still going (or queued)."""
        job, _, root = event.job_id.partition(":")
        with self._running_lock:
            started = self._running.get((root, job))
        due = as_utc(event.scheduled_run_times[-1]).replace(microsecond=0)
        if started is not None:
            why = f"the run started at {iso(started)} was still running"
        else:
            why = f"the previous run was still waiting for one of the {self.workers} workers"
        detail = (
            f"{why} when the next came due; not started twice. Lengthen the interval, or give "
            "'dream serve' more --workers"
        )
        self._record_outside(root, job, due, "overrun", detail)

    def _record_outside(self, root: str, job: str, at: datetime, outcome: str, detail: str) -> None:
        """Record a run that ``run_job`` never saw; log it when even that is impossible."""
        record = RunRecord(job, at, max(at, as_utc(self.clock())), outcome, detail)
        try:
            # The store alone: what failed may be the workspace's settings, not its database.
            store = open_store(Path(root) / "memory" / "crystals.db")
            try:
                store.journal.record_run(job, iso(at), iso(record.finished_at), outcome, detail)
            finally:
                store.close()
            log.warning("%s %s: %s (%s)", root, job, outcome, detail)
        except Exception as e:
            log.error(
                "%s %s: %s (%s); could not record it in the runs table: %s",
                root,
                job,
                outcome,
                detail,
                _describe(e),
            )

    def _after_dream(self, ws: Workspace, record: RunRecord) -> None:
        """Rewrite the workspace's report after every ``report_every`` dreams (skips excluded)."""
        if self.report_every < 1 or record.outcome == "skipped":
            return
        key = str(ws.root)
        self._dreams_since_report[key] = self._dreams_since_report.get(key, 0) + 1
        if self._dreams_since_report[key] < self.report_every:
            return
        self._dreams_since_report[key] = 0
        # Imported here: only serve with --report-every pays for the report's modules.
        from dreamer.service import report

        try:
            path = report.write(ws, as_utc(self.clock()))
        except (DreamError, OSError) as e:  # a report must never stop the dreams
            log.warning("%s report: not written (%s)", ws.root, e)
            return
        log.info("%s report: rewritten at %s", ws.root, path)

    def running(self) -> dict[tuple[str, str], datetime]:
        """The jobs running right now: {(workspace, job): started_at}."""
        with self._running_lock:
            return dict(self._running)

    def stop(self, *_: Any) -> None:
        """Ask ``serve`` to stop (signal handlers call this)."""
        self._stop.set()

    def serve(self) -> int:
        """Run until SIGINT/SIGTERM; return the exit code."""
        scheduler = self.build(as_utc(self.clock()))
        previous = {sig: signal.signal(sig, self.stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        door = None
        if self.door is not None:
            door = Door(self.door, environ=self.environ, warm=self.roots)
            door.take_over()  # a door a search left gives way to serve's
        try:
            scheduler.start()
            log.info(
                "dream serve: %d workspace(s), %d job(s) on %d worker(s); stop with Ctrl-C or "
                "SIGTERM",
                len(self.roots),
                len(scheduler.get_jobs()),
                self.workers,
            )
            while not self._stop.wait(0.5):
                pass
            log.info("dream serve: stopping")
            if door is not None:
                door.close()  # searches run by themselves from here on
            scheduler.shutdown(wait=False)
            return self._drain()
        finally:
            if door is not None:
                door.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _drain(self) -> int:
        """Let running jobs finish within the grace period; abandon the rest safely."""
        deadline = time.monotonic() + self.grace_seconds
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.05)
        left = self.running()
        if not left:
            log.info("dream serve: stopped cleanly")
            return 0
        for (root, job), started in left.items():
            self._record_outside(
                root,
                job,
                started,
                "interrupted",
                f"dream serve stopped after {self.grace_seconds:g}s"
                " grace; notes are recovered by the next dream",
            )
        logging.shutdown()
        # The worker threads cannot be cancelled; leave without waiting for them. SQLite rolls
        # back their open transaction and the dream cycle recovers its rotated scratch.
        os._exit(0)


def _describe(error: BaseException) -> str:
    return str(error) if isinstance(error, DreamError) else f"{type(error).__name__}: {error}"
