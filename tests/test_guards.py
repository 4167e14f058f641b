"""Collapse guards: each one fires on the candidate it exists for, and a sound one passes."""

from __future__ import annotations

from dreamer.dream import guards
from dreamer.memory import state as wm


def make(**bodies: str) -> wm.WorkingMemory:
    full = {key: "" for key in wm.section_keys()}
    full.update(bodies)
    return wm.WorkingMemory(bodies=full)


BOND = (
    "- User is Maya, a backend engineer at Fernhill Labs\n"
    "- Prefers concise answers with code first\n- Works late on Thursdays, dislikes meetings"
)


def big_state() -> wm.WorkingMemory:
    lines = "\n".join(
        f"- Task {i}: migrate the billing ledger shard {i} to Postgres 16" for i in range(40)
    )
    return make(bond=BOND, active_context=lines)


def test_a_sound_candidate_passes():
    old = make(bond=BOND, active_context="- Task: draft the Q3 report")
    report = guards.check(make(bond=BOND, active_context="- Task: ship the Q3 report"), old)
    assert report.ok, report.critiques


def test_a_small_first_dream_with_substance_passes():
    line = "- Note: CI checks that the wheel install works end to end"
    report = guards.check(make(active_context=line))
    assert report.ok, report.critiques


def test_missing_section_is_rejected():
    state = make(bond=BOND)
    del state.bodies["niche"]
    report = guards.check(state)
    assert report.failed == ["sections"]
    assert "The Niche" in report.critiques[0]


def test_budget_is_enforced_per_section():
    report = guards.check(make(niche="- word " * 400, bond=BOND))
    assert "budget" in report.failed
    assert "The Niche" in report.critiques[0]


def test_mass_drop_against_a_mature_state():
    old = big_state()
    assert guards.state_chars(old) >= 2000
    report = guards.check(make(bond=BOND, active_context="- Task: one thing left"), old)
    assert "mass_drop" in report.failed


def test_mass_drop_ignores_the_hand_written_preamble():
    old = make(bond=BOND)
    old.preamble = "x" * 5000  # a seed's original text above the state is not state mass
    report = guards.check(make(bond=BOND, active_context="- Task: ship the Q3 report"), old)
    assert "mass_drop" not in report.failed


def test_too_many_pointers():
    pointers = "\n".join(f"- Past: topic {i} → search: `topic{i}`" for i in range(21))
    report = guards.check(make(bond=BOND, crystal_pointers=pointers))
    assert "pointers" in report.failed


def test_lines_that_do_not_parse_as_pointers_are_a_schema_critique():
    report = guards.check(make(bond=BOND, crystal_pointers="- kitchen stuff, look it up"))
    assert report.failed == ["schema"]


def test_empty_synthesis():
    report = guards.check(make(bond="- ok"))
    assert report.failed == ["empty"]


def test_bond_drift():
    report = guards.check(
        make(
            bond="- Enjoys sailing and astronomy on weekends",
            active_context="- Task: ship the Q3 report",
        ),
        make(bond=BOND),
    )
    assert "bond_drift" in report.failed
    kept = guards.check(
        make(bond=BOND.replace("concise", "detailed"), active_context="- Task: ship the Q3 report"),
        make(bond=BOND),
    )
    assert "bond_drift" not in kept.failed


def test_report_is_json_ready():
    report = guards.check(make(bond="- ok"))
    data = report.to_dict()
    assert data["ok"] is False and data["failed"] == ["empty"]
    assert set(data["measures"]) >= {"tokens", "chars", "substance_chars", "pointers"}
