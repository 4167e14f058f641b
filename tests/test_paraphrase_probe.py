"""The paraphrase probe is what it claims: no question shares a content word with its note."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).resolve().parents[1] / "benchmarks" / "paraphrase"
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


def content(text: str) -> set[str]:
    words = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in STOP:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        words.add(word)
    return words


def pairs(name: str) -> list[dict[str, str]]:
    lines = (PROBE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.parametrize("name", ["dev", "test"])
def test_no_question_shares_a_content_word_with_its_note(name):
    probe = pairs(name)
    assert len(probe) >= 40
    assert all(set(pair) == {"id", "note", "question"} for pair in probe)
    assert len({pair["id"] for pair in probe}) == len(probe)
    shared = {p["id"]: content(p["note"]) & content(p["question"]) for p in probe}
    assert {key: words for key, words in shared.items() if words} == {}


def test_dev_and_test_are_different_notes_and_distractors_answer_neither(tmp_path):
    dev, test = ({p["note"] for p in pairs(name)} for name in ("dev", "test"))
    assert not dev & test
    distractors = (PROBE / "distractors.txt").read_text(encoding="utf-8").splitlines()
    assert len(distractors) >= 400 and len(set(distractors)) == len(distractors)
    assert not set(distractors) & (dev | test)
    made = subprocess.run(
        [sys.executable, str(PROBE / "make_distractors.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert made.stdout == (PROBE / "distractors.txt").read_text(encoding="utf-8")


def test_dream_bench_paraphrase_scores_the_three_ways(tmp_path, runner):
    from dreamer.cli import main

    probe = tmp_path / "probe.jsonl"
    probe.write_text("".join(json.dumps(p) + "\n" for p in pairs("dev")[:6]), encoding="utf-8")
    distractors = tmp_path / "distractors.txt"
    distractors.write_text("The billing service deploys on Tuesdays\nLunch is at noon\n")
    result = runner.invoke(
        main,
        [
            "bench",
            "paraphrase",
            str(probe),
            "--distractors",
            str(distractors),
            "--json",
            "-w",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    alone, among = report["settings"]["alone"], report["settings"]["among 2 distractors"]
    assert (alone["notes"], among["notes"]) == (6, 8)
    assert all(
        0 <= among[way]["hit@1"] <= among[way]["hit@5"] <= 1
        for way in ("search", "bm25", "embedder")
    )
    assert alone["bm25"]["hit@5"] <= alone["search"]["hit@5"]  # no shared word: BM25 is blind
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"note": "only a note"}\n')
    refused = runner.invoke(main, ["bench", "paraphrase", str(bad)])
    assert refused.exit_code == 2 and 'bad.jsonl:1: needs "note" and "question"' in refused.output
