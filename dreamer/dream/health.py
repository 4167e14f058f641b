"""The health line: say plainly when capture or dreaming has stopped; say nothing when all is well.

Three checks, each from what the store already records (so every process sees the same):

- **Capture went quiet**: no note (a ``scratch`` crystal) has arrived for ``QUIET_DAYS`` days
  while sessions ran (SessionStart hooks, recorded by ``session_started``, or ingested session
  transcripts).
- **Capture failed**: the last transcript capture by a hook failed (``capture_result``).
- **Dreaming stopped**: the last ``STOPPED_AFTER`` dreams all failed to commit, or no dream has
  committed for ``STOPPED_AFTER`` dream intervals while enough notes waited; the line says why
  (failed, rejected, capped by the spending cap, skipped) and quotes the newest cause.

Shown at the top of the SessionStart block, in ``dream status`` and in ``dream report``.

``summary`` is the same for a monitor: the ``health`` object of ``dream status --json`` (last
capture, last dream, failures in a row, held items, forget requests waiting for a yes, spending
against the caps, stuck jobs, held items) with ``status`` ``ok`` or ``attention`` and the reasons;
``dream status --check`` exits 1 on ``attention``.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from dreamer.dream import budget
from dreamer.memory import forget_pending
from dreamer.memory.workspace import Workspace
from dreamer.support.times import as_utc, iso, parse_iso

QUIET_DAYS = 3
STOPPED_AFTER = 3
SESSIONS_KEY = "health.session_starts"  # the newest SessionStart times, a JSON list
CAPTURE_KEY = "health.capture"  # the last capture: {"at", "ok", "detail"}
KEEP_SESSIONS = 50
NOT_DREAMS = ("forgotten", "restored")
MAX_CAUSE = 200


def session_started(ws: Workspace, now: datetime) -> None:
    """Record that an agent session started (the SessionStart hook calls this)."""
    starts = _starts(ws)
    starts.append(iso(now))
    ws.store.records.set_meta(SESSIONS_KEY, json.dumps(starts[-KEEP_SESSIONS:]))


def capture_result(
    ws: Workspace, now: datetime, error: str | None, *, agent: str | None = None
) -> None:
    """Record how the last capture (a hook's transcript ingest by ``agent``) went."""
    record = {"at": iso(now), "ok": error is None, "detail": error, "agent": agent}
    ws.store.records.set_meta(CAPTURE_KEY, json.dumps(record))


def _starts(ws: Workspace) -> list[str]:
    try:
        found = json.loads(ws.store.records.get_meta(SESSIONS_KEY) or "[]")
    except json.JSONDecodeError:
        return []
    return [str(item) for item in found] if isinstance(found, list) else []


def _newest(ws: Workspace, source: str) -> datetime | None:
    rows = ws.store.crystals.select(sources=[source], newest_first=True, limit=1)
    return parse_iso(rows[0].created_at) if rows else None


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_CAUSE else text[: MAX_CAUSE - 1] + "…"


def last_capture(ws: Workspace) -> dict[str, Any] | None:
    """The last capture by a hook: {"at", "ok", "detail", "agent"}; None before the first."""
    try:
        capture = json.loads(ws.store.records.get_meta(CAPTURE_KEY) or "null")
    except json.JSONDecodeError:
        return None
    if not isinstance(capture, dict):
        return None
    return {key: capture.get(key) for key in ("at", "agent", "ok", "detail")}


def capture_lines(ws: Workspace, now: datetime) -> list[str]:
    """Lines about capture: gone quiet while sessions ran, or the last capture failed."""
    out = []
    now = as_utc(now)
    last_note = _newest(ws, "scratch")
    quiet_since = last_note or None
    if quiet_since is not None and now - quiet_since >= timedelta(days=QUIET_DAYS):
        sessions = [at for at in _starts(ws) if parse_iso(at) > quiet_since]
        transcript = _newest(ws, "sessions")
        if sessions or (transcript is not None and transcript > quiet_since):
            days = (now - quiet_since).days
            ran = f"{len(sessions)} sessions ran" if sessions else "sessions were ingested"
            out.append(
                f"Capture has stopped: no note for {days} days (last {iso(quiet_since)}) while "
                f"{ran}; check that the agent still writes notes ('dream claude install' "
                "re-installs the hooks and tools)."
            )
    capture = last_capture(ws)
    if capture is not None and capture.get("ok") is False:
        out.append(
            f"The last capture failed at {capture.get('at')}: "
            f"{_clip(capture.get('detail') or 'unknown error')} (see memory/hooks.log)."
        )
    return out


def _kind(row: dict[str, Any]) -> str:
    reason = str(row.get("reason") or "")
    if row["outcome"] == "skipped" and reason.startswith(budget.PREFIX):
        return "capped"
    return str(row["outcome"])


def dream_lines(ws: Workspace, now: datetime) -> list[str]:
    """A line when dreaming has stopped, with why; none when dreams commit."""
    rows = [r for r in ws.store.journal.dream_entries(100) if r["outcome"] not in NOT_DREAMS]
    since_commit: list[dict[str, Any]] = []
    last_commit = None
    for row in rows:  # newest first
        if row["outcome"] in ("committed", "candidate"):
            last_commit = parse_iso(row["started_at"])
            break
        since_commit.append(row)
    # A skip for too few notes is the schedule working, not dreaming failing.
    attempts = [
        row
        for row in since_commit
        if row["outcome"] != "skipped"
        or _kind(row) == "capped"
        or "candidate waits" in (row.get("reason") or "")
    ]
    gap = ws.settings.cadence("dream").typical_gap(as_utc(now))
    overdue = last_commit is not None and as_utc(now) - last_commit > gap * STOPPED_AFTER
    if len(attempts) < STOPPED_AFTER and not (overdue and attempts):
        # Not stopped yet, but a cap or a waiting candidate holds the next dream: say so now.
        newest = attempts[0] if attempts else None
        if newest is not None and newest is since_commit[0] and newest["outcome"] == "skipped":
            return [f"The last dream was skipped: {_clip(newest.get('reason') or '')}"]
        return []
    counts = Counter(_kind(row) for row in attempts)
    why = ", ".join(f"{n} {kind}" for kind, n in counts.most_common())
    cause = _clip(attempts[0].get("reason") or attempts[0]["outcome"])
    if len(attempts) >= STOPPED_AFTER and len(counts) == 1:
        head = f"Dreaming has stopped: the last {len(attempts)} dreams {next(iter(counts))}"
    else:
        tries = "1 try" if len(attempts) == 1 else f"{len(attempts)} tries"
        head = f"Dreaming has stopped: no dream committed in {tries} ({why})"
    since = f" since {iso(last_commit)}" if last_commit else ""
    return [f"{head}{since}; the last cause: {cause}"]


def held_lines(ws: Workspace) -> list[str]:
    """A line when words that read like rules wait for the user (``dreamer.memory.held``)."""
    from dreamer.memory import held

    waiting = held.count(ws)
    if not waiting:
        return []
    items = "item is" if waiting == 1 else "items are"
    return [
        f"{waiting} {items} held: words a tool, page, file or another agent returned that read "
        "like rules; no dream keeps them until you accept them ('dream held' or the "
        "memory_held tool lists them)"
    ]


def lines(ws: Workspace, now: datetime) -> list[str]:
    """Every health line; empty when all is well."""
    return capture_lines(ws, now) + dream_lines(ws, now) + held_lines(ws) + forget_pending.lines(ws)


# --- for a monitor: the health object of `dream status --json` ----------------------------------

FAILURES = ("failed", "rejected")
COMMITS = ("committed", "candidate")
STUCK = ("interrupted", "overrun")  # a scheduled run that did not finish, or came due again


def last_dream(ws: Workspace) -> dict[str, Any] | None:
    """The newest dream: {"id", "at", "outcome", "reason"}; None before the first."""
    for row in ws.store.journal.dream_entries(5):
        if row["outcome"] not in NOT_DREAMS:
            reason = _clip(row.get("reason") or "")
            return {
                "id": row["id"],
                "at": row["started_at"],
                "outcome": row["outcome"],
                "reason": reason,
            }
    return None


def failures_in_a_row(ws: Workspace) -> dict[str, Any]:
    """Dreams failed or rejected since the last commit (skips neither count nor break the run),
    and the newest one's cause."""
    count, cause = 0, None
    for row in ws.store.journal.dream_entries(100):
        if row["outcome"] in COMMITS:
            break
        if row["outcome"] in FAILURES:
            count += 1
            cause = cause or _clip(row.get("reason") or row["outcome"])
    return {"count": count, "cause": cause}


def stuck_jobs(ws: Workspace) -> list[dict[str, Any]]:
    """Scheduled jobs whose last run was interrupted or overran (still running when it came due
    again), or a consolidation that failed; a dream run by hand since clears the dream's."""
    out = []
    newest = ws.store.journal.newest_dream()
    for job in ("consolidate", "dream"):
        row = ws.store.journal.last_run(job)
        if row is None:
            continue
        at, outcome, detail = row
        if job == "dream" and newest is not None and newest[0] > at:
            continue
        if outcome in STUCK or (job == "consolidate" and outcome == "failed"):
            out.append({"job": job, "at": at, "outcome": outcome, "detail": _clip(detail or "")})
    return out


def summary(ws: Workspace, now: datetime) -> dict[str, Any]:
    """The health object of ``dream status --json``: ``status`` is ``attention`` with the
    ``reasons`` (one line each) when something needs a person, else ``ok``."""
    from dreamer.memory import held

    reasons = lines(ws, now)
    stuck = stuck_jobs(ws)
    for job in stuck:
        what = "consolidation" if job["job"] == "consolidate" else "scheduled dream"
        reasons.append(
            f"The last {what} {job['outcome']} at {job['at']}: {job['detail'] or 'no detail'}; "
            "'dream retry' runs it again."
        )
    forgets = [
        {"asked": item.target, "matches": len(item.matches), "note": item.request_id}
        for item in forget_pending.pending_forget_requests(ws)
    ]
    spending = budget.summary(ws, now, always=True) or {}
    if not any(line.startswith("The last dream was skipped: " + budget.PREFIX) for line in reasons):
        reasons += _caps_reached(spending)
    return {
        "status": "attention" if reasons else "ok",
        "reasons": reasons,
        "last_capture": last_capture(ws),
        "last_note_at": iso(note) if (note := _newest(ws, "scratch")) else None,
        "last_dream": last_dream(ws),
        "failures_in_a_row": failures_in_a_row(ws),
        "held": {"count": held.count(ws)},
        "forget_requests": {"count": len(forgets), "asked": forgets},
        "stuck_jobs": stuck,
        "spending": spending,
    }


def _caps_reached(spending: dict[str, Any]) -> list[str]:
    out = []
    for period, spend in spending.items():
        if spend["usd_cap"] is not None and spend["usd"] >= spend["usd_cap"]:
            used = f"${spend['usd']:.4f} of the ${spend['usd_cap']:g}"
        elif spend["tokens_cap"] is not None and spend["tokens"] >= spend["tokens_cap"]:
            used = f"{spend['tokens']} tokens of the {spend['tokens_cap']}"
        else:
            continue
        out.append(
            f"The spending cap is reached: {used} cap this {period}; dreams resume after "
            f"{spend['resets_at']}."
        )
    return out
