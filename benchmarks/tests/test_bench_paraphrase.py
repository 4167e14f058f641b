"""`dream bench paraphrase`: the probe scored three ways (search, BM25, the embedder alone)."""

from __future__ import annotations

import json
from pathlib import Path

from dreamer.cli import main

PROBE = Path(__file__).resolve().parents[1] / "paraphrase"


def pairs(name: str) -> list[dict[str, str]]:
    """Every line of <name>.jsonl of the shipped probe as a dict."""
    lines = (PROBE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_dream_bench_paraphrase_scores_the_three_ways(tmp_path, runner):
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


def test_dream_bench_paraphrase_takes_the_embedder_to_measure(tmp_path, runner):
    probe = tmp_path / "probe.jsonl"
    probe.write_text("".join(json.dumps(p) + "\n" for p in pairs("dev")[:3]), encoding="utf-8")
    result = runner.invoke(
        main, ["bench", "paraphrase", str(probe), "--embedder", "hashing", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["settings"]["alone"]["embedder_name"].startswith("hashing")
    unknown = runner.invoke(main, ["bench", "paraphrase", str(probe), "--embedder", "bert"])
    assert unknown.exit_code == 2 and "minilm" in unknown.output
