"""What a report shows, as plain data: gathered by ``report``, drawn by ``report_page``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

LISTED_DREAMS = 120  # dreams listed one by one, newest first (skipped ones are only counted)


@dataclass
class Period:
    """The time the charts cover."""

    since: datetime
    until: datetime

    @property
    def seconds(self) -> float:
        """Its length in seconds (at least one)."""
        return max(1.0, (self.until - self.since).total_seconds())


@dataclass
class StimulusMark:
    """The stimuli of one hormone within one bucket of time, drawn as one marker."""

    hormone: str
    at: datetime
    level: float  # the level right after the largest of them
    count: int
    net_delta: float
    reasons: list[str]


@dataclass
class PointerCheck:
    """A crystal pointer from MEMORY.md and whether its keywords still find its topic."""

    topic: str
    keywords: str
    retrieves: bool


@dataclass
class ReportData:
    """Everything the page shows, gathered at ``now``."""

    workspace: str
    now: datetime
    period: Period
    crystals: dict[str, int]
    scratch_notes: int
    pending: int
    min_chunks: int
    last_dream: dict[str, Any] | None
    next_dream: datetime | None
    totals: dict[str, Any]
    removed: dict[str, int]
    levels: dict[str, float]
    mood: str
    hormone_series: dict[str, list[tuple[datetime, float]]]
    stimuli: list[StimulusMark]
    strongest: list[dict[str, Any]]
    dreams: list[dict[str, Any]]
    diffs: dict[int, str]
    lifecycle: list[tuple[datetime, dict[str, int]]]
    lifecycle_days: int  # days per bar
    pointers: list[PointerCheck]
    memory_md: str
    health: list[str] = field(default_factory=list)  # dreamer.dream.health: empty when well
