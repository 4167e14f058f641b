"""Hormones: decay toward rest by half-life, stimuli, the lexicon, and the note path."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamer.errors import InvalidStimulus, UsageError
from dreamer.memory import hormone_summary, hormones


def test_no_history_means_resting_levels(ws, now):
    assert hormones.levels(ws, now) == {"dopamine": 0.15, "cortisol": 0.02, "oxytocin": 0.20}


def test_levels_decay_toward_rest_by_half_life(ws, now):
    hormones.feel(ws, "dopamine", 0.6, "shipped v1", now)
    assert hormones.levels(ws, now)["dopamine"] == pytest.approx(0.75)
    # dopamine half-life is 30 minutes: halfway back to 0.15 after 30, a quarter after 60
    assert hormones.levels(ws, now + timedelta(minutes=30))["dopamine"] == pytest.approx(0.45)
    assert hormones.levels(ws, now + timedelta(minutes=60))["dopamine"] == pytest.approx(0.30)
    assert hormones.levels(ws, now + timedelta(days=2))["dopamine"] == pytest.approx(0.15)
    # before the stimulus happened, it had not happened
    assert hormones.levels(ws, now - timedelta(minutes=1))["dopamine"] == pytest.approx(0.15)


def test_half_life_and_rest_come_from_settings(ws, now):
    ws.settings.hormone_rest["cortisol"] = 0.1
    ws.settings.hormone_half_life_minutes["cortisol"] = 10
    hormones.feel(ws, "cortisol", 0.5, "outage", now)
    assert hormones.levels(ws, now)["cortisol"] == pytest.approx(0.6)
    assert hormones.levels(ws, now + timedelta(minutes=10))["cortisol"] == pytest.approx(0.35)


def test_feel_clamps_and_stores_history(ws, now):
    hormones.feel(ws, "oxytocin", 1.0, "hug", now)
    after = hormones.feel(ws, "oxytocin", 0.5, "another hug", now, source="cli")
    assert after["oxytocin"] == 1.0
    low = hormones.feel(ws, "cortisol", -1.0, "relief", now)
    assert low["cortisol"] == 0.0
    rows = hormones.history(ws)
    assert [row["reason"] for row in rows] == ["relief", "another hug", "hug"]
    assert rows[1]["source"] == "cli" and rows[1]["delta"] == 0.5


def test_later_stimulus_builds_on_decayed_level(ws, now):
    hormones.feel(ws, "dopamine", 0.6, "a", now)  # 0.75
    after = hormones.feel(ws, "dopamine", 0.1, "b", now + timedelta(minutes=30))  # 0.45 + 0.1
    assert after["dopamine"] == pytest.approx(0.55)


@pytest.mark.parametrize(
    ("hormone", "delta", "fragment"),
    [
        ("serotonin", 0.1, "use one of dopamine"),
        ("dopamine", "lots", "must be a number"),
        ("dopamine", True, "must be a number"),
        ("dopamine", 2.0, "from -1 to 1"),
        ("dopamine", None, "must be a number"),
        ("dopamine", float("nan"), "from -1 to 1"),
    ],
)
def test_feel_rejects_bad_input_with_a_usage_error(ws, now, hormone, delta, fragment):
    with pytest.raises(InvalidStimulus, match=fragment) as info:
        hormones.feel(ws, hormone, delta, "x", now)
    assert isinstance(info.value, UsageError)
    assert hormones.history(ws) == []


def test_feel_accepts_a_numeric_string(ws, now):
    assert hormones.feel(ws, "dopamine", "0.25", "", now)["dopamine"] == pytest.approx(0.4)


def test_lexicon_finds_one_stimulus_per_hormone():
    found = hormones.stimuli_from_text(
        "Breakthrough! The build finally succeeded after the error. Thanks, I appreciate it"
    )
    assert [(h, d) for h, d, _ in found] == [
        ("dopamine", 0.3),
        ("cortisol", 0.3),
        ("oxytocin", 0.25),
    ]
    assert found[0][2] == "achievement/breakthrough detected"
    assert hormones.stimuli_from_text("Meeting moved to Tuesday") == []
    # whole words only: "terror" is not an error, "bugle" is not a bug
    assert hormones.stimuli_from_text("terror and bugle") == []


def test_custom_lexicon():
    lexicon = {"cortisol": {"delta": 0.5, "reason": "money worry", "words": ["invoice*"]}}
    assert hormones.stimuli_from_text("Invoices are overdue", lexicon) == [
        ("cortisol", 0.5, "money worry")
    ]
    with pytest.raises(InvalidStimulus, match="unknown hormone"):
        hormones.stimuli_from_text("x", {"adrenaline": {"delta": 1, "words": []}})


def test_workspace_lexicon_file(ws, now):
    (ws.memory_dir / "lexicon.json").write_text(
        json.dumps({"dopamine": {"delta": 0.4, "reason": "a sale", "words": ["sold"]}})
    )
    ws.note("We sold the first licence", at=now)
    ws.note("Breakthrough in the lab", at=now)  # the default lexicon is replaced
    assert [row["reason"] for row in hormones.history(ws)] == ["a sale"]


def test_agent_note_applies_stimuli_and_crystal_keeps_levels(ws, now):
    crystal_id = ws.note("Finally solved the crash, thank you!", at=now)
    current = hormones.levels(ws, now)
    assert current["dopamine"] == pytest.approx(0.45)
    assert current["cortisol"] == pytest.approx(0.32)
    assert current["oxytocin"] == pytest.approx(0.45)
    crystal = ws.get(crystal_id)
    assert (crystal.dopamine, crystal.cortisol, crystal.oxytocin) == pytest.approx(
        (0.45, 0.32, 0.45)
    )
    assert {row["source"] for row in hormones.history(ws)} == {"note"}


def test_auto_notes_do_not_feed_back(ws, now):
    ws.note(
        "[AUTO] Hormonal event: dopamine spike (achievement/breakthrough detected).",
        source="auto",
        at=now,
    )
    assert hormones.history(ws) == []


def test_mood_describes_levels():
    assert (
        hormone_summary.mood({"dopamine": 0.15, "cortisol": 0.02, "oxytocin": 0.2})
        == "steady, calm"
    )
    assert hormone_summary.mood({"dopamine": 0.5, "cortisol": 0.4, "oxytocin": 0.2}) == (
        "energized, focused"
    )
    assert hormone_summary.mood({"dopamine": 0.9, "cortisol": 0.8, "oxytocin": 0.7}) == (
        "elated, stressed, warmly connected"
    )


# Pieces a note's words are made of: stems and near-misses of the lexicon's words, in any case,
# with what sits around a word (the pattern wants no word character on either side).
_PIECES = [
    *{w.rstrip("*") for entry in hormones.DEFAULT_LEXICON.values() for w in entry["words"]},
    "ing",
    "s",
    "ed",
    "ACHIEV",
    "Thank",
    "my ",
    "wif",
    "bu",
    "g",
    "I'M",
    "fe",
    " ",
    " ",
    "-",
    "_",
    "7",
    ".",
    "\n",
    "é",
    "ſ",
    "K",  # the last: the Kelvin sign
]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12), st.sampled_from(["default", "own"]))
def test_skipping_a_pattern_no_stem_of_which_is_in_the_text_never_misses_a_stimulus(parts, which):
    # The text is checked for a word's stem before its pattern is compiled; what it finds must
    # be what the pattern alone finds, in every case and with a lexicon of one's own.
    text = "".join(parts)
    lexicon = hormones.DEFAULT_LEXICON
    if which == "own":
        lexicon = {
            "dopamine": {"delta": 0.2, "words": ["ſhip*", "deploy", "Release*"]},
            "cortisol": {"delta": 0.1, "words": ["*"]},
        }
    expected = [
        (name, float(entry["delta"]), entry.get("reason") or f"{name} stimulus")
        for name, entry in lexicon.items()
        if hormones._pattern(tuple(entry["words"])).search(text)
    ]
    assert hormones.stimuli_from_text(text, lexicon) == expected
