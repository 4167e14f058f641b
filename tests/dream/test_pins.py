"""Pinned facts: a dream that drops or contradicts a pin is critiqued, then rejected."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from fake_anthropic import FakeAnthropic
from test_dream_claude import FIRST_NOTES, GOOD, LATER_NOTES, claude, write_notes

from dreamer import Workspace
from dreamer.cli import main
from dreamer.dream import pins
from dreamer.dream.cycle import run
from dreamer.dream.synth.claude import TOOL_NAME
from dreamer.errors import DreamRejected, PinNotFound

PIN = "Maya's deadline for the Acme quarterly report is 2026-03-24"
KEPT = GOOD | {
    "active_context": "- Acme quarterly report: Maya's deadline is 2026-03-24.\n"
    "- Section 2 needs charts.\n- Staging build of the report generator works."
}


@pytest.fixture
def fake() -> FakeAnthropic:
    return FakeAnthropic()


@pytest.fixture
def pinned(ws, now, fake):
    """A workspace Claude dreamt once, a pinned fact, and six new notes."""
    write_notes(ws, FIRST_NOTES, now - timedelta(days=1))
    fake.tool_use(TOOL_NAME, GOOD)
    assert run(ws, now=now, synthesizer=claude(ws, fake)).committed
    ws.pin_id = pins.pin(ws, PIN, now)
    write_notes(ws, LATER_NOTES, now + timedelta(minutes=10))
    return ws


@pytest.mark.slow
def test_a_draft_that_keeps_dropping_a_pin_is_rejected_and_memory_md_stays(pinned, now, fake):
    before = pinned.memory_md.read_bytes()
    for _ in range(3):  # the draft and both revisions leave the pin out
        fake.tool_use(TOOL_NAME, GOOD)
    with pytest.raises(DreamRejected) as caught:
        run(pinned, now=now + timedelta(hours=8), synthesizer=claude(pinned, fake))
    assert pinned.memory_md.read_bytes() == before
    named = f"pinned fact #{pinned.pin_id} dropped"
    assert any(named in reason for reason in caught.value.reasons)
    # The pin went to the model with the data, and the critique named it in the revision.
    first = fake.requests[1].json["messages"][0]["content"][0]["text"]
    assert PIN in first
    revision = json.dumps(fake.requests[2].json)
    assert named in revision
    assert pins.ids(pinned) == {pinned.pin_id}  # a pin is never consumed


@pytest.mark.slow
def test_a_contradicted_pin_is_named_and_a_revision_that_keeps_it_commits(pinned, now, fake):
    contradicting = GOOD | {
        "active_context": "- Acme quarterly report: Maya's deadline is 2026-03-20.\n"
        "- Section 2 needs charts."
    }
    fake.tool_use(TOOL_NAME, contradicting)
    fake.tool_use(TOOL_NAME, KEPT)
    result = run(pinned, now=now + timedelta(hours=8), synthesizer=claude(pinned, fake))
    assert result.committed and result.revisions == 1
    [critique] = [c for c in result.critiques[0] if "pinned fact" in c]
    assert f"pinned fact #{pinned.pin_id} contradicted" in critique and "2026-03-20" in critique
    assert "2026-03-24" in pinned.memory_md.read_text(encoding="utf-8")


def test_verdicts_judge_words_and_values():
    state = "## Active Context\n- Acme quarterly report: Maya's deadline is 2026-03-24.\n"
    assert pins.verdict(PIN, state)[0] == "kept"
    assert pins.verdict(PIN, state.replace("24", "27"))[0] == "contradicted"
    assert pins.verdict(PIN, "## Active Context\n- Lunch with Tom on Friday\n")[0] == "dropped"
    assert pins.verdict("Maya prefers tea", "- Maya prefers tea over coffee")[0] == "kept"


@pytest.mark.slow
def test_a_line_marked_pinned_by_hand_becomes_a_pin(ws, now):
    write_notes(ws, FIRST_NOTES, now - timedelta(days=1))
    assert run(ws, now=now).committed
    text = ws.memory_md.read_text(encoding="utf-8")
    ws.memory_md.write_text(
        text.replace("## Active Context\n", "## Active Context\n- Maya's badge is 4471 (pinned)\n"),
        encoding="utf-8",
    )
    write_notes(ws, LATER_NOTES, now + timedelta(hours=1))
    assert run(ws, now=now + timedelta(hours=8)).committed
    assert [crystal.text for crystal in pins.listed(ws)] == ["- Maya's badge is 4471"[2:]]
    assert "4471" in ws.memory_md.read_text(encoding="utf-8")


def test_pin_pins_unpin_and_forget_through_the_cli(ws, now, runner):
    ws.init()
    root = str(ws.root)
    out = runner.invoke(main, ["pin", PIN, "-w", root], catch_exceptions=False).output
    pin_id = int(out.split("#", 1)[1].split(";", 1)[0])
    listed = runner.invoke(main, ["pins", "-w", root], catch_exceptions=False).output
    assert f"#{pin_id}" in listed and PIN in listed
    assert runner.invoke(main, ["unpin", str(pin_id), "-w", root]).exit_code == 0
    assert pins.listed(ws) == []
    again = runner.invoke(main, ["unpin", str(pin_id), "-w", root])
    assert again.exit_code == 2 and again.output.startswith("Error: no pinned fact has id")
    # Forgetting a pinned crystal unpins it: the pin goes with it.
    second = pins.pin(ws, "Maya's badge is 4471", now)
    assert pins.ids(ws) == {second}
    forgot = runner.invoke(main, ["forget", str(second), "-w", root], catch_exceptions=False)
    assert forgot.exit_code == 0, forgot.output
    assert pins.listed(ws) == []
    with pytest.raises(PinNotFound):
        pins.unpin(ws, second, now)


def test_an_offline_workspace_with_a_pin_keeps_dreaming(ws, now):
    for i in range(6):
        ws.note(f"Project Falcon step {i}: wired module {i} into the build", at=now)
    assert run(ws, now=now).committed
    pins.pin(ws, PIN, now)
    for day in range(1, 4):
        for i in range(6):
            ws.note(f"Day {day} task {i}: reviewed chapter {i} of the handbook", at=now)
        assert run(ws, now=now + timedelta(days=day)).committed
    assert "2026-03-24" in ws.memory_md.read_text(encoding="utf-8")


def test_a_pin_is_bounded_like_a_note(tmp_path, runner):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "dreamer.toml").write_text("[memory.note]\nmaxChars = 1000\n", encoding="utf-8")
    for size in (120_000, 1_001):
        done = runner.invoke(main, ["pin", "x" * size, "-w", str(root)])
        assert done.exit_code == 2, done.output
        errors = [line for line in done.output.splitlines() if line.startswith("Error:")]
        assert errors == [
            f"Error: the pin is {size:,} characters, over the limit of 1,000 "
            "(memory.note.maxChars); nothing was pinned: pin one short fact"
        ]
    fits = runner.invoke(main, ["pin", "y" * 1_000, "-w", str(root)])
    assert fits.exit_code == 0, fits.output
    with Workspace.open(root, create=False) as ws:
        assert [len(c.text) for c in pins.listed(ws)] == [1_000]
