"""Collapse guards: each one fires on the candidate it exists for, and a sound one passes."""

from __future__ import annotations

from dreamer.dream import guards
from dreamer.memory import state as wm
from dreamer.memory.state import WorkingMemory


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


# --- meaning, not spelling (Bond drift on weighted stems) --------------------------------------

VERBOSE_BOND = (
    "- Dana Okafor is a backend engineer on Ledgerly's billing team, accordingly she works in "
    "the ledgerly-core monorepo.\n"
    "- Dana wants status updates in Slack #billing-dev, never by email.\n"
    "- Dana likes short answers: the command or the diff first, the explanation after.\n"
    "- Priya Raman, Dana's manager, expects a written status every Friday before 16:00.\n"
    "- Dana prefers rebase merges, so the per-commit history survives git bisect."
)
TERSE_BOND = (
    "- Dana Okafor: backend engineer, Ledgerly billing (ledgerly-core).\n"
    "- Status in Slack #billing-dev, not email; Fridays a written one for Priya Raman.\n"
    "- Answer short: command/diff, then why.\n- Rebase merge (bisect)."
)


def _bond_state(body: str) -> WorkingMemory:
    return WorkingMemory({"bond": body})


def test_a_terse_but_correct_bond_is_not_drift():
    report = guards.check(_bond_state(TERSE_BOND), _bond_state(VERBOSE_BOND))
    assert "bond_drift" not in report.failed, report.critiques
    # Stems make "answers" keep "answer"; rarity makes a name outweigh "accordingly".
    assert guards.rarity("Priya") > guards.rarity("accordingly")


def test_a_bond_replaced_by_unrelated_text_is_rejected_and_the_lost_terms_are_named():
    unrelated = "- Enjoys hiking in the Alps.\n- Collects vintage synthesizers."
    report = guards.check(_bond_state(unrelated), _bond_state(VERBOSE_BOND))
    assert "bond_drift" in report.failed
    critique = next(c for c in report.critiques if c.startswith("Bond drift"))
    assert "lost:" in critique and "raman" in critique and "okafor" in critique


def test_a_change_the_notes_state_is_not_drift():
    old = "- Maya Lindqvist, product lead at Acme, owns the quarterly report.\n- Prefers tea."
    new = "- Tom Becker is the new owner; he prefers email over calls."
    notes = ["Maya handed the quarterly report over to Tom Becker; Tom is the new owner."]
    notes.append("Tom prefers email over calls.")
    context = guards.Context(evidence=notes)
    assert "bond_drift" in guards.check(_bond_state(new), _bond_state(old)).failed
    report = guards.check(_bond_state(new), _bond_state(old), context)
    assert "bond_drift" not in report.failed, report.critiques
    assert report.measures["bond_change_stated"] is True


def test_a_budget_critique_says_by_how_much():
    state = WorkingMemory({key: "" for key in wm.section_keys()})
    state.bodies["bond"] = "- " + "word " * 700
    critique = next(c for c in guards.check(state).critiques if "The Bond" in c)
    assert "over its budget of 500" in critique and "shorten it by at least" in critique


def test_mass_drop_is_measured_against_what_the_budgets_allow():
    huge = WorkingMemory(
        {
            "active_context": "\n".join(
                f"- hand-written line {i} about topic {i}" for i in range(900)
            )
        }
    )
    within = WorkingMemory(
        {"active_context": "\n".join(huge.body("active_context").split("\n")[:120])}
    )
    report = guards.check(within, huge)
    assert "mass_drop" not in report.failed
    assert report.measures["chars"]["old"] < guards.state_chars(huge)
