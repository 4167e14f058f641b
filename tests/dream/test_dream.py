"""The dream cycle's commit protocol (DESIGN.md steps 1-8), offline and with fake synthesizers."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from dreamer.dream import cycle as dream
from dreamer.dream.synth import Draft, Usage
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import DreamRejected, LockHeld, SynthesisError
from dreamer.memory import scratch
from dreamer.memory import state as wm
from dreamer.store import NewCrystal, content_hash

NOTES = [
    "User prefers concise answers with code first",
    "Acme report deadline is Friday",
    "Deployed the staging server after the nginx change",
    "CI keeps failing on the flaky payment test",
    "Deployed staging again with the new flags",
    "What timezone is the Acme client in?",
]


def write(ws, now, texts=NOTES, hours=30):
    return [ws.note(t, at=now - timedelta(hours=hours - i)) for i, t in enumerate(texts)]


def scratch_texts(ws):
    return [n.text for n in scratch.parse(ws.scratch_path).notes]


class Fixed:
    """A synthesizer that returns the same state every time (and counts its calls)."""

    name, model = "fixed", "fake-1"

    def __init__(self, fields, on_call=None):
        self.fields, self.on_call, self.calls = fields, on_call, []

    def synthesize(self, inputs, *, critique=None, previous=None):
        self.calls.append(critique)
        if self.on_call:
            self.on_call(inputs)
        state = wm.from_fields(
            self.fields, wm.WorkingMemory(bodies={key: "" for key in wm.section_keys()})
        )
        return Draft(
            state,
            raw=str(self.fields),
            usage=Usage(input_tokens=100, output_tokens=20, cost_usd=0.001),
        )


class Failing:
    name, model = "failing", None

    def synthesize(self, inputs, *, critique=None, previous=None):
        raise SynthesisError("the fake model fell over; try again later", raw="<garbage>")


def test_six_notes_commit_a_seven_section_state(ws, now):
    ids = write(ws, now)
    result = dream.run(ws, now=now)
    assert result.outcome == "committed" and result.committed
    text = ws.memory_md.read_text()
    assert text == result.state_text
    parsed = wm.parse(text)
    for section in wm.sections():
        assert f"## {section.title}\n" in text or text.endswith(f"## {section.title}\n")
    assert parsed.last_dream == "2026-03-12T14:30:00Z" and parsed.mood
    assert scratch_texts(ws) == []
    assert not scratch.rotated_path(ws.scratch_path).exists()
    assert sorted(result.consumed) == sorted(ids)
    assert all(ws.get(i).lifecycle == "consolidated" for i in ids)
    audit = ws.store.db.execute("SELECT count(*) FROM audit WHERE action = 'consolidated'")
    assert audit.fetchone()[0] == len(ids)
    row = ws.store.journal.get_dream(result.dream_id)
    assert row["outcome"] == "committed" and row["new_state"] == text
    assert row["inputs"]["notes"] == 6 and row["consumed"] == sorted(ids)
    assert row["inputs"]["pointer_fixes"] == [] and row["inputs"]["insights"]["topics"]


def test_second_dream_with_nothing_new_skips_and_says_so(ws, now):
    write(ws, now)
    dream.run(ws, now=now)
    before = ws.memory_md.read_bytes()
    result = dream.run(ws, now=now + timedelta(hours=2))
    assert result.outcome == "skipped" and not result.committed
    assert "only 0 new notes" in result.reason and "--force" in result.reason
    assert ws.memory_md.read_bytes() == before
    assert ws.store.journal.get_dream(result.dream_id)["outcome"] == "skipped"


def test_force_dreams_over_a_single_note(ws, now):
    ws.note("CI checks the wheel install works", at=now)
    assert dream.run(ws, now=now).outcome == "skipped"
    result = dream.run(ws, now=now, force=True)
    assert result.outcome == "committed"
    assert "CI checks the wheel install works" in ws.memory_md.read_text()


def test_notes_appended_during_a_slow_synthesis_stay_in_the_scratch(ws, now):
    write(ws, now)
    late = ["Late note written while the dream ran", "Another late note, mid-dream"]

    def append_mid_dream(inputs):
        # A second thread, as an agent would: it must not block on the dream's locks.
        thread = threading.Thread(target=lambda: [ws_other.note(t, at=now) for t in late])
        thread.start()
        thread.join(timeout=10)
        assert not thread.is_alive()

    ws_other = type(ws).open(ws.root)
    body = "- Task: consolidate the six notes into one working-memory state"
    synth = Fixed({"active_context": body}, on_call=append_mid_dream)
    result = dream.run(ws, now=now, synthesizer=synth)
    ws_other.close()
    assert result.committed
    assert scratch_texts(ws) == late
    late_ids = [ws.store.crystals.find_by_hash(content_hash(t)) for t in late]
    assert all(ws.get(i).lifecycle == "generated" for i in late_ids)
    assert not set(late_ids) & set(result.consumed)


def test_rejection_keeps_memory_byte_for_byte_and_puts_notes_back(ws, now):
    write(ws, now)
    dream.run(ws, now=now)
    before = ws.memory_md.read_bytes()
    more = [f"Fresh note number {i} about the Acme launch" for i in range(6)]
    write(ws, now, more, hours=3)
    synth = Fixed(
        {key: "" for key in ("phenotype", "bond", "niche", "active_context", "curiosity_gaps")}
    )
    with pytest.raises(DreamRejected) as caught:
        dream.run(ws, now=now + timedelta(hours=1), synthesizer=synth)
    assert ws.memory_md.read_bytes() == before
    assert scratch_texts(ws) == more
    assert not scratch.rotated_path(ws.scratch_path).exists()
    # bounded: a draft and two revisions, each critiqued
    assert len(synth.calls) == 3 and synth.calls[0] is None and synth.calls[1]
    row = ws.store.journal.get_dream(caught.value.dream_id)
    assert row["outcome"] == "rejected" and len(row["critiques"]) == 3
    assert len(row["revisions"]) == 2 and row["draft"]
    assert "empty synthesis" in caught.value.reasons[0]
    assert all(ws.get(i).lifecycle == "generated" for i in range(7, 13))


def test_a_revision_that_fixes_the_critique_commits(ws, now):
    write(ws, now)

    class Learns(Fixed):
        def synthesize(self, inputs, *, critique=None, previous=None):
            if critique:
                body = "- Task: now with real substance in it, enough to pass the guards"
                self.fields = {"active_context": body}
            return super().synthesize(inputs, critique=critique, previous=previous)

    synth = Learns({"active_context": ""})
    result = dream.run(ws, now=now, synthesizer=synth)
    assert result.committed and result.revisions == 1
    assert len(result.critiques) == 1 and result.usage.input_tokens == 200
    row = ws.store.journal.get_dream(result.dream_id)
    assert len(row["critiques"]) == 1 and len(row["revisions"]) == 1
    assert row["input_tokens"] == 200 and row["cost_usd"] == pytest.approx(0.002)


def test_synthesis_failure_is_journaled_and_nothing_is_lost(ws, now):
    write(ws, now)
    with pytest.raises(SynthesisError):
        dream.run(ws, now=now, synthesizer=Failing())
    assert not ws.memory_md.exists()
    assert scratch_texts(ws) == NOTES
    row = ws.store.journal.dream_entries()[0]
    full = ws.store.journal.get_dream(row["id"])
    assert full["outcome"] == "failed" and full["raw"] == "<garbage>"
    assert "SynthesisError" in full["error"]


def test_a_second_dreamer_gets_lock_held(ws, now):
    write(ws, now)
    with ws.lock(), pytest.raises(LockHeld, match="dream already running"):
        dream.run(ws, now=now)
    assert scratch_texts(ws) == NOTES


def test_a_rotated_scratch_left_by_a_crash_is_recovered(ws, now):
    write(ws, now)
    scratch.rotate(ws.scratch_path)
    ws.note("Written after the crash", at=now)
    result = dream.run(ws, now=now)
    assert result.committed and result.recovered == 6
    assert "Written after the crash" in ws.memory_md.read_text()


def test_dry_run_changes_nothing(ws, now):
    write(ws, now)
    before_scratch = ws.scratch_path.read_bytes()
    result = dream.run(ws, now=now, dry_run=True)
    assert result.outcome == "dry-run" and result.report.ok
    assert "## Active Context" in result.state_text
    assert not ws.memory_md.exists()
    assert ws.scratch_path.read_bytes() == before_scratch
    assert ws.store.journal.dream_entries() == []
    assert ws.store.crystals.count_by_lifecycle() == {"generated": 6}


def test_pointers_that_lead_nowhere_are_reported_once_and_left_out(ws, now):
    write(ws, now)
    ws.note("Kitchen renovation quotes from three contractors", at=now - timedelta(days=9))
    synth = Fixed(
        {
            "active_context": "- Task: ship the Acme report by Friday, then rest",
            "crystal_pointers": [
                {"topic": "Kitchen renovation", "keywords": "kitchen renovation quotes"},
                {"topic": "Kitchen renovation plans", "keywords": "zzqx wobble"},
                {"topic": "Moon base logistics", "keywords": "lunar regolith"},
            ],
        }
    )
    result = dream.run(ws, now=now, synthesizer=synth)
    pointers = wm.parse(ws.memory_md.read_text()).pointers()
    assert wm.Pointer("Kitchen renovation", "kitchen renovation quotes") in pointers
    # Never rewritten under a guessed keyword: a topic's own words can find something else.
    assert all("plans" not in p.topic and "Moon" not in p.topic for p in pointers)
    assert len(result.pointer_fixes) == 2  # recorded once, though the revision repeats them
    assert "pointer 'Moon base logistics' leads nowhere" in result.pointer_fixes[1]
    # The model is told once, in the critique of its first draft.
    told = [c for c in synth.calls[1] if "leads nowhere" in c]
    assert len(told) == 2 and len(synth.calls) == 2 and synth.calls[0] is None
    row = ws.store.journal.get_dream(result.dream_id)
    assert row["inputs"]["pointer_fixes"] == result.pointer_fixes
    for pointer in pointers:
        hits = ws.search(pointer.keywords, now=now)
        assert any("Kitchen renovation" in hit.text for hit in hits)


def test_seed_dream_keeps_the_original_on_top_then_only_the_state(ws, now):
    original = "# My agent notes\n\n- Maya likes tea\n- Project Falcon ships in May\n"
    ws.memory_md.write_text(original)
    dream.run(ws, now=now, force=True)
    first = ws.memory_md.read_text()
    head, _, tail = first.partition("\n\n---\n\n" + dream.SEED_MARKER + "\n\n")
    assert head == original.rstrip() and tail.startswith(wm.TITLE)
    assert ws.store.records.get_meta(dream.SEED_FLAG) == "0"
    assert ws.seed_backup.read_text() == original
    write(ws, now)
    dream.run(ws, now=now + timedelta(hours=3))
    second = ws.memory_md.read_text()
    assert second.startswith(wm.TITLE) and dream.SEED_MARKER not in second


def test_compose_never_stacks_two_markers():
    state = wm.WorkingMemory(bodies={"bond": "- Maya"})
    once = dream.compose(state, wm.parse("Hand notes"), seed_pending=True)
    twice = dream.compose(state, wm.parse(once), seed_pending=True)
    assert twice == once and twice.count(dream.SEED_MARKER) == 1


def test_default_synthesizer_without_a_key_is_offline(ws):
    assert isinstance(dream.default_synthesizer(ws), OfflineSynthesizer)


def test_a_mass_drop_is_critiqued_and_the_revision_fades_gradually(ws, now):
    topics = [
        "greenhouse irrigation pumps",
        "orchard seedling order",
        "barn roof repair",
        "tractor gearbox service",
        "beehive winter feeding",
        "compost turner rental",
    ]
    lines = []
    for i in range(36):
        topic = topics[i % len(topics)]
        text = (
            f"{topic.capitalize()} batch {i}: call the cooperative about delivery slots, "
            f"confirm the invoice and update the shared planning sheet"
        )
        ws.index(
            NewCrystal(
                text,
                importance=0.7,
                source="scratch",
                at=now - timedelta(days=12, minutes=i),
                lifecycle="consolidated",
            )
        )
        lines.append(f"- Task: {text}")
    mature = "# Working Memory State\n\n## Active Context\n" + "\n".join(lines) + "\n"
    ws.memory_md.write_text(mature)
    write(ws, now)
    result = dream.run(ws, now=now)
    assert result.committed and result.revisions >= 1
    assert "mass drop" in result.critiques[0][0]
    state = wm.parse(ws.memory_md.read_text())
    kept = [line for line in lines if line in state.body("active_context")]
    assert 0 < len(kept) < len(lines)  # some faded, not all at once
    assert state.pointers()


def test_hand_edits_between_dreams_are_kept(ws, now):
    write(ws, now)
    dream.run(ws, now=now)
    text = ws.memory_md.read_text()
    text = text.replace("## The Bond\n", "## the bond\n- User's cat is called Miso\n")
    ws.memory_md.write_text(text + "\n## Scratchpad\nkeep this by hand\n")
    ws.note("Acme report deadline moved to Wednesday", at=now + timedelta(minutes=5))
    dream.run(ws, now=now + timedelta(hours=1), force=True)
    state = wm.parse(ws.memory_md.read_text())
    assert "User's cat is called Miso" in state.body("bond")
    assert state.extra == [("Scratchpad", "keep this by hand")]
    assert "moved to Wednesday" in state.body("active_context")
    assert "deadline is Friday" not in state.body("active_context")


def test_a_skip_never_builds_the_synthesizer(tmp_path, now):
    from dreamer import Workspace

    # synthesizer = "claude" with no key cannot be built; a skip must not even try.
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "dreamer.toml").write_text('[memory.dream]\nsynthesizer = "claude"\n')
    with Workspace.open(tmp_path / "w", environ={}) as ws:
        ws.note("Only one note so far", at=now)
        result = dream.run(ws, now=now)
    assert result.outcome == "skipped" and result.synthesizer is None
