"""The consolidation tick: decay snapshot, one note per spike, cooldown, lifecycle."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer.errors import LockHeld
from dreamer.memory import hormones, scratch
from dreamer.service import consolidation as consolidate


def _auto_notes(ws):
    return [note for note in scratch.parse(ws.scratch_path).notes if "[AUTO]" in note.text]


def test_tick_stores_decayed_levels(ws, now):
    hormones.feel(ws, "dopamine", 0.3, "nice", now)  # 0.45
    report = consolidate.tick(ws, now + timedelta(minutes=30))
    assert report.levels["dopamine"] == pytest.approx(0.30)
    newest = hormones.history(ws, limit=1)[0]
    assert newest["source"] == "decay" and newest["dopamine"] == pytest.approx(0.30)
    assert report.spikes == []
    assert _auto_notes(ws) == []


def test_spike_writes_one_auto_note_in_the_seed_form(ws, now):
    ws.note("Breakthrough: the parser finally works", at=now)
    hormones.feel(ws, "dopamine", 0.5, "shipped v1 to users", now)  # 0.45 + 0.5 = 0.95
    tick_at = now + timedelta(minutes=5)
    report = consolidate.tick(ws, tick_at)
    assert [spike["hormone"] for spike in report.spikes] == ["dopamine"]
    [note] = _auto_notes(ws)
    assert note.text.startswith(
        "[AUTO] Hormonal event: dopamine spike (achievement/breakthrough detected). "
        "Peaked at 0.95 at 2026-03-12T14:30:00Z after: shipped v1 to users."
    )
    assert 'Latest note: "Breakthrough: the parser finally works"' in note.text
    assert note.importance == 0.8 and note.at == tick_at
    crystal = ws.get(report.spikes[0]["crystal_id"])
    assert crystal.source == "auto" and crystal.text == note.text
    # the seed's line format, byte for byte
    line = scratch.render_note(scratch.Note(text=note.text, at=tick_at, importance=0.8))
    assert line.startswith("- [2026-03-12T14:35:00Z] (importance: 0.8) [AUTO] Hormonal event:")
    assert line in ws.scratch_path.read_text()


def test_no_repeat_while_high_then_a_new_spike_after_falling(ws, now):
    hormones.feel(ws, "cortisol", 0.9, "prod outage", now)  # 0.92, half-life 60 min
    assert len(consolidate.tick(ws, now + timedelta(minutes=1)).spikes) == 1
    # still above 0.7 ten minutes later: no repeat, even with another push
    hormones.feel(ws, "cortisol", 0.05, "still down", now + timedelta(minutes=9))
    assert consolidate.tick(ws, now + timedelta(minutes=10)).spikes == []
    # falls below the threshold (after ~25 minutes), then a new stimulus: a new spike
    assert consolidate.tick(ws, now + timedelta(minutes=60)).spikes == []
    hormones.feel(ws, "cortisol", 0.6, "outage again", now + timedelta(minutes=61))
    again = consolidate.tick(ws, now + timedelta(minutes=62))
    assert [spike["hormone"] for spike in again.spikes] == ["cortisol"]
    assert len(_auto_notes(ws)) == 2


def test_spike_between_ticks_is_not_missed(ws, now):
    consolidate.tick(ws, now)
    hormones.feel(ws, "dopamine", 0.7, "won the hackathon", now + timedelta(minutes=1))  # 0.85
    # 30 minutes later it has decayed to 0.5, but it did cross 0.7
    report = consolidate.tick(ws, now + timedelta(minutes=31))
    assert report.levels["dopamine"] < 0.7
    assert [(s["hormone"], s["peak"]) for s in report.spikes] == [("dopamine", 0.85)]


def test_cooldown_survives_reopening_the_workspace(ws, now):
    from dreamer import Workspace

    hormones.feel(ws, "oxytocin", 0.7, "user shared family news", now)
    assert len(consolidate.tick(ws, now).spikes) == 1
    ws.close()
    with Workspace.open(ws.root) as again:
        assert consolidate.tick(again, now + timedelta(minutes=1)).spikes == []


def test_auto_notes_do_not_cause_spikes_themselves(ws, now):
    hormones.feel(ws, "dopamine", 0.8, "breakthrough", now)
    consolidate.tick(ws, now)
    before = hormones.history(ws, limit=100)
    consolidate.tick(ws, now + timedelta(minutes=1))
    stimuli = [row for row in hormones.history(ws, limit=100) if row["hormone"]]
    assert len(stimuli) == len([row for row in before if row["hormone"]]) == 1


def test_two_ticks_at_once_are_refused(ws, now):
    with consolidate._tick_lock(ws), pytest.raises(LockHeld, match="consolidation already"):
        consolidate.tick(ws, now)


def test_tick_runs_the_lifecycle(ws, now):
    old = ws.note("Went to a café", importance=0.5, type="experience", at=now - timedelta(days=100))
    report = consolidate.tick(ws, now)
    assert old in report.lifecycle.archived
    assert ws.get(old).lifecycle == "archived"
    assert report.to_dict()["lifecycle"]["archived"] == 1


def test_a_stimulus_in_the_same_second_as_the_last_tick_is_not_missed(ws, now):
    consolidate.tick(ws, now)
    hormones.feel(ws, "dopamine", 0.7, "record sales", now)  # same second as the tick
    report = consolidate.tick(ws, now + timedelta(minutes=1))
    assert [spike["hormone"] for spike in report.spikes] == ["dopamine"]
