"""Collapse guards and schema checks on a candidate state.

A candidate passes when:

- every one of the seven sections is present (an empty body is allowed; a missing key is not);
- it fits the schema (pointers and skills parse; at most 20 pointers);
- every section is within its token budget, and the whole within the total budget;
- it is not a mass drop: when the previous state was at least 2,000 characters, the new one is
  at least half as long (the rendered state is compared, never a hand-written preamble);
- it has substance: at least 50 characters of text under the headings;
- The Bond keeps at least 30% of the previous Bond's terms (when that had 5 or more; dates,
  times, months and weekdays are not terms), judged on word stems ("answers" keeps "answer")
  weighted by rarity (a name or a rare word counts more than "accordingly"); a Bond that
  changed because the dream's notes state a change (a new owner, a preference that is "no
  longer" true) is not drift when the new Bond is what the notes and the old Bond say.

The mass-drop guard measures against what the budgets allow: a hand-edited state larger than
its section budgets counts only as much as fits them (``oversized_sections.trim``; the cycle
moves the rest into crystals), so such a workspace can commit instead of failing forever.

No hand edit of MEMORY.md can trip a guard for ever, because a synthesizer builds on the old
state as the cycle mends it first (``dreamer.dream.hand_edits``, then ``overflow``):

- sections: a missing heading is an empty section; a doubled one is one section;
- schema: a pointer line that does not parse becomes a pointer to its own crystal, a skill line
  that does not parse moves to The Phenotype, a confidence past 100% reads as 100%;
- pointers: past 20, the rest move to crystals behind one pointer;
- budget: a section past its budget keeps its leading lines, the rest move to crystals (the
  seven budgets add up to less than the total, and unknown sections are not budgeted);
- mass drop: measured against the mended, trimmed old state;
- Bond drift: measured against the Bond as the person left it, which is what carries over.
- empty: a state emptied by hand commits with what the dream's notes say.

``check`` returns a ``GuardReport`` whose critiques are one-line, actionable sentences: they go
to the synthesizer for a revision, to the journal, and to ``dream run --dry-run``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import jsonschema

from dreamer.dream import oversized_sections
from dreamer.memory.state import WorkingMemory, render, sections, total_budget
from dreamer.support import tokens
from dreamer.support.resources import schema
from dreamer.support.words import NOTE_STOP_WORDS, NOTE_WORD, stem

MASS_FLOOR_CHARS = 2000
MASS_DROP_RATIO = 0.5
MAX_POINTERS = 20
MIN_SUBSTANCE_CHARS = 50
BOND_KEEP_RATIO = 0.3
BOND_MIN_TERMS = 5
BOND_SUPPORTED = 0.7  # with a stated change: the share of the new Bond the evidence supports
LOST_NAMED = 8  # how many lost terms a Bond-drift critique names

_CHANGE = re.compile(
    r"\b(new (?:owner|user|lead|manager|contact|client|boss|maintainer)|now (?:owns|leads|"
    r"prefers?|wants?|uses?|works)|took over|takes over|handed (?:\w+ )?over|hands? (?:\w+ )?"
    r"over|replaces?|replaced|no longer|not anymore|switched|instead|from now on|changed|"
    r"moved to|renamed|is now|are now)\b",
    re.IGNORECASE,
)


_DATE_WORD = re.compile(
    r"\d[\d/.:-]*|\d+(?:st|nd|rd|th|am|pm|h)|q[1-4]|january|february|march|april|may|june|"
    r"july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|"
    r"oct|nov|dec|(?:mon|tues|wednes|thurs|fri|satur|sun)day|mon|tue|wed|thu|fri|"
    r"tomorrow|yesterday|today|tonight|weekend"
)


def _dated(word: str) -> bool:
    """A date, a time, a month or a weekday: what changes as plans move, not who the user is
    (a moved deadline is not Bond drift)."""
    return bool(_DATE_WORD.fullmatch(word))


@dataclass
class Context:
    """What the guards may know beyond the two states: the texts this dream was given."""

    evidence: list[str] = field(default_factory=list)


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


def check(
    candidate: WorkingMemory, old: WorkingMemory | None = None, context: Context | None = None
) -> GuardReport:
    """Run every guard on candidate against the previous state old."""
    old = old or WorkingMemory()
    report = GuardReport()
    _presence(candidate, report)
    _schema(candidate, report)
    _budgets(candidate, report)
    _mass(candidate, old, report)
    _substance(candidate, report)
    _bond(candidate, old, report, context or Context())
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
                f"{s.title} is {n} tokens, {n - s.budget_tokens} over its budget of "
                f"{s.budget_tokens}; shorten it by at least {n - s.budget_tokens} tokens or "
                "move detail to pointers",
            )
    report.measures["tokens"] = used
    total = sum(used.values())
    if total > total_budget():
        report.add(
            "budget",
            f"the state is {total} tokens, {total - total_budget()} over the total budget of "
            f"{total_budget()}; shorten the longest sections",
        )


def _mass(candidate: WorkingMemory, old: WorkingMemory, report: GuardReport) -> None:
    # Against what the budgets allow: lines past a section's budget cannot be written back.
    before, after = state_chars(oversized_sections.trim(old)[0]), state_chars(candidate)
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


@lru_cache(maxsize=4096)
def rarity(word: str) -> float:
    """How much a word says: 1 for a common word, up to 3 for a rare one, +1 for a name.

    The tokenizer's pieces stand in for frequency (a frequent word is one token, "penicillin"
    three); a capitalised word inside a line is most likely a name.
    """
    from dreamer.support import tokens  # the tokenizer loads on first use

    name = word[:1].isupper() and word[1:2].islower()
    pieces = len(tokens.encoding().encode(" " + word.lower(), disallowed_special=()))
    return min(3.0, float(pieces)) + (1.0 if name else 0.0)


def bond_terms(body: str) -> dict[str, tuple[float, str]]:
    """The Bond's content terms: stem -> (weight, a surface form)."""
    out: dict[str, tuple[float, str]] = {}
    for line in body.split("\n"):
        words = NOTE_WORD.findall(line)
        for position, word in enumerate(words):
            lower = word.strip("'’-").lower()
            if len(lower) < 3 or lower in NOTE_STOP_WORDS or lower.isdigit() or _dated(lower):
                continue
            weight = rarity(word if position else word.lower())
            word_stem = stem(lower)
            if weight > out.get(word_stem, (0.0, ""))[0]:
                out[word_stem] = (weight, lower)
    return out


def _bond(candidate: WorkingMemory, old: WorkingMemory, report: GuardReport, ctx: Context) -> None:
    old_terms = bond_terms(old.body("bond"))
    if len(old_terms) < BOND_MIN_TERMS:
        return
    new_terms = bond_terms(candidate.body("bond"))
    total = sum(weight for weight, _ in old_terms.values())
    kept = sum(weight for term, (weight, _) in old_terms.items() if term in new_terms) / total
    report.measures["bond_kept"] = round(kept, 3)
    if kept >= BOND_KEEP_RATIO:
        return
    changes = [text for text in ctx.evidence if _CHANGE.search(text)]
    if changes and new_terms:
        known = set(old_terms) | {s for text in ctx.evidence for s in bond_terms(text)}
        weight = sum(w for w, _ in new_terms.values())
        supported = sum(w for term, (w, _) in new_terms.items() if term in known) / weight
        report.measures["bond_supported"] = round(supported, 3)
        if supported >= BOND_SUPPORTED:
            report.measures["bond_change_stated"] = True
            return
    lost = sorted(
        (
            (w, surface)
            for word_stem, (w, surface) in old_terms.items()
            if word_stem not in new_terms
        ),
        key=lambda pair: (-pair[0], pair[1]),
    )
    names = ", ".join(surface for _, surface in lost[:LOST_NAMED])
    report.add(
        "bond_drift",
        f"Bond drift: The Bond keeps {kept:.0%} of its previous terms, by weight "
        f"(at least {BOND_KEEP_RATIO:.0%}); lost: {names}; keep what is still true about "
        "the user and change only what a newer note contradicts",
    )
