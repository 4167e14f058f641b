"""``dream report``: one self-contained HTML page that shows a workspace's memory at a glance.

What it gathers (``gather``), all through named ``Store`` methods and without changing the
memory (pointers are checked with searches that are not logged):

- a summary: crystals by stage, notes waiting for a dream, the last and next dream, the LLM
  cost and tokens to date, how many crystals were forgotten or redacted (counts only);
- the hormones over the period, drawn as the levels really were (each stored row decays toward
  rest until the next), with every stimulus marked;
- the dreams of the period: outcome, cost, tokens, revisions, and each one's diff of MEMORY.md
  inside the page (newest first, while the page's diff budget lasts);
- crystals created, consolidated, archived and frozen per day (per week past
  ``WEEKLY_AFTER_DAYS``);
- the crystal pointers of MEMORY.md, each checked: do its keywords still find its topic?
- MEMORY.md itself, rendered from a small Markdown subset with everything escaped.

What it gathers is a ``report_data.ReportData``; the page (``report_page``) has no script, no
external font, image or link: charts are inline SVG (``report_svg``). Time is a parameter:
``now`` and the period come from the caller. The file is written atomically and owner-only.
"""

from __future__ import annotations

import bisect
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from dreamer.config import HORMONES
from dreamer.dream import cycle as dream_cycle
from dreamer.dream import health, journal
from dreamer.errors import UsageError
from dreamer.memory import hormone_summary, hormones
from dreamer.memory import state as working_memory
from dreamer.memory.workspace import Workspace
from dreamer.service import report_page, schedule
from dreamer.service.report_data import (
    LISTED_DREAMS,
    Period,
    PointerCheck,
    ReportData,
    StimulusMark,
)
from dreamer.store.kinds import LIFECYCLES
from dreamer.support.files import atomic_write, write_chosen
from dreamer.support.times import as_utc, iso, parse_iso

DEFAULT_SPAN_DAYS = 365  # with no --since: the whole history, but at most this far back
HORMONE_BUCKETS = 300  # points per hormone line, whatever the period
DIFF_BUDGET_CHARS = 400_000  # diffs embedded in the page, newest dream first
DIFF_MAX_CHARS = 20_000  # one diff longer than this is cut (the rest: `dream diff N`)
WEEKLY_AFTER_DAYS = 120  # a longer period draws crystal lifecycle per week, not per day
REMOVED_ACTIONS = ("forgotten", "redacted")


def period_for(ws: Workspace, now: datetime, since: datetime | None) -> Period:
    """The period a report covers: from ``since`` (default: the first record, at most
    ``DEFAULT_SPAN_DAYS`` back) to ``now``."""
    now = as_utc(now)
    if since is not None:
        since = as_utc(since)
        if since >= now:
            raise UsageError(
                f"--since {iso(since)} is not before now ({iso(now)}); pick a past date"
            )
        return Period(since, now)
    span = ws.store.history.activity_span()
    first = parse_iso(span[0]) if span else now - timedelta(days=1)
    first = max(first, now - timedelta(days=DEFAULT_SPAN_DAYS))
    return Period(min(first, now - timedelta(hours=1)), now)


def gather(ws: Workspace, now: datetime, since: datetime | None = None) -> ReportData:
    """Read everything the report shows; nothing in the workspace changes."""
    now = as_utc(now).replace(microsecond=0)
    period = period_for(ws, now, since)
    store = ws.store
    levels = hormones.levels(ws, now)
    series, stimuli, strongest = hormone_history(ws, period)
    dreams = [
        row for row in store.history.dream_rows(iso(period.since), iso(now)) if _is_dream(row)
    ]
    last = [row for row in store.journal.dream_entries(5) if _is_dream(row)]
    memory_text = ws.read_memory(errors="replace")
    lifecycle_days = 1 if period.seconds <= WEEKLY_AFTER_DAYS * 86400 else 7
    by_stage = store.crystals.count_by_lifecycle()
    return ReportData(
        workspace=str(ws.root),
        now=now,
        period=period,
        crystals={stage: by_stage.get(stage, 0) for stage in LIFECYCLES if stage != "forgotten"},
        scratch_notes=len(ws.scratch.notes()),
        pending=dream_cycle.pending(ws),
        min_chunks=ws.settings.min_chunks_for_dream,
        last_dream=last[0] if last else None,
        next_dream=schedule.next_due(ws, "dream", now),
        totals=dict(store.journal.dream_totals()),
        removed=store.history.audit_action_counts(REMOVED_ACTIONS),
        levels=levels,
        mood=hormone_summary.mood(levels),
        hormone_series=series,
        stimuli=stimuli,
        strongest=strongest,
        dreams=dreams,
        diffs=dream_diffs(ws, dreams),
        lifecycle=lifecycle_buckets(ws, period, lifecycle_days),
        lifecycle_days=lifecycle_days,
        pointers=check_pointers(ws, memory_text, now),
        memory_md=memory_text,
        health=health.lines(ws, now),
    )


def _is_dream(row: dict[str, Any]) -> bool:
    # A forget that rewrote MEMORY.md is journaled too; it is counted, not drawn as a dream.
    return row["outcome"] != "forgotten"


def hormone_history(
    ws: Workspace, period: Period
) -> tuple[dict[str, list[tuple[datetime, float]]], list[StimulusMark], list[dict[str, Any]]]:
    """Each hormone's level over the period, its stimuli by bucket, and the strongest stimuli.

    A stored row holds the levels right after a stimulus or at a decay snapshot; in between,
    levels decay toward rest. Each bucket's point is the highest level within it, so a spike
    shorter than a bucket still shows.
    """
    rows = ws.store.history.hormone_rows_between(iso(period.since), iso(period.until))
    before = ws.store.hormones.hormones_at(iso(period.since - timedelta(seconds=1)))
    rest = hormones.rest_levels(ws)
    half = {name: float(ws.settings.hormone_half_life_minutes[name]) for name in HORMONES}
    anchors: list[tuple[datetime, dict[str, float]]] = []
    if before is not None:
        anchors.append((parse_iso(before[0]), dict(zip(HORMONES, before[1:], strict=True))))
    else:
        anchors.append((period.since, dict(rest)))
    for row in rows:
        anchors.append((parse_iso(row["at"]), {name: float(row[name]) for name in HORMONES}))
    times = [moment for moment, _ in anchors]

    def level_at(moment: datetime) -> dict[str, float]:
        at, last = anchors[max(0, bisect.bisect_right(times, moment) - 1)]
        minutes = max(0.0, (moment - at).total_seconds() / 60.0)
        return {
            name: rest[name] + (last[name] - rest[name]) * 0.5 ** (minutes / half[name])
            for name in HORMONES
        }

    step = period.seconds / HORMONE_BUCKETS
    series: dict[str, list[tuple[datetime, float]]] = {name: [] for name in HORMONES}
    start_levels = level_at(period.since)
    for name in HORMONES:
        series[name].append((period.since, start_levels[name]))
    index = bisect.bisect_left(times, period.since)
    for bucket in range(1, HORMONE_BUCKETS + 1):
        end = period.since + timedelta(seconds=step * bucket)
        peak = level_at(end)
        while index < len(anchors) and anchors[index][0] <= end:
            for name in HORMONES:
                peak[name] = max(peak[name], anchors[index][1][name])
            index += 1
        for name in HORMONES:
            series[name].append((end, round(min(1.0, max(0.0, peak[name])), 4)))
    stimuli = _stimulus_marks(rows, period, step)
    strongest = sorted(
        (row for row in rows if row["hormone"]), key=lambda row: -abs(row["delta"] or 0.0)
    )[:8]
    return series, stimuli, strongest


def _stimulus_marks(rows: list[dict[str, Any]], period: Period, step: float) -> list[StimulusMark]:
    marks: dict[tuple[str, int], StimulusMark] = {}
    for row in rows:
        name = row["hormone"]
        if not name:
            continue
        at = parse_iso(row["at"])
        bucket = int((at - period.since).total_seconds() // step)
        mark = marks.get((name, bucket))
        delta = float(row["delta"] or 0.0)
        if mark is None:
            marks[(name, bucket)] = StimulusMark(
                name, at, float(row[name]), 1, delta, [row["reason"]] if row["reason"] else []
            )
            continue
        mark.count += 1
        mark.net_delta += delta
        if float(row[name]) > mark.level:
            mark.at, mark.level = at, float(row[name])
        if row["reason"] and row["reason"] not in mark.reasons and len(mark.reasons) < 3:
            mark.reasons.append(row["reason"])
    return sorted(marks.values(), key=lambda mark: (mark.at, mark.hormone))


def dream_diffs(ws: Workspace, dreams: list[dict[str, Any]]) -> dict[int, str]:
    """Unified diffs of the newest listed dreams that wrote (or tried) a state, within budget."""
    listed = [row for row in dreams if row["outcome"] != "skipped"][-LISTED_DREAMS:]
    wanted = [row["id"] for row in reversed(listed) if row["has_text"]]
    out: dict[int, str] = {}
    spent = 0
    for start in range(0, len(wanted), 50):
        for entry in sorted(
            ws.store.history.dream_states(wanted[start : start + 50]),
            key=lambda entry: -entry["id"],
        ):
            try:
                text = journal.diff(entry)
            except UsageError:  # an empty state: nothing to compare
                continue
            if len(text) > DIFF_MAX_CHARS:
                cut = text[:DIFF_MAX_CHARS].rsplit("\n", 1)[0]
                text = f"{cut}\n… cut here; the whole diff: dream diff {entry['id']}\n"
            if spent + len(text) > DIFF_BUDGET_CHARS:
                return out
            out[entry["id"]] = text
            spent += len(text)
    return out


def lifecycle_buckets(
    ws: Workspace, period: Period, days: int
) -> list[tuple[datetime, dict[str, int]]]:
    """Crystals created, consolidated, archived and frozen per bucket of ``days`` UTC days."""
    by_day = ws.store.history.lifecycle_by_day(iso(period.since), iso(period.until))
    first = period.since.replace(hour=0, minute=0, second=0, microsecond=0)
    if days == 7:
        first -= timedelta(days=first.weekday())  # weeks start on Monday
    buckets: list[tuple[datetime, dict[str, int]]] = []
    start = first
    while start <= period.until:
        buckets.append((start, {"created": 0, "consolidated": 0, "archived": 0, "frozen": 0}))
        start += timedelta(days=days)
    for day, counts in by_day.items():
        moment = parse_iso(day)
        index = int((moment - first).days // days)
        if 0 <= index < len(buckets):
            for event, count in counts.items():
                buckets[index][1][event] = buckets[index][1].get(event, 0) + count
    return buckets


def check_pointers(ws: Workspace, memory_text: str, now: datetime) -> list[PointerCheck]:
    """The pointers of MEMORY.md and whether each still leads to its topic (searches unlogged)."""
    pointers = working_memory.parse(memory_text).pointers()
    return [
        PointerCheck(p.topic, p.keywords, dream_cycle.pointer_leads_somewhere(ws, p, now))
        for p in pointers
    ]


def build(ws: Workspace, now: datetime, since: datetime | None = None) -> str:
    """The report page's HTML."""
    return report_page.render(gather(ws, now, since))


def default_path(ws: Workspace) -> Path:
    """Where a report goes when no path is given: ``<workspace>/memory/report.html``."""
    return ws.report_html


def write(
    ws: Workspace, now: datetime, path: Path | None = None, since: datetime | None = None
) -> Path:
    """Build the report and write it atomically, owner-only; return where it went."""
    page = build(ws, now, since)
    if path is None:
        atomic_write(default_path(ws), page)
        return default_path(ws)
    write_chosen(Path(path), page, "--output")
    return Path(path)
