"""Running dreamer by itself: the due-logic, one job run, ``dream tick`` and ``dream serve``.

Two jobs per workspace: ``consolidate`` (every ``memory.consolidation.intervalMinutes``, 30 by
default) and ``dream`` (every ``memory.dream.intervalMinutes``, 120; none at all when
``memory.dream.enabled`` is false). Intervals may be fractions of a minute (for testing).

**The schedule lives in the journal**, not in the process: a job is due ``interval`` after it last
*started*, according to the ``runs`` table (every run, whatever its outcome) and, for the dream,
the ``dreams`` journal too (so a ``dream run`` by hand counts). A job that never ran is due at
once. So a restarted ``dream serve``, or ``dream tick`` from cron, continues the schedule instead of
starting the clock again.

**Every run is logged** to the ``runs`` table (job, started_at, finished_at, outcome, detail) and to
the ``dreamer.scheduler`` logger. Outcomes: ``done`` (a consolidation), ``committed``, ``skipped``
(with why: not enough new notes, or "dream already running"), ``rejected``, ``failed``, and
``interrupted`` (``dream serve`` stopped while the job was still running).

``dream serve`` runs an APScheduler 3 ``BackgroundScheduler``: per workspace and job an interval
trigger whose first run is the journal's next due time, ``max_instances=1`` (never two runs of one
job at once), ``coalesce=True`` (runs missed while busy or asleep become one) and no misfire limit
(late runs still happen). Each run opens its own connection to the workspace. SIGINT/SIGTERM stop
it: no new runs start, a running job gets ``grace_seconds`` to finish, and a dream still running
after that is abandoned mid-way, which the dream cycle is built to survive (its notes are put back
by the next dream; MEMORY.md is either the old or the new state).

Concurrency with ``dream tick`` or ``dream run`` is decided by locks: the workspace lock for the
dream (the loser's run is "skipped: dream already running"), ``memory/consolidate.lock`` for the
consolidation.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from apscheduler.executors.base import BaseExecutor
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from dreamer.dream import cycle as dream
from dreamer.dream.synth import Synthesizer
from dreamer.errors import DreamError, DreamRejected, LockHeld, UsageError
from dreamer.kinds import LIFECYCLES
from dreamer.memory import hormones, scratch
from dreamer.memory.workspace import Workspace
from dreamer.service import consolidation as consolidate
from dreamer.support.times import as_utc, iso, parse_iso, utc_now

JOBS = ("consolidate", "dream")
log = logging.getLogger("dreamer.scheduler")
Clock = Callable[[], datetime]


@dataclass
class JobState:
    """Where one job of one workspace stands: last run, next due time, interval."""

    job: str
    enabled: bool
    interval_minutes: float
    last_at: datetime | None
    last_outcome: str | None
    last_detail: str | None
    next_at: datetime | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (times as ISO strings)."""
        out = asdict(self)
        out["last_at"] = iso(self.last_at) if self.last_at else None
        out["next_at"] = iso(self.next_at) if self.next_at else None
        return out


@dataclass
class RunRecord:
    """One run of one job, as stored in the ``runs`` table."""

    job: str
    started_at: datetime
    finished_at: datetime
    outcome: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "job": self.job,
            "started_at": iso(self.started_at),
            "finished_at": iso(self.finished_at),
            "outcome": self.outcome,
            "detail": self.detail,
        }

    @property
    def ok(self) -> bool:
        """False for rejected, failed and interrupted runs."""
        return self.outcome not in ("rejected", "failed", "interrupted")


# --- the due-logic (pure functions of the journal and `now`) -----------------------------------


def interval(ws: Workspace, job: str) -> timedelta:
    """How often ``job`` runs in this workspace."""
    if job == "consolidate":
        return timedelta(minutes=ws.settings.consolidation_interval_minutes)
    if job == "dream":
        return timedelta(minutes=ws.settings.dream_interval_minutes)
    raise UsageError(f"unknown job {job!r}; use one of {', '.join(JOBS)}")


def enabled_jobs(ws: Workspace) -> list[str]:
    """The jobs this workspace runs (no dream job when memory.dream.enabled is false)."""
    return [job for job in JOBS if job != "dream" or ws.settings.dream_enabled]


def last_run(ws: Workspace, job: str) -> tuple[datetime | None, str | None, str | None]:
    """(started_at, outcome, detail) of the newest run of ``job``, from runs and the journal."""
    row = ws.store.last_run(job)
    if job == "dream":
        dreamt = ws.store.newest_dream()
        # A dream run by hand (only in the journal) counts as much as a scheduled one.
        if dreamt and (row is None or dreamt[0] > row[0]):
            row = dreamt
    if row is None:
        return None, None, None
    return parse_iso(row[0]), row[1], row[2]


def next_due(ws: Workspace, job: str, now: datetime) -> datetime | None:
    """When ``job`` is next due (``now`` if it never ran or is overdue); None when disabled."""
    if job not in enabled_jobs(ws):
        return None
    last, _, _ = last_run(ws, job)
    if last is None:
        return as_utc(now)
    return max(as_utc(now), last + interval(ws, job))


def due_jobs(ws: Workspace, now: datetime) -> list[str]:
    """The jobs due at ``now``, consolidation first."""
    due = []
    for job in enabled_jobs(ws):
        last, _, _ = last_run(ws, job)
        if last is None or last + interval(ws, job) <= as_utc(now):
            due.append(job)
    return due


def job_states(ws: Workspace, now: datetime) -> list[JobState]:
    """Last and next run of every job (disabled jobs included, with next_at None)."""
    states = []
    for job in JOBS:
        last, outcome, detail = last_run(ws, job)
        states.append(
            JobState(
                job,
                job in enabled_jobs(ws),
                interval(ws, job).total_seconds() / 60.0,
                last,
                outcome,
                detail,
                next_due(ws, job, now),
            )
        )
    return states


def status(ws: Workspace, now: datetime) -> dict[str, Any]:
    """Everything ``dream status`` shows: jobs, pending notes, crystals, hormones, last dream."""
    levels = hormones.levels(ws, now)
    # A forget's journal row (outcome "forgotten") is no dream; the newest few hold one.
    last = [row for row in ws.store.dream_entries(5) if row["outcome"] != "forgotten"]
    in_scratch = len(scratch.parse(ws.scratch_path).notes)
    return {
        "workspace": str(ws.root),
        "now": iso(now),
        "jobs": {state.job: state.to_dict() for state in job_states(ws, now)},
        "scratch_notes": in_scratch,
        "pending_for_dream": dream.pending(ws),
        "min_chunks_for_dream": ws.settings.min_chunks_for_dream,
        "crystals": {stage: ws.store.count_by_lifecycle().get(stage, 0) for stage in LIFECYCLES},
        "hormones": levels,
        "mood": hormones.mood(levels),
        "last_dream": last[0] if last else None,
        "llm_to_date": ws.store.dream_totals(),
    }


# --- running a job -----------------------------------------------------------------------------


def ensure_migrated(ws: Workspace, now: datetime) -> None:
    """Bring a hand-written MEMORY.md into dreamer before the first tick (dreamer.migrate)."""
    from dreamer.dream.seed import ensure_migrated as migrate_once

    migrate_once(ws, now)


def record_run(ws: Workspace, record: RunRecord) -> None:
    """Store one run in the ``runs`` table and log it."""
    ws.store.record_run(
        record.job, iso(record.started_at), iso(record.finished_at), record.outcome, record.detail
    )
    level = logging.INFO if record.ok else logging.WARNING
    log.log(level, "%s %s: %s (%s)", ws.root, record.job, record.outcome, record.detail)


def run_job(
    ws: Workspace,
    job: str,
    now: datetime,
    *,
    clock: Clock = utc_now,
    synthesizer: Synthesizer | None = None,
) -> RunRecord:
    """Run one job at ``now``, record its outcome in ``runs`` and return it."""
    if job not in JOBS:
        raise UsageError(f"unknown job {job!r}; use one of {', '.join(JOBS)}")
    now = as_utc(now).replace(microsecond=0)
    try:
        outcome, detail = _execute(ws, job, now, synthesizer)
    except LockHeld as e:
        outcome, detail = "skipped", str(e)
    except DreamRejected as e:
        outcome, detail = "rejected", "; ".join(e.reasons) or str(e)
    except DreamError as e:
        outcome, detail = "failed", f"{type(e).__name__}: {e}"
    except Exception as e:
        # A bug, not an outcome: journal it so the schedule and `dream status` show it, then
        # let it propagate with its traceback.
        record_run(ws, RunRecord(job, now, as_utc(clock()), "failed", f"{type(e).__name__}: {e}"))
        raise
    record = RunRecord(job, now, max(now, as_utc(clock())), outcome, detail)
    record_run(ws, record)
    return record


def _execute(
    ws: Workspace, job: str, now: datetime, synthesizer: Synthesizer | None
) -> tuple[str, str]:
    if job == "consolidate":
        report = consolidate.tick(ws, now)
        return "done", report.summary()
    result = dream.run(ws, now=now, synthesizer=synthesizer)
    detail = result.reason
    if result.dream_id is not None:
        detail = f"dream #{result.dream_id}: {detail}"
    if result.outcome == "committed" and result.usage.cost_usd:
        detail += f" (cost ${result.usage.cost_usd:.4f})"
    return result.outcome, detail


def run_due(
    ws: Workspace, now: datetime, *, clock: Clock = utc_now, synthesizer: Synthesizer | None = None
) -> list[RunRecord]:
    """``dream tick``: run every job due at ``now`` (consolidation first) and return the runs."""
    ensure_migrated(ws, now)
    return [
        run_job(ws, job, now, clock=clock, synthesizer=synthesizer) for job in due_jobs(ws, now)
    ]


# --- dream serve ---------------------------------------------------------------------------------


class Service:
    """``dream serve``: an APScheduler running the jobs of several workspaces."""

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
    ):
        self.roots = [Path(root) for root in roots]
        # Rewrite <workspace>/memory/report.html after every this many dreams (0: never).
        self.report_every = report_every
        self._dreams_since_report: dict[str, int] = {}
        self.overrides = overrides
        self.clock = clock
        self.synthesizer = synthesizer
        self.grace_seconds = grace_seconds
        self.environ = environ
        self.scheduler: BackgroundScheduler | None = None
        self._running: dict[tuple[str, str], datetime] = {}
        self._running_lock = threading.Lock()
        self._stop = threading.Event()

    def _open(self, root: Path) -> Workspace:
        return Workspace.open(root, create=False, environ=self.environ, overrides=self.overrides)

    def build(self, now: datetime, executor: BaseExecutor | None = None) -> BackgroundScheduler:
        """A scheduler (not started) with every workspace's jobs, first runs from the journal."""
        scheduler = BackgroundScheduler(
            executors={"default": executor or ThreadPoolExecutor(max(2, 2 * len(self.roots)))},
            timezone=UTC,
        )
        for root in self.roots:
            with self._open(root) as ws:
                ensure_migrated(ws, now)
                for job in enabled_jobs(ws):
                    every = interval(ws, job)
                    first = next_due(ws, job, now) or now  # enabled, so always due
                    scheduler.add_job(
                        self._fire,
                        IntervalTrigger(
                            seconds=every.total_seconds(), start_date=first, timezone=UTC
                        ),
                        args=[str(ws.root), job],
                        id=f"{job}:{ws.root}",
                        name=f"{job} {ws.root}",
                        next_run_time=first,
                        max_instances=1,
                        coalesce=True,
                        misfire_grace_time=None,
                    )
                    log.info(
                        "%s %s: every %g min, next at %s",
                        ws.root,
                        job,
                        every.total_seconds() / 60,
                        iso(first),
                    )
        self.scheduler = scheduler
        return scheduler

    def _fire(self, root: str, job: str) -> None:
        now = as_utc(self.clock()).replace(microsecond=0)
        with self._running_lock:
            self._running[(root, job)] = now
        try:
            with self._open(Path(root)) as ws:
                record = run_job(ws, job, now, clock=self.clock, synthesizer=self.synthesizer)
                if job == "dream":
                    self._after_dream(ws, record)
        finally:
            with self._running_lock:
                self._running.pop((root, job), None)

    def _after_dream(self, ws: Workspace, record: RunRecord) -> None:
        """Rewrite the workspace's report after every ``report_every`` dreams (skips excluded)."""
        if self.report_every < 1 or record.outcome == "skipped":
            return
        key = str(ws.root)
        self._dreams_since_report[key] = self._dreams_since_report.get(key, 0) + 1
        if self._dreams_since_report[key] < self.report_every:
            return
        self._dreams_since_report[key] = 0
        # Imported here: the report reads the schedule (next dream), so this module cannot
        # import it at the top.
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
        try:
            scheduler.start()
            log.info(
                "dream serve: %d workspace(s), %d job(s); stop with Ctrl-C or SIGTERM",
                len(self.roots),
                len(scheduler.get_jobs()),
            )
            while not self._stop.wait(0.5):
                pass
            log.info("dream serve: stopping")
            scheduler.shutdown(wait=False)
            return self._drain()
        finally:
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
            with self._open(Path(root)) as ws:
                record_run(
                    ws,
                    RunRecord(
                        job,
                        started,
                        as_utc(self.clock()),
                        "interrupted",
                        f"dream serve stopped after {self.grace_seconds:g}s"
                        " grace; notes are recovered by the next dream",
                    ),
                )
        logging.shutdown()
        # The worker threads cannot be cancelled; leave without waiting for them. SQLite rolls
        # back their open transaction and the dream cycle recovers its rotated scratch.
        os._exit(0)
