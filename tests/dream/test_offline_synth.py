"""The offline synthesizer: deterministic, useful, within budgets, and it revises on critique."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer.dream import guards, insights
from dreamer.dream.synth import DreamInputs
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.memory import state as wm
from dreamer.support import tokens


def inputs_for(ws, now, texts, old_text="", niche=None, hours=48):
    for i, text in enumerate(texts):
        ws.note(text, at=now - timedelta(hours=hours - i * 2))
    old = wm.parse(old_text)
    crystals = ws.store.crystals.select(lifecycles=["generated"])
    return DreamInputs(
        now=now,
        old=old,
        notes=[],
        crystals=crystals,
        insights=insights.compute(ws.store, [], crystals, now, old),
        hormones={"dopamine": 0.2, "cortisol": 0.1, "oxytocin": 0.3},
        mood="steady, calm",
        niche=niche,
    )


NOTES = [
    "User prefers dark mode in the editor",
    "Deployed the staging server after the nginx change",
    "Acme report deadline is Friday",
    "CI keeps failing on the flaky payment test",
    "Deployed staging again with the new flags",
    "User now prefers light mode in the editor",
    "Acme report deadline moved to next Wednesday",
    "What timezone is the Acme client in?",
    "Deployed staging for the demo",
]


def test_protocol_attributes():
    synth = OfflineSynthesizer()
    assert synth.name == "offline" and synth.model is None


def test_sections_are_filled_from_the_evidence(ws, now):
    draft = OfflineSynthesizer().synthesize(
        inputs_for(ws, now, NOTES, niche={"role": "billing assistant", "peers": ["ci-bot"]})
    )
    state = draft.state
    assert "light mode" in state.body("bond") and "dark mode" not in state.body("bond")
    active = state.body("active_context")
    assert "moved to next Wednesday" in active and "deadline is Friday" not in active
    assert "Friction: CI keeps failing" in active
    assert "What timezone is the Acme client in?" in state.body("curiosity_gaps")
    assert state.skills()[0].skill == "Deploying staging"
    assert state.skills()[0].occurrences == 3
    assert "- Role: billing assistant" in state.body("niche")
    assert "ci-bot" in state.body("niche")
    assert guards.check(state).ok


def test_deterministic(ws, now):
    inputs = inputs_for(ws, now, NOTES)
    first = OfflineSynthesizer().synthesize(inputs)
    second = OfflineSynthesizer().synthesize(inputs)
    assert wm.render(first.state) == wm.render(second.state)
    assert first.raw == second.raw


def test_old_state_carries_over_and_newest_wins_over_the_old_bond(ws, now):
    old = (
        "# Working Memory State\n\n## The Phenotype\n- Terse and careful\n\n"
        "## The Bond\n- User prefers dark mode in the editor\n- User is Maya, a backend dev\n\n"
        "## The Niche\n- Role: billing assistant\n\n"
        "## Active Context\n- Task: review the Acme report draft\n\n"
        "## Crystal Pointers\n- Past: Garden → search: `garden shed`\n\n"
        "## Curiosity Gaps\n- Which CI runner is fastest?\n\n"
        "## Emerging Skills\n- Writing reports → Confidence: 50% | Occurrences: 2\n"
    )
    state = (
        OfflineSynthesizer()
        .synthesize(
            inputs_for(
                ws,
                now,
                ["User switched to light mode in the editor", "Acme report sent to Sam"],
                old_text=old,
            )
        )
        .state
    )
    assert "Terse and careful" in state.body("phenotype")
    assert "Maya" in state.body("bond")
    assert "light mode" in state.body("bond") and "dark mode" not in state.body("bond")
    assert "billing assistant" in state.body("niche")
    assert "review the Acme report draft" in state.body("active_context")
    assert wm.Pointer("Garden", "garden shed") in state.pointers()
    assert "Which CI runner is fastest?" in state.body("curiosity_gaps")
    assert wm.Skill("Writing reports", 50, 2) in state.skills()


def test_fading_topics_become_pointers(ws, now):
    ws.note("Kitchen renovation quotes from three contractors", at=now - timedelta(days=9))
    ws.store.db.execute("UPDATE crystals SET lifecycle = 'consolidated'")
    old = "# Working Memory State\n\n## Active Context\n- Kitchen renovation quotes pending\n"
    state = OfflineSynthesizer().synthesize(inputs_for(ws, now, NOTES, old_text=old)).state
    assert "Kitchen" not in state.body("active_context")
    assert [p.topic for p in state.pointers()] == ["Kitchen renovation quotes pending"]


@pytest.mark.slow
def test_every_section_stays_within_budget_with_many_notes(ws, now):
    texts = [
        f"Task {i}: migrate ledger shard {i} of the billing database to the new cluster "
        f"and verify the row counts and checksums against the old one"
        for i in range(120)
    ]
    texts += [
        f"User prefers option {i} for report layout variant {i} in the monthly reviews"
        for i in range(60)
    ]
    state = OfflineSynthesizer().synthesize(inputs_for(ws, now, texts, hours=400)).state
    for section in wm.sections():
        assert tokens.count(state.body(section.key)) <= section.budget_tokens
    assert guards.check(state).ok
    assert len(state.pointers()) <= 20


def test_one_note_is_enough_substance(ws, now):
    state = (
        OfflineSynthesizer()
        .synthesize(inputs_for(ws, now, ["CI checks the wheel install works"]))
        .state
    )
    assert "CI checks the wheel install works" in state.body("active_context")
    assert guards.check(state).ok


def test_a_critique_makes_it_carry_over_more(ws, now):
    old = (
        "# Working Memory State\n\n## Active Context\n"
        "- Kitchen renovation quotes pending\n- Task: ship the Acme report\n"
    )
    ws.note("Kitchen renovation quotes from three contractors", at=now - timedelta(days=9))
    ws.store.db.execute("UPDATE crystals SET lifecycle = 'consolidated'")
    inputs = inputs_for(ws, now, ["User likes green tea"], old_text=old)
    synth = OfflineSynthesizer()
    first = synth.synthesize(inputs)
    assert "Kitchen" not in first.state.body("active_context")
    revised = synth.synthesize(
        inputs, critique=["mass drop: carry over what still holds"], previous=first
    )
    assert "Kitchen renovation quotes pending" in revised.state.body("active_context")


HAND_WRITTEN = """# Ada's memory

## Who I am
- Ada, backend engineer at Nordlys Energy.
- Allergic to hazelnuts (matters for office orders).

## Projects
- Milestone M3 (snapshot streaming) due 2026-03-20. Blocking issue: snapshot
  transfer times out on CI.

## Journal
- Week 1: paired with Tomasz on the Nomad job spec.
- Week 2: paired with Tomasz on the Ferrous nightly run.
"""


def test_a_hand_written_file_is_integrated_by_its_headings(ws, now):
    inputs = inputs_for(ws, now, ["Deployed the Ferrous build to staging"], old_text=HAND_WRITTEN)
    state = OfflineSynthesizer().synthesize(inputs).state
    assert "Allergic to hazelnuts" in state.body("bond")
    assert "snapshot transfer times out on CI" in state.body("active_context")  # joined lines
    assert "Week 1" not in state.body("active_context")
    # One pointer for the journal, named by its heading and made specific by its first entry.
    assert [p.topic.split(":")[0] for p in state.pointers()] == ["Journal"]
    assert "paired" in state.pointers()[0].keywords and "tomasz" in state.pointers()[0].keywords
    assert state.body("active_context").startswith("- Breakthrough: Deployed the Ferrous build")


def test_a_friction_fixed_later_leaves_active_context_for_a_pointer(ws, now):
    draft = OfflineSynthesizer().synthesize(
        inputs_for(
            ws,
            now,
            [
                "CI keeps failing on the flaky payment webhook test",
                "Deployed the billing service to staging",
                "Fixed the flaky payment webhook test: it depended on the wall clock",
                "The export job is broken on large accounts",
            ],
        )
    )
    active = draft.state.body("active_context")
    assert "Friction: CI keeps failing" not in active
    assert "Breakthrough: Fixed the flaky payment webhook test" in active
    # An unrelated friction stays open: a fix only closes what it is about.
    assert "Friction: The export job is broken" in active
    assert any(
        "flaky payment" in p.keywords or "CI keeps failing" in p.topic
        for p in draft.state.pointers()
    )


def test_a_fix_older_than_the_friction_does_not_close_it(ws, now):
    draft = OfflineSynthesizer().synthesize(
        inputs_for(
            ws,
            now,
            [
                "Fixed the flaky payment webhook test: it depended on the wall clock",
                "CI keeps failing on the flaky payment webhook test again",
            ],
        )
    )
    assert "Friction: CI keeps failing" in draft.state.body("active_context")


def test_an_old_friction_line_is_closed_by_a_new_fix(ws, now):
    old = wm.render(
        wm.from_fields(
            {
                "phenotype": "Careful.",
                "bond": "- User: Maya",
                "active_context": "- Friction: The nightly export job is broken on large accounts",
            }
        )
    )
    draft = OfflineSynthesizer().synthesize(
        inputs_for(
            ws,
            now,
            [
                "Fixed the nightly export job for large accounts with streaming writes",
            ],
            old_text=old,
        )
    )
    active = draft.state.body("active_context")
    assert "Friction: The nightly export job is broken" not in active
    assert "Breakthrough: Fixed the nightly export job" in active
