"""A rule the assistant offered and the user confirmed is the user's: in words, and captured."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_capture_provenance import CWD, SESSION, _assistant, _line

from dreamer.agents.confirmations import confirmed_rule
from dreamer.agents.ingest import ingest
from dreamer.dream.cycle import run
from dreamer.dream.synth.offline import OfflineSynthesizer


@pytest.mark.parametrize(
    "reply, answer, rule",
    [
        ("yes, always", "Done. Want me to always run ruff before committing?",
         "Always run ruff before committing."),
        ("Yes please.", "Merged. From now on I'll squash the merges on this repo.",
         "Squash the merges on this repo."),
        ("yes, from now on", "Fixed. Should I pin exact versions in requirements?",
         "Pin exact versions in requirements."),
        ("sounds good", "I suggest we always tag releases with a v prefix.",
         "Always tag releases with a v prefix."),
        ("Ja, genau.", "Soll ich? Would you like me to never deploy on Fridays?",
         "Never deploy on Fridays."),
    ],
    ids=["want-me-to", "promise", "should-i", "suggest", "german-yes"],
)  # fmt: skip
def test_a_short_yes_to_an_offered_habit_is_the_users_rule(reply, answer, rule):
    assert confirmed_rule(reply, answer) == rule


@pytest.mark.parametrize(
    "reply, answer",
    [
        ("yes", "Want me to run the tests now?"),  # a one-off, not a habit
        ("no, never", "Want me to always run ruff before committing?"),
        ("yes, but only on main and only when the CI is green, ask me first",
         "Want me to always rebase?"),
        ("yes, always", "The tests pass."),  # nothing was offered
        ("yes, always", ""),
    ],
    ids=["one-off", "no", "long-reply", "no-offer", "no-answer"],
)  # fmt: skip
def test_no_rule_without_a_short_yes_to_an_offered_habit(reply, answer):
    assert confirmed_rule(reply, answer) is None


def test_a_captured_confirmation_sets_a_rule_of_the_users_in_the_bond(ws, tmp_path):
    lines = [
        _line("user", "u1", "2026-03-02T09:00:00.000Z",
              {"role": "user", "content": "Tidy the imports in the billing module."}),
        _assistant("a1", "2026-03-02T09:00:05.000Z", [
            {"type": "text", "text": "Tidied them. Want me to always sort imports with isort "
                                     "before each commit?"},
        ], stop="end_turn"),
        _line("user", "u2", "2026-03-02T09:01:00.000Z",
              {"role": "user", "content": "yes, always"}),
        _assistant("a2", "2026-03-02T09:01:03.000Z",
                   [{"type": "text", "text": "Will do."}], stop="end_turn"),
    ]  # fmt: skip
    path = Path(tmp_path) / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert ingest(ws, [path], datetime(2026, 3, 2, 12, 0, tzinfo=UTC)).failed == []
    rules = [
        c
        for c in ws.store.crystals.select(sources=["sessions"])
        if c.semantic_type == "directive" and c.speaker == "user"
    ]
    assert [c.text for c in rules] == ["Always sort imports with isort before each commit."]
    state = run(
        ws, now=datetime(2026, 3, 2, 23, 0, tzinfo=UTC), force=True,
        synthesizer=OfflineSynthesizer(),
    )  # fmt: skip
    assert state.outcome == "committed"
    assert (
        "isort before each commit"
        in ws.memory_md.read_text().split("## The Bond", 1)[1].split("##", 1)[0]
    )
    assert CWD not in ws.memory_md.read_text()


def test_a_bare_yes_with_nothing_offered_sets_no_rule(ws, tmp_path):
    lines = [
        _line("user", "u1", "2026-03-02T09:00:00.000Z",
              {"role": "user", "content": "Run the billing tests."}),
        _assistant("a1", "2026-03-02T09:00:05.000Z",
                   [{"type": "text", "text": "All 40 billing tests pass."}], stop="end_turn"),
        _line("user", "u2", "2026-03-02T09:01:00.000Z",
              {"role": "user", "content": "yes, always"}),
    ]  # fmt: skip
    path = Path(tmp_path) / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert ingest(ws, [path], datetime(2026, 3, 2, 12, 0, tzinfo=UTC)).failed == []
    kinds = {c.text: c.semantic_type for c in ws.store.crystals.select(sources=["sessions"])}
    assert "directive" not in kinds.values(), kinds
