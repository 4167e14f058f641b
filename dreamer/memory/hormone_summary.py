"""What the hormones say: a mood for MEMORY.md's status line, and the period a dream weighs.

The levels themselves, and what moves them, are ``hormones.py``; this reads them back (the
dream, the tick's report, the service's status), so a note, which only moves them, never loads
it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dreamer.config import HORMONES
from dreamer.memory.hormones import rest_levels
from dreamer.support.times import iso

if TYPE_CHECKING:
    from dreamer.memory.parts import Parts

DOMINANCE = 0.10  # how far above its resting level a hormone must rise to steer a dream
MAX_CAUSES = 3


def period(ws: Parts, since: datetime, until: datetime) -> dict[str, Any]:
    """What the hormones did after ``since`` up to ``until``: peaks above rest and their stimuli.

    A nightly dream sees every daytime stimulus decayed back to rest (half-lives of 30 to 60
    minutes), so it weighs the period instead: each hormone's highest level right after a
    stimulus, how far that is above rest (``lift``), and the stimuli that lifted it most.
    ``dominant`` is the hormone with the largest lift, if one rose at least DOMINANCE.
    """
    rest = rest_levels(ws)
    rows = ws.store.hormones.stimuli_between(iso(since), iso(until), 2000)
    peaks: dict[str, dict[str, Any]] = {}
    for name in HORMONES:
        pushes = [row for row in rows if row["hormone"] == name and (row["delta"] or 0) > 0]
        if not pushes:
            continue
        top = max(pushes, key=lambda row: (row[name], row["at"]))
        strongest = sorted(pushes, key=lambda row: (-row[name], row["at"]))[:MAX_CAUSES]
        peaks[name] = {
            "peak": round(float(top[name]), 3),
            "at": top["at"],
            "lift": round(float(top[name]) - rest[name], 3),
            "stimuli": len(pushes),
            "causes": [
                {
                    "at": row["at"],
                    "reason": row["reason"] or f"{name} stimulus",
                    "source": row["source"],
                    "delta": row["delta"],
                }
                for row in sorted(strongest, key=lambda row: row["at"])
            ],
        }
    lifted = [name for name in peaks if peaks[name]["lift"] >= DOMINANCE]
    dominant = max(lifted, key=lambda n: (peaks[n]["lift"], n)) if lifted else None
    return {"since": iso(since), "until": iso(until), "dominant": dominant, "peaks": peaks}


def mood(current: Mapping[str, float]) -> str:
    """A short description of the levels for MEMORY.md's status line, e.g. "energized, calm"."""
    dopamine = current.get("dopamine", 0.15)
    cortisol = current.get("cortisol", 0.02)
    oxytocin = current.get("oxytocin", 0.20)
    words = []
    words.append(
        "elated"
        if dopamine >= 0.7
        else "energized"
        if dopamine >= 0.4
        else "steady"
        if dopamine >= 0.1
        else "flat"
    )
    words.append(
        "stressed"
        if cortisol >= 0.7
        else "focused"
        if cortisol >= 0.35
        else "alert"
        if cortisol >= 0.15
        else "calm"
    )
    if oxytocin >= 0.6:
        words.append("warmly connected")
    elif oxytocin >= 0.35:
        words.append("friendly")
    return ", ".join(words)
