"""What the insights of a dream found, in the shape dreamer.dream.insights documents."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Insights:
    """Everything a dream works out before it writes (see the module docstring for the shape)."""

    topics: list[dict[str, Any]] = field(default_factory=list)
    contradictions: list[dict[str, Any]] = field(default_factory=list)
    curiosity_gaps: list[dict[str, Any]] = field(default_factory=list)
    emerging_skills: list[dict[str, Any]] = field(default_factory=list)
    fading_topics: list[dict[str, Any]] = field(default_factory=list)
    answered_questions: list[dict[str, Any]] = field(default_factory=list)
    upcoming: list[dict[str, Any]] = field(default_factory=list)
    people: list[dict[str, Any]] = field(default_factory=list)
    # For the offline synthesizer only, not part of the documented shape: the importance and
    # age of each old pointer (by its keywords) and fading line (by the line).
    weights: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict in the documented shape."""
        data = asdict(self)
        del data["weights"]
        return data

    def summary(self) -> dict[str, int]:
        """How many of each kind (for the journal and the CLI)."""
        return {key: len(value) for key, value in self.to_dict().items()}
