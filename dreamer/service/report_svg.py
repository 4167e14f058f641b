"""The report's charts, drawn by hand as inline SVG: no library, no script, everything escaped.

A chart fills the width of its container at a fixed height in pixels, so its text keeps its
size on a phone and on a desktop: x positions are percentages of the width, y positions are
pixels. Lines, areas and bars live in an inner ``<svg>`` stretched to the same box
(``preserveAspectRatio="none"``, strokes that do not scale); dots, markers and text sit in the
outer one, placed by percentage, so they stay round and legible. The page's stylesheet colours
everything (classes ``h-dopamine``, ``o-committed``, ``l-created`` ...).

Every mark carries its numbers twice: in ``data-*`` attributes (for tests and tools) and in a
``<title>`` (a tooltip for people).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Any

from dreamer.support.times import parse_iso

SPAN = 1000  # the inner layer's width in its own units: x percent times 10
MARKS_ON_LINES = 60  # up to this many stimulus markers sit on the lines; more go under them
RUG_ROW = 8  # pixels per hormone row of stimulus ticks under the plot
HOUR, DAY = 3600, 86400
TICK_STEPS = (HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY)
OUTCOMES = ("committed", "rejected", "failed", "restored", "skipped")
LIFECYCLE_ROWS = (
    ("created", "new"),
    ("consolidated", "consolidated"),
    ("archived", "archived"),
    ("frozen", "frozen"),
)


def esc(value: Any) -> str:
    """Text made safe for HTML and SVG, quotes included."""
    return escape(str(value), quote=True)


def when(moment: datetime) -> str:
    """``2026-03-12 14:30 UTC``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def money(value: float | None) -> str:
    """US dollars, with four decimals below a dollar (a dream costs cents)."""
    value = float(value or 0.0)
    if value == 0:
        return "$0"
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"


def dream_time(dream: dict[str, Any]) -> datetime:
    """When a journal row started."""
    return parse_iso(str(dream["started_at"]))


def dream_tokens(dream: dict[str, Any]) -> int:
    """Input plus output tokens of a journal row."""
    return int(dream.get("input_tokens") or 0) + int(dream.get("output_tokens") or 0)


class TimeAxis:
    """Maps the times of a period to percentages of the chart's width; labels a few ticks."""

    def __init__(self, since: datetime, until: datetime):
        self.since, self.until = since, until
        self.seconds = max(1.0, (until - since).total_seconds())

    def pct(self, moment: datetime) -> float:
        """Where a moment falls, 0..100 (clamped)."""
        share = (moment - self.since).total_seconds() / self.seconds
        return round(100 * min(1.0, max(0.0, share)), 3)

    def ticks(self, most: int) -> list[tuple[datetime, str]]:
        """Round moments within the period, at most ``most``, with short labels."""
        step = next((s for s in TICK_STEPS if self.seconds / s <= most), None)
        out = []
        if step is None:  # longer periods: month starts, every 1, 2, 3, 6 or 12 months
            for months in (1, 2, 3, 6, 12, 24, 60):
                out = self._month_ticks(months)
                if len(out) <= most:
                    break
            return out
        epoch = datetime(1970, 1, 5, tzinfo=UTC)  # a Monday, so weekly ticks fall on Mondays
        offset = (self.since - epoch).total_seconds()
        moment = epoch + timedelta(seconds=math.ceil(offset / step) * step)
        while moment <= self.until:
            # Within a day only midnight carries the date: "Mar 12", "06:00", "12:00" ...
            midnight = moment.hour == 0 and moment.minute == 0
            out.append((moment, moment.strftime("%b %d" if midnight else "%H:%M")))
            moment += timedelta(seconds=step)
        return out

    def _month_ticks(self, months: int) -> list[tuple[datetime, str]]:
        out = []
        moment = datetime(self.since.year, 1, 1, tzinfo=UTC)  # steps count from January
        while moment <= self.until:
            if moment >= self.since:
                out.append((moment, moment.strftime("%b %Y" if moment.month == 1 else "%b")))
            month = moment.month - 1 + months
            moment = moment.replace(year=moment.year + month // 12, month=month % 12 + 1)
        return out

    def draw(self, top: float, bottom: float, labels_at: float | None = None) -> str:
        """Vertical grid lines from ``top`` to ``bottom``, labelled at ``labels_at`` (default:
        just below ``bottom``).

        Two sets of labels: up to seven for wide screens, three for phones (the stylesheet
        shows one), so labels never collide whatever the width.
        """
        parts = []
        for most, css in ((7, "wide"), (3, "narrow")):
            for moment, label in self.ticks(most):
                x = self.pct(moment)
                anchor = "start" if x < 4 else "end" if x > 96 else "middle"
                if css == "wide":
                    parts.append(
                        f'<line class="grid" x1="{x}%" y1="{top}" x2="{x}%" y2="{bottom}"/>'
                    )
                parts.append(
                    f'<text class="tick {css}" x="{x}%" y="{labels_at or bottom + 15}"'
                    f' text-anchor="{anchor}">{esc(label)}</text>'
                )
        return "".join(parts)


def _chart(
    name: str,
    label: str,
    height: float,
    under: Iterable[str],
    layer: Iterable[str],
    over: Iterable[str],
) -> str:
    """The outer SVG: grid and labels, then the stretched inner layer, then marks over it."""
    return (
        f'<svg class="chart" data-chart="{name}" width="100%" height="{round(height)}"'
        f' role="img" aria-label="{esc(label)}">'
        + "".join(under)
        + f'<svg class="layer" width="100%" height="{round(height)}"'
        f' viewBox="0 0 {SPAN} {round(height)}" preserveAspectRatio="none">'
        + "".join(layer)
        + "</svg>"
        + "".join(over)
        + "</svg>"
    )


def _hline(y: float, label: str, css: str = "grid") -> str:
    return (
        f'<line class="{css}" x1="0" y1="{y}" x2="100%" y2="{y}"/>'
        f'<text class="tick" x="0" y="{y - 4}">{esc(label)}</text>'
    )


def hormone_chart(
    series: dict[str, list[tuple[datetime, float]]],
    marks: Sequence[Any],
    since: datetime,
    until: datetime,
    spike: float,
) -> str:
    """Each hormone's level over time, the spike threshold, and a marker per stimulus bucket."""
    axis = TimeAxis(since, until)
    top, bottom = 16.0, 200.0

    def y(level: float) -> float:
        return round(bottom - (bottom - top) * min(1.0, max(0.0, level)), 1)

    layer = [
        f'<polyline class="line h-{esc(name)}" data-hormone="{esc(name)}"'
        ' vector-effect="non-scaling-stroke" points="'
        + " ".join(f"{round(axis.pct(moment) * 10, 1)},{y(level)}" for moment, level in points)
        + '"/>'
        for name, points in series.items()
    ]
    rug = len(marks) > MARKS_ON_LINES
    rug_top = bottom + 6
    height = rug_top + RUG_ROW * len(series) + 20 if rug else bottom + 22
    under = [axis.draw(top, bottom, height - 7)]
    under += [_hline(y(level), f"{level:g}") for level in (0.5, 1.0)]
    under.append(_hline(y(0.0), ""))
    under.append(
        f'<line class="spike" x1="0" y1="{y(spike)}" x2="100%" y2="{y(spike)}"/>'
        f'<text class="tick" x="100%" y="{y(spike) - 4}" text-anchor="end">'
        f"spike {spike:g}</text>"
    )
    out: list[str] = []
    rows = {name: rug_top + RUG_ROW * index for index, name in enumerate(series)}
    for mark in marks:
        what = (
            f"{mark.hormone} {mark.net_delta:+.2f}"
            if mark.count == 1
            else f"{mark.count} {mark.hormone} stimuli, net {mark.net_delta:+.2f}"
        )
        reasons = "; ".join(mark.reasons)
        title = f"{when(mark.at)}: {what} → {mark.level:.2f}" + (f" ({reasons})" if reasons else "")
        data = (
            f'data-hormone="{esc(mark.hormone)}" data-at="{esc(mark.at.isoformat())}"'
            f' data-count="{mark.count}" data-delta="{mark.net_delta:.3f}"'
        )
        x = axis.pct(mark.at)
        if rug:  # many stimuli: a tick each in the hormone's row under the plot
            row = rows.get(mark.hormone, rug_top)
            out.append(
                f'<line class="stim rug h-{esc(mark.hormone)}" {data} x1="{x}%" y1="{row}"'
                f' x2="{x}%" y2="{row + RUG_ROW - 2}"><title>{esc(title)}</title></line>'
            )
            continue
        shape = "M0,-7L-4.5,2L4.5,2Z" if mark.net_delta >= 0 else "M0,7L-4.5,-2L4.5,-2Z"
        out.append(
            f'<svg x="{x}%" y="{y(mark.level)}" overflow="visible">'
            f'<path class="stim h-{esc(mark.hormone)}" {data} d="{shape}">'
            f"<title>{esc(title)}</title></path></svg>"
        )
    return _chart("hormones", "Hormone levels over time, stimuli marked", height, under, layer, out)


def dream_chart(
    dreams: Sequence[dict[str, Any]], linked: set[int], since: datetime, until: datetime
) -> str:
    """One lane per outcome; a dot per dream (skipped ones grouped), linked to its diff."""
    axis = TimeAxis(since, until)
    lanes = [o for o in OUTCOMES if any(d["outcome"] == o for d in dreams)] or ["committed"]
    lanes += sorted({d["outcome"] for d in dreams} - set(OUTCOMES))
    lane_h = 40.0
    lane_y = {outcome: lane_h * (i + 1) - 6 for i, outcome in enumerate(lanes)}
    bottom = lane_h * len(lanes) + 4
    under = [axis.draw(0, bottom)]
    for outcome in lanes:
        count = sum(1 for d in dreams if d["outcome"] == outcome)
        under.append(
            f'<line class="lane" x1="0" y1="{lane_y[outcome]}" x2="100%" y2="{lane_y[outcome]}"/>'
            f'<text class="lab" x="0" y="{lane_y[outcome] - 12}" data-outcome="{esc(outcome)}"'
            f' data-count="{count}">{esc(outcome)} · {count:,}</text>'
        )
    out: list[str] = []
    most = max((dream_tokens(d) for d in dreams), default=0) or 1
    skipped: dict[int, list[dict[str, Any]]] = {}
    for dream in dreams:
        at = dream_time(dream)
        if dream["outcome"] == "skipped":
            skipped.setdefault(int(axis.pct(at) * 2), []).append(dream)  # half-percent groups
            continue
        tokens = dream_tokens(dream)
        title = (
            f"Dream #{dream['id']} {dream['outcome']}, {when(at)}: {tokens:,} tokens, "
            f"{money(dream['cost_usd'])}, {dream['revisions']} revision(s)"
            + (f" — {dream['reason']}" if dream.get("reason") else "")
        )
        dot = (
            f'<circle class="dot o-{esc(dream["outcome"])}" cx="{axis.pct(at)}%"'
            f' cy="{lane_y[dream["outcome"]]}" r="{round(3.5 + 4.0 * math.sqrt(tokens / most), 1)}"'
            f' data-id="{dream["id"]}" data-outcome="{esc(dream["outcome"])}"'
            f' data-tokens="{tokens}" data-cost="{float(dream["cost_usd"] or 0):.6f}"'
            f' data-revisions="{dream["revisions"]}"><title>{esc(title)}</title></circle>'
        )
        out.append(f'<a href="#dream-{dream["id"]}">{dot}</a>' if dream["id"] in linked else dot)
    for group in skipped.values():
        first, last = dream_time(group[0]), dream_time(group[-1])
        reason = group[-1].get("reason") or ""
        title = (
            f"Dream #{group[0]['id']} skipped, {when(first)}"
            if len(group) == 1
            else f"{len(group)} dreams skipped, {when(first)} – {when(last)}"
        ) + (f" ({reason})" if reason else "")
        out.append(
            f'<circle class="dot o-skipped" cx="{axis.pct(last)}%" cy="{lane_y["skipped"]}"'
            f' r="3" data-count="{len(group)}"><title>{esc(title)}</title></circle>'
        )
    return _chart("dreams", "Dreams over time by outcome", bottom + 22, under, [], out)


def cost_chart(
    dreams: Sequence[dict[str, Any]], before: float, since: datetime, until: datetime
) -> str:
    """The LLM cost to date over the period, as a rising step line."""
    axis = TimeAxis(since, until)
    top, bottom = 18.0, 120.0
    total, points = before, [(since, before)]
    for dream in dreams:
        if dream["cost_usd"]:
            total += float(dream["cost_usd"])
            points.append((dream_time(dream), total))
    points.append((until, total))
    ceiling = _nice_ceiling(total * 1.2)  # room above the line for its label

    def y(value: float) -> float:
        return round(bottom - (bottom - top) * value / ceiling, 1)

    line = f"M0,{y(points[0][1])}" + "".join(
        f"H{round(axis.pct(moment) * 10, 1)}V{y(value)}" for moment, value in points[1:]
    )
    layer = [
        f'<path class="area" d="{line}V{bottom}H0Z"/>',
        f'<path class="cost" vector-effect="non-scaling-stroke" d="{line}"'
        f' data-total="{total:.6f}"/>',
    ]
    under = [axis.draw(top, bottom)]
    under += [_hline(y(value), _short_money(value)) for value in (ceiling / 2, ceiling)]
    under.append(_hline(y(0.0), ""))
    out = [
        f'<text class="lab" x="100%" y="{max(top + 12, y(total) - 8)}" text-anchor="end">'
        f"{esc(money(total))}</text>"
    ]
    return _chart("cost", "LLM cost to date", bottom + 22, under, layer, out)


def lifecycle_chart(
    buckets: Sequence[tuple[datetime, dict[str, int]]], days: int, since: datetime, until: datetime
) -> str:
    """Small multiples: crystals created, consolidated, archived, frozen per day (or week)."""
    axis = TimeAxis(since, until)
    row_h, bar_h = 60.0, 32.0
    bottom = row_h * len(LIFECYCLE_ROWS) + 2
    span = timedelta(days=days)
    unit = "day" if days == 1 else "week"
    layer: list[str] = []
    under = [axis.draw(0, bottom)]
    for index, (event, label) in enumerate(LIFECYCLE_ROWS):
        base = row_h * (index + 1) - 4
        counts = [counts.get(event, 0) for _, counts in buckets]
        peak, total = max(counts, default=0), sum(counts)
        under.append(
            f'<line class="lane" x1="0" y1="{base}" x2="100%" y2="{base}"/>'
            f'<text class="lab" x="0" y="{base - bar_h - 6}" data-event="{event}"'
            f' data-total="{total}">{esc(label)} · {total:,}'
            + (f'<tspan class="tick"> · most {peak:,} a {unit}</tspan>' if peak else "")
            + "</text>"
        )
        for (start, _), count in zip(buckets, counts, strict=True):
            if not count:
                continue
            x0 = axis.pct(max(start, since)) * 10
            x1 = axis.pct(min(start + span, until)) * 10
            height = max(1.0, round(bar_h * count / peak, 1))
            day = start.date().isoformat()
            title = (
                f"{label}: {count:,} on {day}"
                if days == 1
                else f"{label}: {count:,} in the week of {day}"
            )
            layer.append(
                f'<rect class="bar l-{event}" x="{round(x0 + 0.8, 1)}"'
                f' y="{round(base - height, 1)}"'
                f' width="{max(1.0, round(x1 - x0 - 1.6, 1))}" height="{height}"'
                f' data-day="{day}" data-event="{event}" data-count="{count}">'
                f"<title>{esc(title)}</title></rect>"
            )
    return _chart("lifecycle", "Crystal lifecycle over time", bottom + 22, under, layer, [])


def level_bar(name: str, level: float) -> str:
    """A small horizontal bar for one hormone's current level."""
    width = round(100 * min(1.0, max(0.0, level)), 1)
    return (
        f'<svg class="meter" viewBox="0 0 100 8" preserveAspectRatio="none" role="img"'
        f' aria-label="{esc(name)} {level:.2f}"><rect class="track" width="100" height="8"/>'
        f'<rect class="fill h-{esc(name)}" width="{width}" height="8"/></svg>'
    )


def _nice_ceiling(value: float) -> float:
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for factor in (1, 2, 2.5, 5, 10):
        if value <= factor * power:
            return float(factor * power)
    return float(10 * power)


def _short_money(value: float) -> str:
    if value == 0:
        return "$0"
    return f"${value:,.0f}" if value >= 10 else f"${value:.2g}"
