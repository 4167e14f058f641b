"""The paraphrase probe (benchmarks/paraphrase/) is what it claims: hand-written note/question
pairs that share no content word, two independent sets, and distractors that reproduce exactly.

The tests read files only (no dreamer import); the rule below is the one the probe's README
states. `dream bench paraphrase` itself is tested with the benchmarks
(benchmarks/tests/test_bench_paraphrase.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).resolve().parents[2] / "benchmarks" / "paraphrase"
STOP = set(
    "a about above after again against all am an and any are as at be because been before "
    "being below between both but by can could did do does doing down during each few for from "
    "further had has have having he her here hers herself him himself his how i if in into is "
    "it its itself just me more most my myself no nor not now of off on once only or other our "
    "ours ourselves out over own same she should so some such than that the their theirs them "
    "themselves then there these they this those through to too under until up very was we "
    "were what when where which while who whom why will with would you your yours yourself "
    "yourselves".split()
)
SUFFIXES = ("ing", "ed", "es", "s")
SETS = ("dev", "test")
MIN_PAIRS = 50
MIN_DISTRACTORS = 400


def content(text: str) -> set[str]:
    """Content words: lower-cased runs of letters/digits, minus stop words, with one trailing
    -ing/-ed/-es/-s removed when at least three letters remain."""
    words = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in STOP:
            continue
        for suffix in SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        words.add(word)
    return words


def pairs(name: str) -> list[dict[str, str]]:
    """Every line of <name>.jsonl as a dict (no blank lines allowed)."""
    lines = (PROBE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def distractors() -> list[str]:
    return (PROBE / "distractors.txt").read_text(encoding="utf-8").splitlines()


def test_the_normaliser_follows_the_stated_rule():
    assert content("Douglas's daughter Mia starts school") == {
        "dougla",  # the rule is blind to names: any trailing -s goes
        "s",
        "daughter",
        "mia",
        "start",
        "school",
    }
    assert content("when does his kid begin classes") == {"kid", "begin", "class"}
    assert content("Booked, booking, books") == {"book"}
    assert content("bus gas is red") == {"bus", "gas", "red"}  # too short to strip
    assert content("The laptop has 32 GB") == {"laptop", "32", "gb"}


@pytest.mark.parametrize("name", SETS)
def test_every_line_is_a_pair_with_a_unique_id(name):
    probe = pairs(name)
    assert len(probe) >= MIN_PAIRS
    for pair in probe:
        assert isinstance(pair, dict) and set(pair) == {"id", "note", "question"}, pair
        assert all(isinstance(value, str) and value.strip() for value in pair.values()), pair
        assert pair["id"].startswith(f"{name}-"), pair
    assert len({pair["id"] for pair in probe}) == len(probe)
    assert len({pair["note"] for pair in probe}) == len(probe)
    assert len({pair["question"] for pair in probe}) == len(probe)


@pytest.mark.parametrize("name", SETS)
def test_no_question_shares_a_content_word_with_its_note(name):
    shared = {p["id"]: content(p["note"]) & content(p["question"]) for p in pairs(name)}
    assert {key: words for key, words in shared.items() if words} == {}


def test_dev_and_test_are_different_notes():
    dev, test = (pairs(name) for name in SETS)
    assert not {p["note"] for p in dev} & {p["note"] for p in test}
    assert not {p["question"] for p in dev} & {p["question"] for p in test}


def test_distractors_are_many_distinct_and_none_is_a_probe_note():
    lines = distractors()
    assert len(lines) >= MIN_DISTRACTORS
    assert len(set(lines)) == len(lines)
    assert all(6 <= len(line.split()) <= 25 for line in lines)
    notes = {p["note"] for name in SETS for p in pairs(name)}
    assert not set(lines) & notes


def test_make_distractors_reproduces_the_file_byte_for_byte(tmp_path):
    out = tmp_path / "distractors.txt"
    subprocess.run(
        [sys.executable, str(PROBE / "make_distractors.py"), str(out)],
        capture_output=True,
        check=True,
    )
    assert out.read_bytes() == (PROBE / "distractors.txt").read_bytes()
