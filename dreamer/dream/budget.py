"""The spending cap: ``memory.dream.maxUsdPerDay`` / ``maxUsdPerMonth`` and their token twins.

The cap reads the journal, never a counter in memory, so it holds across ``dream run``,
``dream serve``, ``dream tick`` and every ``dream worker`` of a fleet: what a day (or a calendar
month, both in UTC) spent is the sum of ``cost_usd`` (and of every token: input, output, cache
reads and writes) over the journal's dreams of that period, whatever their outcome, so a
rejected dream's drafts and revisions and a failed dream's paid answer count too.

A dream is skipped when it *would pass* the cap: when what the period spent plus what a dream
costs here (the mean of the last few dreams that cost anything; nothing before the first one)
is above the cap. So with $0.05 a day and $0.03 a dream the second dream of the day is skipped
and the next day's first one runs. The deterministic offline synthesizer spends nothing and is
never capped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dreamer.errors import DreamError
from dreamer.memory.workspace import Workspace
from dreamer.support.times import as_utc, iso

PREFIX = "spending cap"  # how a capped skip's reason begins (the health line looks for it)
RECENT = 3  # dreams averaged to estimate what the next one costs
FREE = ("offline",)


@dataclass(frozen=True)
class Spend:
    """What one period spent and what it may."""

    period: str  # "day" | "month"
    since: datetime
    until: datetime  # when the period ends (the next one starts)
    usd: float
    tokens: int


def period_start(now: datetime, period: str) -> datetime:
    """The start of ``now``'s UTC day or calendar month."""
    day = as_utc(now).replace(hour=0, minute=0, second=0, microsecond=0)
    return day if period == "day" else day.replace(day=1)


def period_end(start: datetime, period: str) -> datetime:
    """The start of the next day or month."""
    if period == "day":
        return start + timedelta(days=1)
    return (start + timedelta(days=32)).replace(day=1)


def tokens_of(row: dict[str, Any]) -> int:
    """Every token a journal row paid for."""
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    return sum(int(row.get(key) or 0) for key in keys)


def spent(ws: Workspace, now: datetime, period: str) -> Spend:
    """What this workspace's dreams spent in ``now``'s day or month, from the journal."""
    start = period_start(now, period)
    rows = [
        row
        for row in ws.store.history.dream_rows(iso(start), iso(as_utc(now)))
        if row["outcome"] != "forgotten"
    ]
    usd = sum(float(row.get("cost_usd") or 0.0) for row in rows)
    return Spend(period, start, period_end(start, period), usd, sum(map(tokens_of, rows)))


def estimate(ws: Workspace) -> tuple[float, int]:
    """What one dream costs here: the mean (USD, tokens) of the last dreams that cost any."""
    rows = [
        row for row in ws.store.journal.dream_entries(50) if tokens_of(row) or row.get("cost_usd")
    ]
    recent = rows[:RECENT]
    if not recent:
        return 0.0, 0
    usd = sum(float(row.get("cost_usd") or 0.0) for row in recent) / len(recent)
    return usd, round(sum(map(tokens_of, recent)) / len(recent))


def _caps(ws: Workspace) -> dict[str, tuple[float | None, int | None]]:
    settings = ws.settings
    return {
        "day": (settings.max_usd_per_day, settings.max_tokens_per_day),
        "month": (settings.max_usd_per_month, settings.max_tokens_per_month),
    }


def blocked(ws: Workspace, now: datetime, synthesizer: Callable[[], str]) -> str | None:
    """Why a dream at ``now`` would pass a cap (the journal's skip reason), or None.

    ``synthesizer`` gives the backend's name; it is asked only when a cap is set.
    """
    caps = _caps(ws)
    if all(cap is None for pair in caps.values() for cap in pair):
        return None
    try:
        if synthesizer() in FREE:
            return None
    except DreamError:
        return None  # a backend that cannot be built fails the dream itself, journaled there
    usd_each, tokens_each = estimate(ws)
    for period, (usd_cap, token_cap) in caps.items():
        spend = spent(ws, now, period)
        key = "Day" if period == "day" else "Month"
        resume = f"dreams resume after {iso(spend.until)}"
        if usd_cap is not None and (spend.usd >= usd_cap or spend.usd + usd_each > usd_cap):
            return (
                f"{PREFIX}: ${spend.usd:.4f} spent this {period} of the ${usd_cap:g} cap, and a "
                f"dream costs about ${usd_each:.4f}; {resume} (or raise "
                f"memory.dream.maxUsdPer{key})"
            )
        if token_cap is not None and (
            spend.tokens >= token_cap or spend.tokens + tokens_each > token_cap
        ):
            return (
                f"{PREFIX}: {spend.tokens} tokens used this {period} of the {token_cap} cap, and "
                f"a dream uses about {tokens_each}; {resume} (or raise "
                f"memory.dream.maxTokensPer{key})"
            )
    return None


def summary(ws: Workspace, now: datetime, *, always: bool = False) -> dict[str, Any] | None:
    """The caps and what each period spent, for ``dream status``; None without caps (unless
    ``always``: then the spend with caps of None)."""
    caps = _caps(ws)
    if not always and all(cap is None for pair in caps.values() for cap in pair):
        return None
    out: dict[str, Any] = {}
    for period, (usd_cap, token_cap) in caps.items():
        spend = spent(ws, now, period)
        out[period] = {
            "usd": round(spend.usd, 6),
            "usd_cap": usd_cap,
            "tokens": spend.tokens,
            "tokens_cap": token_cap,
            "resets_at": iso(spend.until),
        }
    return out
