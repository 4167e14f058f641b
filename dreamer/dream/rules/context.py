"""What every section rule of the offline synthesizer consults in one dream."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dreamer.dream import keep_instructions
from dreamer.dream.rules.insight_results import Insights
from dreamer.dream.rules.lines import LABEL_PREFIX, clip, norm
from dreamer.dream.synth import DreamInputs


@dataclass
class Context:
    """What every section rule consults: superseded texts, answers, dates ahead, causes."""

    now: datetime
    superseded: set[str]
    answered: set[str]
    ahead: dict[str, str]  # normalised text -> ISO date still ahead
    rules: list[keep_instructions.Rule]
    causes: dict[int, str]  # crystal id -> the hormone it lifted
    people: list[dict[str, Any]]
    replaced: dict[str, str] = field(default_factory=dict)  # newer text -> the older it replaced
    weights: dict[str, dict[str, float]] = field(default_factory=dict)  # see Insights.weights

    @classmethod
    def of(cls, inputs: DreamInputs, ins: Insights) -> Context:
        causes = {cid: name for name, ids in inputs.causes.items() for cid in ids}
        return cls(
            now=inputs.now,
            superseded={norm(c["older"]["text"]) for c in ins.contradictions},
            answered={norm(q["question"]) for q in ins.answered_questions},
            ahead={line_key(u["text"]): u["date"] for u in ins.upcoming},
            rules=keep_instructions.parse(inputs.instructions or ""),
            causes=causes,
            people=list(ins.people),
            replaced={norm(c["newer"]["text"]): c["older"]["text"] for c in ins.contradictions},
            weights=dict(ins.weights),
        )

    def date_of(self, text: str) -> str | None:
        """The date still ahead a text (or the line it became) names, if any."""
        key = line_key(text)
        if key in self.ahead:
            return self.ahead[key]
        return self._clipped.get(key)

    @functools.cached_property
    def _clipped(self) -> dict[str, str]:
        """Each date ahead by the key of its clipped text (the first one a key has), made once
        per dream: looked up for every line, not recomputed for every line."""
        out: dict[str, str] = {}
        for text, date in self.ahead.items():
            out.setdefault(line_key(clip(text)), date)
        return out


def line_key(text: str) -> str:
    """A note or a state line as one key: no bullet, no label ("Deadline: "), any case, so a
    carried "- Deadline: ..." line finds the date its note named."""
    return norm(LABEL_PREFIX.sub("", re.sub(r"^\s*[-*•]\s+", "", text).strip()))
