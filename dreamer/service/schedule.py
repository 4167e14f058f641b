"""Running dreamer by itself: the due-logic, one job run, ``dream tick`` (``dream serve`` is in
``dreamer.service.serve``).

Two jobs per workspace: ``consolidate`` (every ``memory.consolidation.intervalMinutes``, 30 by
default) and ``dream`` (every ``memory.dream.intervalMinutes``, 120; none at all when
``memory.dream.enabled`` is false). Intervals may be fractions of a minute (for testing). A
``schedule`` setting (``memory.dream.schedule = "0 3 * * *"``, see ``dreamer.config.cadence``)
replaces the interval: the job is then due at the first cron time after its last start (after the
workspace's first activity when it never ran), never at once and never early.

**The schedule lives in the journal**, not in the process: an interval job is due ``interval``
after it last *started*, according to the ``runs`` table (every run, whatever its outcome) and,
for the dream, the ``dreams`` journal too (so a ``dream run`` by hand counts). An interval job
that never ran is due at once. So a restarted ``dream serve``, or ``dream tick`` from cron,
continues the schedule instead of starting the clock again, and several runners (serve, tick,
a second serve) share one schedule: ``run_if_due`` checks the journal and runs the job under
``memory/<job>.due.lock``, so two of them never both run what was due once.

**Every run is logged** to the ``runs`` table (job, started_at, finished_at, outcome, detail) and to
the ``dreamer.scheduler`` logger. Outcomes: ``done`` (a consolidation), ``committed``, ``skipped``
(with why: not enough new notes, or "dream already running"), ``rejected``, ``failed``,
``interrupted`` (``dream serve`` stopped while the job was still running) and ``overrun`` (serve:
the job came due while its previous run was still going; it was not started twice).

Concurrency with ``dream run`` is decided by locks: the workspace lock for the dream (the loser's
run is "skipped: dream already running"), ``memory/consolidate.lock`` for the consolidation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from dreamer.config.cadence import Cadence
from dreamer.dream import budget, health
from dreamer.dream import cycle as dream
from dreamer.dream.synth import Synthesizer
from dreamer.errors import DreamDeferred, DreamError, DreamRejected, LockHeld, UsageError
from dreamer.memory import hormone_summary, hormones
from dreamer.memory.workspace import Workspace
from dreamer.service import consolidation as consolidate
from dreamer.store.kinds import LIFECYCLES
from dreamer.support import failures
from dreamer.support.locks import hold
from dreamer.support.times import as_utc, iso, parse_iso, utc_now

JOBS = ("consolidate", "dream")
MAX_SLACK = timedelta(seconds=30)
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
    schedule: str = ""
    next_runs: list[datetime] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (times as ISO strings)."""
        out = asdict(self)
        out["last_at"] = iso(self.last_at) if self.last_at else None
        out["next_at"] = iso(self.next_at) if self.next_at else None
        out["next_runs"] = [iso(moment) for moment in self.next_runs]
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
        """False for rejected, failed, interrupted and overrun runs."""
        return self.outcome not in ("rejected", "failed", "interrupted", "overrun")


# --- the due-logic (pure functions of the journal and `now`) -----------------------------------


def cadence(ws: Workspace, job: str) -> Cadence:
    """When ``job`` runs in this workspace: its cron schedule or its interval."""
    if job not in JOBS:
        raise UsageError(f"unknown job {job!r}; use one of {', '.join(JOBS)}")
    return ws.settings.cadence(job)


def interval(ws: Workspace, job: str, now: datetime | None = None) -> timedelta:
    """How often ``job`` runs: its interval, or for a cron schedule the gap after ``now``."""
    return cadence(ws, job).typical_gap(as_utc(now) if now else utc_now())


def enabled_jobs(ws: Workspace) -> list[str]:
    """The jobs this workspace runs (no dream job when memory.dream.enabled is false)."""
    return [job for job in JOBS if job != "dream" or ws.settings.dream_enabled]


def last_run(ws: Workspace, job: str) -> tuple[datetime | None, str | None, str | None]:
    """(started_at, outcome, detail) of the newest run of ``job``, from runs and the journal."""
    row = ws.store.journal.last_run(job)
    if job == "dream":
        dreamt = ws.store.journal.newest_dream()
        # A dream run by hand (only in the journal) counts as much as a scheduled one.
        if dreamt and (row is None or dreamt[0] > row[0]):
            row = dreamt
    if row is None:
        return None, None, None
    return parse_iso(row[0]), row[1], row[2]


def _cron_anchor(ws: Workspace, last: datetime | None, now: datetime) -> datetime:
    """What a cron job's next time counts from: its last run, else the workspace's first
    activity (so a new workspace waits for the next 03:00 instead of dreaming at once)."""
    if last is not None:
        return last
    span = ws.store.history.activity_span()
    return min(parse_iso(span[0]), as_utc(now)) if span else as_utc(now)


def _due_at(ws: Workspace, job: str, now: datetime) -> datetime:
    """The time ``job`` comes (or came) due, from the journal; may be in the past."""
    last, _, _ = last_run(ws, job)
    plan = cadence(ws, job)
    if plan.is_cron:
        return plan.first_after(_cron_anchor(ws, last, now))
    return as_utc(now) if last is None else plan.first_after(last)


def next_due(ws: Workspace, job: str, now: datetime) -> datetime | None:
    """When ``job`` is next due (``now`` if it is due or overdue); None when disabled."""
    if job not in enabled_jobs(ws):
        return None
    return max(as_utc(now), _due_at(ws, job, now))


def next_runs(ws: Workspace, job: str, now: datetime, count: int = 3) -> list[datetime]:
    """The next ``count`` run times of ``job`` (none when it is disabled)."""
    first = next_due(ws, job, now)
    return [] if first is None else cadence(ws, job).times(first, count)


def due_jobs(ws: Workspace, now: datetime, *, slack: float = 0.0) -> list[str]:
    """The jobs due at ``now``, consolidation first.

    ``slack`` (a share of an interval, at most ``MAX_SLACK``) counts an interval job due that
    early: a scheduler firing on its own beat must not be put off because the previous run was
    recorded a second late. A cron job is due from its time on, never early.
    """
    due = []
    for job in enabled_jobs(ws):
        plan = cadence(ws, job)
        early = timedelta(0) if plan.every is None else min(plan.every * slack, MAX_SLACK)
        if _due_at(ws, job, now) - early <= as_utc(now):
            due.append(job)
    return due


def job_states(ws: Workspace, now: datetime) -> list[JobState]:
    """Last and next runs of every job (disabled jobs included, with next_at None)."""
    states = []
    for job in JOBS:
        last, outcome, detail = last_run(ws, job)
        plan = cadence(ws, job)
        upcoming = next_runs(ws, job, now)
        states.append(
            JobState(
                job,
                job in enabled_jobs(ws),
                plan.typical_gap(as_utc(now)).total_seconds() / 60.0,
                last,
                outcome,
                detail,
                upcoming[0] if upcoming else None,
                plan.describe(),
                upcoming,
            )
        )
    return states


def status(ws: Workspace, now: datetime) -> dict[str, Any]:
    """Everything ``dream status`` shows: jobs, pending notes, crystals, hormones, last dream."""
    levels = hormones.levels(ws, now)
    # A forget's journal row (outcome "forgotten") is no dream; the newest few hold one.
    last = [row for row in ws.store.journal.dream_entries(5) if row["outcome"] != "forgotten"]
    in_scratch = len(ws.scratch.notes())
    return {
        "workspace": str(ws.root),
        "now": iso(now),
        "jobs": {state.job: state.to_dict() for state in job_states(ws, now)},
        "scratch_notes": in_scratch,
        "pending_for_dream": dream.pending(ws),
        "min_chunks_for_dream": ws.settings.min_chunks_for_dream,
        "crystals": {
            stage: ws.store.crystals.count_by_lifecycle().get(stage, 0) for stage in LIFECYCLES
        },
        "hormones": levels,
        "mood": hormone_summary.mood(levels),
        "last_dream": last[0] if last else None,
        # Every outcome of the last day, so a failure or an overrun is seen even after a
        # later run went well.
        "runs_last_day": ws.store.journal.run_counts(iso(as_utc(now) - timedelta(days=1))),
        "llm_to_date": ws.store.journal.dream_totals(),
        "spending": budget.summary(ws, now),
        "health": health.summary(ws, now),
    }


# --- running a job -----------------------------------------------------------------------------


def ensure_migrated(ws: Workspace, now: datetime) -> None:
    """Bring a hand-written MEMORY.md into dreamer before the first tick (dreamer.migrate)."""
    from dreamer.dream.seed import ensure_migrated as migrate_once

    migrate_once(ws, now)


def record_run(ws: Workspace, record: RunRecord) -> None:
    """Store one run in the ``runs`` table and log it."""
    ws.store.journal.record_run(
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
    force: bool = False,
) -> RunRecord:
    """Run one job at ``now``, record its outcome in ``runs`` and return it (``force``: a
    dream with fewer new notes than it needs, as ``dream run --force``)."""
    if job not in JOBS:
        raise UsageError(f"unknown job {job!r}; use one of {', '.join(JOBS)}")
    now = as_utc(now).replace(microsecond=0)
    try:
        outcome, detail = _execute(ws, job, now, synthesizer, force)
    except LockHeld as e:
        outcome, detail = "skipped", str(e)
    except DreamRejected as e:
        outcome, detail = "rejected", "; ".join(e.reasons) or str(e)
    except DreamDeferred as e:  # a hand edit of MEMORY.md meanwhile: the next run takes it in
        outcome, detail = "deferred", str(e)
    except DreamError as e:
        outcome, detail = "failed", f"{type(e).__name__}: {e}"
    except OSError as e:
        known = failures.explain_os_error(e)
        if known is None:
            record_run(ws, RunRecord(job, now, as_utc(clock()), "failed", f"OSError: {e}"))
            raise
        outcome, detail = "failed", f"{type(known).__name__}: {known}"
    except Exception as e:
        # A bug, not an outcome: journal it so the schedule and `dream status` show it, then
        # let it propagate with its traceback.
        record_run(ws, RunRecord(job, now, as_utc(clock()), "failed", f"{type(e).__name__}: {e}"))
        raise
    record = RunRecord(job, now, max(now, as_utc(clock())), outcome, detail)
    record_run(ws, record)
    return record


def _execute(
    ws: Workspace, job: str, now: datetime, synthesizer: Synthesizer | None, force: bool
) -> tuple[str, str]:
    if job == "consolidate":
        report = consolidate.tick(ws, now)
        return "done", report.summary()
    result = dream.run(ws, now=now, synthesizer=synthesizer, force=force)
    detail = result.reason
    if result.dream_id is not None:
        detail = f"dream #{result.dream_id}: {detail}"
    if result.outcome == "committed" and result.usage.cost_usd:
        detail += f" (cost ${result.usage.cost_usd:.4f})"
    return result.outcome, detail


def run_if_due(
    ws: Workspace,
    job: str,
    now: datetime,
    *,
    clock: Clock = utc_now,
    synthesizer: Synthesizer | None = None,
    slack: float = 0.0,
) -> RunRecord | None:
    """Run ``job`` if the journal says it is due at ``now``; None if it is not, or if another
    process is running it right now (``memory/<job>.due.lock``: the check and the run are one
    step, so a second ``dream serve`` or a ``dream tick`` never runs it again)."""
    try:
        with hold(ws.memory_dir / f"{job}.due.lock", wait=False):
            if job not in due_jobs(ws, now, slack=slack):
                return None
            return run_job(ws, job, now, clock=clock, synthesizer=synthesizer)
    except LockHeld:
        return None


def run_due(
    ws: Workspace, now: datetime, *, clock: Clock = utc_now, synthesizer: Synthesizer | None = None
) -> list[RunRecord]:
    """``dream tick``: run every job due at ``now`` (consolidation first) and return the runs."""
    ensure_migrated(ws, now)
    runs = (
        run_if_due(ws, job, now, clock=clock, synthesizer=synthesizer) for job in due_jobs(ws, now)
    )
    return [run for run in runs if run is not None]


# --- `dream retry` -------------------------------------------------------------------------------


def retry_target(ws: Workspace) -> tuple[str, str] | None:
    """What ``dream retry`` runs again, (job, why): a stuck scheduled job (interrupted,
    overrun, a failed consolidation), else the newest dream when it failed or was rejected;
    None when nothing did."""
    for stuck in health.stuck_jobs(ws):
        what = "consolidation" if stuck["job"] == "consolidate" else "scheduled dream"
        return stuck["job"], f"the last {what} {stuck['outcome']} at {stuck['at']}"
    last = health.last_dream(ws)
    if last is not None and last["outcome"] in health.FAILURES:
        return "dream", f"dream #{last['id']} {last['outcome']} at {last['at']}: {last['reason']}"
    return None


def retry(
    ws: Workspace, now: datetime, *, clock: Clock = utc_now, synthesizer: Synthesizer | None = None
) -> tuple[str, RunRecord] | None:
    """Run the failed or stuck job once more (a dream as with ``--force``: the notes it had
    are back in the scratch, however few); (why it was retried, the run), or None."""
    target = retry_target(ws)
    if target is None:
        return None
    job, why = target
    ensure_migrated(ws, now)
    return why, run_job(ws, job, now, clock=clock, synthesizer=synthesizer, force=True)
