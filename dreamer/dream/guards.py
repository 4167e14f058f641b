"""Collapse guards and schema checks on a candidate state.

A candidate passes when:

- every one of the seven sections is present (an empty body is allowed; a missing key is not);
- it fits the schema (pointers and skills parse; at most 20 pointers);
- every section is within its token budget, and the whole within the total budget;
- it is not a mass drop: when the previous state was at least 2,000 characters, the new one is
  at least half as long (the rendered state is compared, never a hand-written preamble);
- it has substance: at least 50 characters of text under the headings;
- The Bond keeps at least 30% of the terms of the previous Bond (when that had 5 or more).

``check`` returns a ``GuardReport`` whose critiques are one-line, actionable sentences: they go
to the synthesizer for a revision, to the journal, and to ``dream run --dry-run``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jsonschema

from dreamer.dream.insights import keywords
from dreamer.memory.state import WorkingMemory, render, sections, total_budget
from dreamer.support import tokens
from dreamer.support.resources import schema

MASS_FLOOR_CHARS = 2000
MASS_DROP_RATIO = 0.5
MAX_POINTERS = 20
MIN_SUBSTANCE_CHARS = 50
BOND_KEEP_RATIO = 0.3
BOND_MIN_TERMS = 5


@dataclass
class GuardReport:
    """The verdict on one candidate: which guards failed, why, and what was measured."""

    critiques: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # guard names, parallel to critiques
    measures: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no guard objected."""
        return not self.critiques

    def add(self, guard: str, critique: str) -> None:
        """Record one objection."""
        self.failed.append(guard)
        self.critiques.append(critique)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (ok, failed, critiques, measures)."""
        return {
            "ok": self.ok,
            "failed": list(self.failed),
            "critiques": list(self.critiques),
            "measures": dict(self.measures),
        }


def state_chars(state: WorkingMemory) -> int:
    """Length of the rendered state, without the preamble or the status line."""
    bare = WorkingMemory(dict(state.bodies), None, None, "", list(state.extra))
    return len(render(bare))


def check(candidate: WorkingMemory, old: WorkingMemory | None = None) -> GuardReport:
    """Run every guard on candidate against the previous state old."""
    old = old or WorkingMemory()
    report = GuardReport()
    _presence(candidate, report)
    _schema(candidate, report)
    _budgets(candidate, report)
    _mass(candidate, old, report)
    _substance(candidate, report)
    _bond(candidate, old, report)
    return report


def _presence(candidate: WorkingMemory, report: GuardReport) -> None:
    missing = [s.title for s in sections() if s.key not in candidate.bodies]
    if missing:
        report.add(
            "sections",
            f"sections missing: {', '.join(missing)}; write all seven "
            "(an empty section is allowed, a missing one is not)",
        )


def _schema(candidate: WorkingMemory, report: GuardReport) -> None:
    pointers = candidate.pointers()
    report.measures["pointers"] = len(pointers)
    if len(pointers) > MAX_POINTERS:
        report.add(
            "pointers",
            f"{len(pointers)} crystal pointers, more than {MAX_POINTERS}: "
            "merge related topics into one pointer or drop the oldest",
        )
    for key, parsed, what in (
        ("crystal_pointers", len(pointers), "- Past: topic → search: `kw`"),
        ("emerging_skills", len(candidate.skills()), "- skill → Confidence: n% | Occurrences: k"),
    ):
        lines = [
            line for line in candidate.body(key).split("\n") if line.strip().startswith(("-", "*"))
        ]
        if len(lines) > parsed:
            title = next(s.title for s in sections() if s.key == key)
            report.add(
                "schema",
                f"{len(lines) - parsed} line(s) of {title} do not parse; write each as '{what}'",
            )
    try:
        fields = candidate.to_fields()
        fields["crystal_pointers"] = fields["crystal_pointers"][:MAX_POINTERS]
        jsonschema.validate(fields, schema("working_memory"))
    except jsonschema.ValidationError as e:
        report.add("schema", f"the state does not fit the schema: {e.message}")


def _budgets(candidate: WorkingMemory, report: GuardReport) -> None:
    used: dict[str, int] = {}
    for s in sections():
        n = tokens.count(candidate.body(s.key))
        used[s.key] = n
        if n > s.budget_tokens:
            report.add(
                "budget",
                f"{s.title} is {n} tokens, over its budget of "
                f"{s.budget_tokens}; shorten it or move detail to pointers",
            )
    report.measures["tokens"] = used
    total = sum(used.values())
    if total > total_budget():
        report.add(
            "budget",
            f"the state is {total} tokens, over the total budget of "
            f"{total_budget()}; shorten the longest sections",
        )


def _mass(candidate: WorkingMemory, old: WorkingMemory, report: GuardReport) -> None:
    before, after = state_chars(old), state_chars(candidate)
    report.measures["chars"] = {"old": before, "new": after}
    if before >= MASS_FLOOR_CHARS and after < MASS_DROP_RATIO * before:
        report.add(
            "mass_drop",
            f"mass drop: the new state is {after} characters, less than "
            f"half of the previous {before}; carry over what still holds",
        )


def _substance(candidate: WorkingMemory, report: GuardReport) -> None:
    substance = len(candidate.substance())
    report.measures["substance_chars"] = substance
    if substance < MIN_SUBSTANCE_CHARS:
        report.add(
            "empty",
            f"empty synthesis: only {substance} characters under the headings "
            f"(at least {MIN_SUBSTANCE_CHARS}); write what the notes say",
        )


def _bond(candidate: WorkingMemory, old: WorkingMemory, report: GuardReport) -> None:
    old_terms = set(keywords(old.body("bond")))
    if len(old_terms) < BOND_MIN_TERMS:
        return
    new_terms = set(keywords(candidate.body("bond")))
    kept = len(old_terms & new_terms) / len(old_terms)
    report.measures["bond_kept"] = round(kept, 3)
    if kept < BOND_KEEP_RATIO:
        report.add(
            "bond_drift",
            f"Bond drift: The Bond keeps {kept:.0%} of its previous terms "
            f"(at least {BOND_KEEP_RATIO:.0%}); keep what is still true "
            "about the user and change only what a newer note contradicts",
        )
