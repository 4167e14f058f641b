"""One consolidation tick (every 30 minutes in service): hormones decay, spike notes, lifecycle.

1. **Decay.** The levels at ``now`` (computed by ``dreamer.hormones``) are stored as a history row.
2. **Spikes.** The history since the previous tick is replayed: a hormone that rose above
   ``SPIKE_THRESHOLD`` (0.7) from at or below it is a spike. Each hormone that spiked gets one
   automatic note in the seed's form::

       [AUTO] Hormonal event: dopamine spike (achievement/breakthrough detected). Peaked at ...

   written through ``Workspace.note`` (source ``auto``, importance 0.8), so it is in the scratch
   and a crystal at once. While the level stays above the threshold nothing more is written; once
   it has fallen to or below it, the next rise is a new spike. The state (which hormones are
   high, and how far the history was replayed) lives in the meta key ``hormones.spikes``, so the
   cooldown survives restarts and a spike that came and went between two ticks is not missed.
3. **Lifecycle.** ``dreamer.memory.lifecycle.run``: fading, use, archiving, merging.

Two ticks of one workspace never run at once: ``memory/consolidate.lock`` (non-blocking; the
second raises ``LockHeld``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dreamer.config import HORMONES
from dreamer.memory import hormone_summary, hormones, lifecycle
from dreamer.memory.hormones import SPIKE_THRESHOLD
from dreamer.memory.workspace import Workspace
from dreamer.retrieval import vectors
from dreamer.retrieval.reindex import TICK_LIMIT, embed_waiting, reindex
from dreamer.support.locks import hold
from dreamer.support.times import as_utc, iso, parse_iso

SPIKE_IMPORTANCE = 0.8
STATE_KEY = "hormones.spikes"


@dataclass
class ConsolidationReport:
    """What one tick did."""

    at: datetime
    levels: dict[str, float]
    mood: str
    spikes: list[dict[str, Any]] = field(default_factory=list)
    lifecycle: lifecycle.LifecycleReport = field(default_factory=lifecycle.LifecycleReport)
    reindexed: int = 0  # crystals given a vector by the current embedder

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "at": iso(self.at),
            "levels": self.levels,
            "mood": self.mood,
            "spikes": self.spikes,
            "reindexed": self.reindexed,
            "lifecycle": self.lifecycle.to_dict(),
        }

    def summary(self) -> str:
        """One line for the run log."""
        spikes = ", ".join(spike["hormone"] for spike in self.spikes) or "none"
        line = f"spikes: {spikes}; {self.lifecycle.summary()}"
        return line + (f"; {self.reindexed} re-embedded" if self.reindexed else "")


@contextlib.contextmanager
def _tick_lock(ws: Workspace) -> Iterator[None]:
    with hold(
        ws.memory_dir / "consolidate.lock",
        wait=False,
        busy=f"consolidation already running in {ws.root}; wait for it to finish",
    ):
        yield


def tick(ws: Workspace, now: datetime) -> ConsolidationReport:
    """Run one consolidation tick at ``now``: decay, spike notes, crystal lifecycle."""
    now = as_utc(now).replace(microsecond=0)
    with _tick_lock(ws):
        levels = hormones.record(ws, now)
        report = ConsolidationReport(now, levels, hormone_summary.mood(levels))
        for hormone, peak, peak_at in detect_spikes(ws, now):
            text = spike_text(ws, hormone, peak, peak_at, now)
            crystal_id = ws.note(text, importance=SPIKE_IMPORTANCE, at=now, source="auto")
            report.spikes.append(
                {
                    "hormone": hormone,
                    "peak": round(peak, 4),
                    "peak_at": iso(peak_at),
                    "crystal_id": crystal_id,
                }
            )
        # Vector-less notes first (they need no reload of other processes' indexes), and
        # before the lifecycle, whose near-duplicate merge compares vectors.
        report.reindexed = embed_waiting(ws.store, ws.embedder, limit=TICK_LIMIT)
        report.lifecycle = lifecycle.run(ws, now)
        report.reindexed += reindex(ws.store, ws.embedder, limit=TICK_LIMIT)
        if not ws.read_only:  # the vector file: written here rather than in a user's search
            vectors.keep_up(ws.store, ws.embedder)
    return report


def _load_state(ws: Workspace) -> dict[str, Any]:
    raw = ws.store.records.get_meta(STATE_KEY)
    state = json.loads(raw) if raw else {}
    state.setdefault("high", {name: False for name in HORMONES})
    state.setdefault("checked_id", 0)
    return state


def detect_spikes(ws: Workspace, now: datetime) -> list[tuple[str, float, datetime]]:
    """Hormones that crossed the threshold since the last check: [(hormone, peak, when)].

    Replays the history rows stored since the last check (by row id, so a stimulus stored in
    the same second as the previous tick still counts), so the result does not depend on how
    often ticks run; updates the spike state in the meta table.
    """
    state = _load_state(ws)
    high: dict[str, bool] = state["high"]
    checked = int(state["checked_id"])
    last = ws.store.hormones.hormones_at_row(checked)
    prev_at: datetime | None = parse_iso(last[0]) if last else None
    prev = dict(zip(HORMONES, last[1:], strict=True)) if last else hormones.rest_levels(ws)
    rows = ws.store.hormones.hormone_rows_after(checked, iso(now))
    spikes: dict[str, tuple[float, datetime]] = {}
    for row_id, at_text, *values in rows:
        at = parse_iso(at_text)
        checked = max(checked, row_id)
        before = prev if prev_at is None else hormones.decay(ws, prev, prev_at, at)
        after = dict(zip(HORMONES, values, strict=True))
        for name in HORMONES:
            if before[name] <= SPIKE_THRESHOLD:
                high[name] = False
            if after[name] > SPIKE_THRESHOLD and not high[name]:
                high[name] = True
                spikes[name] = (after[name], at)
            elif high[name] and name in spikes and after[name] > spikes[name][0]:
                spikes[name] = (after[name], at)  # the same spike, climbing higher
        prev_at, prev = at, after
    final = prev if prev_at is None else hormones.decay(ws, prev, prev_at, now)
    for name in HORMONES:
        if final[name] <= SPIKE_THRESHOLD:
            high[name] = False
    state["checked_id"] = checked
    state.pop("checked_at", None)
    ws.store.records.set_meta(STATE_KEY, json.dumps(state))
    return [(name, *spikes[name]) for name in HORMONES if name in spikes]


def spike_text(ws: Workspace, hormone: str, peak: float, peak_at: datetime, now: datetime) -> str:
    """The automatic note for one spike, in the seed's form, with what was going on."""
    lexicon = hormones.load_lexicon(ws)
    cause = (lexicon.get(hormone) or {}).get("reason") or f"{hormone} stimulus"
    reasons = ws.store.hormones.stimulus_reasons(hormone, iso(peak_at), 10)
    unique = [reason for reason in dict.fromkeys(reasons) if reason != cause][:3]
    context = f"Peaked at {peak:.2f} at {iso(peak_at)}"
    if unique:
        context += " after: " + "; ".join(reversed(unique))
    latest = ws.store.crystals.latest_text("scratch", iso(peak_at))
    text = f"[AUTO] Hormonal event: {hormone} spike ({cause}). {context}."
    if latest:
        clipped = " ".join(latest.split())
        clipped = clipped if len(clipped) <= 120 else clipped[:117] + "..."
        text += f' Latest note: "{clipped}"'
    return text
