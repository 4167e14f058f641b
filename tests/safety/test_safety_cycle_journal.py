"""What a dream that fails tells the journal: what it cost, and which row is its own.

A paid answer that could not be used still counts against the spending cap (which reads the
journal), so its cost must land in the failed dream's row; and the error the caller sees names
that row, so ``dream show`` can find the raw answer.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.dream import cycle as dream
from dreamer.dream.synth import Draft, Usage
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import DreamRejected, SynthesisError
from dreamer.memory import scratch
from dreamer.memory import state as wm

NOTES = [
    "User prefers concise answers with code first",
    "Acme report deadline is Friday",
    "Deployed the staging server after the nginx change",
]


class PaidButUnusable:
    """A synthesizer whose answer was paid for and could not be parsed."""

    name, model = "paid", "fake-1"

    def synthesize(self, inputs, *, critique=None, previous=None):
        raise SynthesisError(
            "the answer was not a state; try again",
            raw="<not a state>",
            usage=Usage(input_tokens=1200, output_tokens=300, cost_usd=0.25, tries=1),
        )


def test_a_paid_but_unusable_answer_is_journaled_with_its_cost(ws, now):
    for n, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=3 - n))
    with pytest.raises(SynthesisError) as raised:
        dream.run(ws, now=now, force=True, synthesizer=PaidButUnusable())
    row = ws.store.journal.get_dream(raised.value.dream_id)
    assert row["outcome"] == "failed"
    assert (row["input_tokens"], row["output_tokens"], row["cost_usd"]) == (1200, 300, 0.25)
    assert row["raw"] == "<not a state>"
    assert row["error"] == "SynthesisError: the answer was not a state; try again"
    assert ws.store.journal.dream_totals()["cost_usd"] == 0.25
    assert [n.text for n in scratch.parse(ws.scratch_path).notes] == NOTES


class EditsOnce:
    """The offline synthesizer, with a person saving MEMORY.md during its first call."""

    name, model = "edits-once", None

    def __init__(self, ws):
        self.ws, self.inner, self.calls = ws, OfflineSynthesizer(), 0

    def synthesize(self, inputs, *, critique=None, previous=None):
        self.calls += 1
        if self.calls == 1:
            with self.ws.memory_md.open("a", encoding="utf-8") as handle:
                handle.write("- written by hand during the dream\n")
        return self.inner.synthesize(inputs, critique=critique, previous=previous)


def test_a_dream_over_a_hand_edit_keeps_why_it_ran_in_its_reason(ws, now):
    for n, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=30 - n))
    assert dream.run(ws, now=now, force=True).committed
    ws.note("Acme moved the report deadline to Monday", at=now + timedelta(minutes=5))
    later = now + timedelta(hours=1)
    result = dream.run(ws, now=later, force=True, synthesizer=EditsOnce(ws))
    assert result.committed and "- written by hand during the dream" in ws.read_memory()
    why = "; MEMORY.md was edited during the dream (1 time(s)), so it dreamt again over the "
    assert result.reason.startswith("forced (") and result.reason.endswith(why + "edited state")
    assert ws.store.journal.get_dream(result.dream_id)["reason"] == result.reason


@pytest.mark.parametrize("step", ["consolidate", "settle"])
def test_a_failure_after_the_commit_is_added_to_the_reason_not_put_in_its_place(ws, now, step):
    for n, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=3 - n))

    def hook(name):
        if name == step:
            raise OSError(28, "No space left on device")

    result = dream.run(ws, now=now, force=True, step=hook)
    assert result.committed and ws.read_memory() == result.state_text
    assert result.reason.startswith("forced (")
    assert result.reason.endswith(
        f"; MEMORY.md was written, but the {step} step after it failed (OSError: [Errno 28] "
        "No space left on device); the dream's notes stay pending and the next dream settles "
        "them"
    )


class Emptying:
    """A synthesizer that answers every call with empty sections: the guards reject it."""

    name, model = "emptying", None

    def synthesize(self, inputs, *, critique=None, previous=None):
        keys = ("phenotype", "bond", "niche", "active_context", "curiosity_gaps")
        empty = wm.WorkingMemory(bodies={key: "" for key in wm.section_keys()})
        return Draft(wm.from_fields({key: "" for key in keys}, empty), raw="{}", usage=Usage())


def test_a_rejected_dream_says_why_and_that_nothing_was_lost(ws, now):
    for n, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=30 - n))
    assert dream.run(ws, now=now, force=True).committed
    before = ws.memory_md.read_bytes()
    ws.note("Acme moved the report deadline to Monday", at=now + timedelta(minutes=5))
    with pytest.raises(DreamRejected) as caught:
        dream.run(ws, now=now + timedelta(hours=1), force=True, synthesizer=Emptying())
    message = str(caught.value)
    assert message.startswith("the guards rejected the dream after 2 revision(s): ")
    assert caught.value.reasons[0] in message
    assert message.endswith("; MEMORY.md is unchanged and the notes are back in the scratch")
    assert ws.memory_md.read_bytes() == before
    assert ws.store.journal.get_dream(caught.value.dream_id)["reason"] == message


def test_the_reason_says_whether_the_dream_was_due_or_forced_and_a_skip_says_why(ws, now):
    for n, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=30 - n))
    ready, why = dream.readiness(ws)
    assert not ready
    assert dream.run(ws, now=now, dry_run=True).reason == "would skip: " + why
    skipped = dream.run(ws, now=now)
    assert skipped.outcome == "skipped" and skipped.reason == why
    row = ws.store.journal.get_dream(skipped.dream_id)
    assert (row["outcome"], row["reason"], row["old_state"]) == ("skipped", why, None)
    for n in range(3):
        ws.note(f"Fresh note number {n} about the Acme launch", at=now - timedelta(hours=2 - n))
    ready, why = dream.readiness(ws)
    assert ready
    assert dream.run(ws, now=now, dry_run=True).reason == why
    result = dream.run(ws, now=now)
    assert result.committed and result.reason == why


def test_a_spending_cap_never_holds_back_the_free_offline_synthesizer(tmp_path, now):
    root = tmp_path / "capped"
    root.mkdir()
    (root / "dreamer.toml").write_text("[memory.dream]\nmaxUsdPerDay = 0.01\n", encoding="utf-8")
    with Workspace.open(root) as ws:
        for n, text in enumerate(NOTES):
            ws.note(text, at=now - timedelta(hours=3 - n))
        # A paid dream earlier today already spent more than the cap
        with pytest.raises(SynthesisError):
            dream.run(ws, now=now - timedelta(hours=1), force=True, synthesizer=PaidButUnusable())
        result = dream.run(ws, now=now, force=True, synthesizer=OfflineSynthesizer())
        assert result.committed, result.reason


def test_a_note_written_into_the_scratch_by_hand_is_indexed_as_a_scratch_note(ws, now):
    from dreamer.store import content_hash

    ws.note(NOTES[0], at=now - timedelta(hours=2))
    by_hand = "Maya's flight lands at 18:40 on Sunday"
    with ws.scratch_path.open("a", encoding="utf-8") as handle:
        handle.write(
            f"- [{(now - timedelta(hours=1)).strftime('%Y-%m-%dT%H:%M:%SZ')}] "
            f"(importance: 0.7) {by_hand}\n"
        )
    assert (
        ws.store.crystals.find_by_hash(content_hash(by_hand)) is None
    )  # the store does not hold it yet
    dream.run(ws, now=now, force=True, synthesizer=OfflineSynthesizer())
    stored = ws.store.crystals.get(ws.store.crystals.find_by_hash(content_hash(by_hand)))
    typed = ws.store.crystals.get(ws.store.crystals.find_by_hash(content_hash(NOTES[0])))
    # Sent and kept as what it is: a note of the scratch, as one the agent wrote
    assert (stored.source, typed.source) == ("scratch", "scratch")


def test_a_forced_dream_does_not_tell_the_user_to_use_force(ws, now):
    ws.note("One fresh note about the Acme launch", at=now - timedelta(hours=1))
    ready, why = dream.readiness(ws)
    assert not ready and why.endswith("; use --force to dream anyway")
    result = dream.run(ws, now=now, force=True)
    assert result.reason == "forced (only 1 new note since the last dream (needs 5))"
    assert ws.store.journal.get_dream(result.dream_id)["reason"] == result.reason
