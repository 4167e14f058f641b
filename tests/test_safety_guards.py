"""The guards at their edges: every section is required, and the Bond-drift line sits at 30%.

A candidate that keeps just under 30% of the old Bond's weighted terms is drift; one that keeps
just over is not. The candidates are built from the old Bond's own terms, so the figures come
from the guard's own measure, not from numbers written here.
"""

from __future__ import annotations

import pytest

from dreamer.dream import guards
from dreamer.memory import state as wm

WORDS = (
    "Maya backend engineer Fernhill Labs prefers concise answers code first works late "
    "Thursdays dislikes meetings loves Rust reviews pull requests mornings tea oolong cycles "
    "commute Lisbon speaks Portuguese mentors juniors plays chess weekends"
).split()
CONTEXT = "- Task: ship the Q3 report and review the billing migration plan"


def make(**bodies: str) -> wm.WorkingMemory:
    full = {key: "" for key in wm.section_keys()}
    full.update(bodies)
    return wm.WorkingMemory(bodies=full)


def bond(words) -> str:
    return "- " + " ".join(words)


def kept_share(words) -> float:
    old = guards.bond_terms(bond(WORDS))
    new = guards.bond_terms(bond(words))
    total = sum(weight for weight, _ in old.values())
    return sum(weight for stem, (weight, _) in old.items() if stem in new) / total


def test_the_bond_drift_line_is_at_thirty_percent():
    old = make(bond=bond(WORDS), active_context=CONTEXT)
    shares = [(kept_share(WORDS[:n]), n) for n in range(1, len(WORDS) + 1)]
    below = max((s, n) for s, n in shares if s < guards.BOND_KEEP_RATIO)
    above = min((s, n) for s, n in shares if s >= guards.BOND_KEEP_RATIO)
    # Close to the line on both sides: a threshold moved by a fifth either way is caught.
    assert 0.2 < below[0] < 0.3 <= above[0] < 0.4
    drifted = guards.check(make(bond=bond(WORDS[: below[1]]), active_context=CONTEXT), old)
    assert drifted.failed == ["bond_drift"], drifted.critiques
    assert drifted.measures["bond_kept"] == pytest.approx(below[0], abs=0.001)
    held = guards.check(make(bond=bond(WORDS[: above[1]]), active_context=CONTEXT), old)
    assert held.ok, held.critiques
    assert names_lost_terms(drifted.critiques[0])


def names_lost_terms(critique: str) -> bool:
    """The critique names lost terms, all of them from the old Bond."""
    lost = critique.split("lost: ", 1)[1].split(";", 1)[0].split(", ")
    return bool(lost) and all(word in " ".join(WORDS).lower() for word in lost)


@pytest.mark.parametrize("missing", [s.key for s in wm.sections()])
def test_each_of_the_seven_sections_is_required(missing):
    bodies = {s.key: "" for s in wm.sections() if s.key != missing}
    bodies["active_context" if missing != "active_context" else "bond"] = CONTEXT
    report = guards.check(wm.WorkingMemory(bodies=bodies))
    assert "sections" in report.failed
    title = next(s.title for s in wm.sections() if s.key == missing)
    assert title in report.critiques[report.failed.index("sections")]


def test_a_bond_too_short_to_judge_is_never_drift():
    small = WORDS[: guards.BOND_MIN_TERMS - 1]
    assert len(guards.bond_terms(bond(small))) < guards.BOND_MIN_TERMS
    report = guards.check(
        make(bond="- Enjoys sailing", active_context=CONTEXT), make(bond=bond(small))
    )
    assert "bond_drift" not in report.failed and "bond_kept" not in report.measures
