"""`dream bench`: the LoCoMo harness on a tiny hand-made conversation, and the scale harness."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from dreamer_bench import locomo, scale
from dreamer_bench.bm25 import BM25, tokenize

from dreamer.cli import main
from dreamer.errors import UsageError


def _turn(dia_id: str, speaker: str, text: str, **extra) -> dict:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


CONVERSATION = {
    "sample_id": "tiny-1",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            _turn("D1:1", "Ana", "Hi Ben! I went to a pottery class yesterday."),
            _turn("D1:2", "Ben", "Nice! What did you make?"),
            _turn(
                "D1:3",
                "Ana",
                "A blue vase for my grandmother.",
                blip_caption="a photo of a blue ceramic vase",
                img_url=["http://x/y.jpg"],
            ),
            _turn("D1:4", "Ben", "My dog Rex chewed my running shoes again."),
        ],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [
            _turn("D2:1", "Ben", "I adopted a second dog, a beagle named Milo."),
            _turn("D2:2", "Ana", "Congratulations! How is Rex taking it?"),
            _turn("D2:3", "Ben", "They play all day in the garden."),
            _turn("D2:4", "Ana", "I am training for a marathon in Berlin."),
        ],
    },
    "qa": [
        {
            "question": "What did Ana make in the pottery class?",
            "answer": "a blue vase",
            "evidence": ["D1:1; D1:3"],
            "category": 4,
        },
        {
            "question": "When did Ana go to the pottery class?",
            "answer": "7 May 2023",
            "evidence": ["D1:01"],
            "category": 2,
        },
        {
            "question": "What are the names of Ben's dogs?",
            "answer": "Rex and Milo",
            "evidence": ["D1:4", "D:2:1"],
            "category": 1,
        },
        {
            "question": "Which city is Ana's marathon in?",
            "answer": "Berlin",
            "evidence": ["D2:4", "D", "D9:9"],
            "category": 3,
        },
        {
            "question": "What did Ben make in the pottery class?",
            "adversarial_answer": "a vase",
            "evidence": ["D1:3"],
            "category": 5,
        },
        {"question": "Does Ana like tea?", "answer": "unknown", "evidence": [], "category": 3},
    ],
    "observation": {},
    "session_summary": {},
    "event_summary": {},
}


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    return path


def test_a_turn_is_indexed_with_its_date_speaker_and_image_caption(tiny):
    conversations, _ = locomo.load(tiny)
    turns = {turn.dia_id: turn for turn in conversations[0].turns}
    assert turns["D1:3"].document() == (
        "1:56 pm on 8 May, 2023 Ana: A blue vase for my grandmother. "
        "[image: a photo of a blue ceramic vase]"
    )
    assert turns["D2:1"].document().startswith("10:00 am on 20 June, 2023 Ben: I adopted")
    assert turns["D2:1"].at.isoformat() == "2023-06-20T10:00:00+00:00"


def test_evidence_anomalies_are_repaired_or_dropped_and_counted(tiny):
    conversations, anomalies = locomo.load(tiny)
    evidence = {q.text: q.evidence for q in conversations[0].questions}
    assert evidence["What did Ana make in the pottery class?"] == ["D1:1", "D1:3"]
    assert evidence["When did Ana go to the pottery class?"] == ["D1:1"]
    assert evidence["What are the names of Ben's dogs?"] == ["D1:4", "D2:1"]
    assert evidence["Which city is Ana's marathon in?"] == ["D2:4"]
    assert "Does Ana like tea?" not in evidence
    assert anomalies.to_dict() == {
        "multiple_ids_in_one_string": 1,
        "leading_zero": 1,
        "malformed_repaired": 1,
        "malformed_dropped": 1,
        "missing_turn_dropped": 1,
        "questions_without_evidence": 1,
    }


def test_run_reports_recall_by_category_next_to_bm25(tiny):
    report = locomo.run(tiny, [1, 2, 10])
    assert report["conversations"] == 1 and report["turns"] == 8 and report["questions"] == 5
    ours, ref = report["search"], report["bm25"]
    assert {key: ours[key]["questions"] for key in ("1", "2", "3", "4", "5", "overall")} == {
        "1": 1,
        "2": 1,
        "3": 1,
        "4": 1,
        "5": 1,
        "overall": 4,
    }
    # Ten results cover this whole conversation: every evidence turn is found by both.
    assert ours["overall"]["recall@10"] == 1.0 and ref["overall"]["recall@10"] == 1.0
    # "marathon" is in one turn only: first for both, whatever else happens.
    assert ours["3"]["recall@1"] == 1.0 and ref["3"]["recall@1"] == 1.0
    # Two evidence turns, one result: at most half found.
    assert ours["4"]["recall@1"] <= 0.5
    assert report["ratio"]["recall@10"] == 1.0
    assert report["k"] == [1, 2, 10]


def test_run_rejects_a_file_that_is_not_locomo(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(UsageError, match="not a list of conversations"):
        locomo.run(path)
    with pytest.raises(UsageError, match="no file"):
        locomo.run(tmp_path / "missing.json")


def test_bm25_reference_ranks_rare_words_first_and_ignores_stop_words():
    index = BM25(
        ["the cat sat on the mat", "the dog barked", "a big cat and a small dog", "the the the"]
    )
    assert tokenize("The Cat's mat") == ["cat", "mat"]
    assert index.top("cat mat", 4) == [0, 2]
    assert index.top("the", 4) == []  # only stop words: nothing to rank by
    scores = index.scores("dog")
    assert scores[1] > scores[2] > 0  # the shorter document wins at equal tf
    assert index.top("dog", 1) == [1]


def test_cli_locomo_json_prints_recall_and_reference(runner, tiny, tmp_path):
    scratch = tmp_path / "bench-here"
    result = runner.invoke(
        main,
        ["bench", "locomo", str(tiny), "--k", "5,10", "--json", "-q", "-w", str(scratch)],
        catch_exceptions=False,
    )
    assert list(scratch.iterdir()) == []  # its workspaces are gone afterwards
    assert result.exit_code == 0, result.output
    reports = json.loads(result.output)
    assert set(reports) == {"ingest", "notes"}  # both paths by default
    for kind, report in reports.items():
        assert report["path"] == kind
        assert set(report["search"]["overall"]) >= {"recall@5", "recall@10"}
        assert set(report["bm25"]["2"]) >= {"recall@5", "recall@10"}
        assert report["anomalies"]["malformed_dropped"] == 1
    notes = runner.invoke(main, ["bench", "locomo", str(tiny), "--path", "notes", "--json", "-q"])
    assert json.loads(notes.output)["path"] == "notes"


def test_cli_locomo_table_and_bad_k(runner, tiny):
    result = runner.invoke(main, ["bench", "locomo", str(tiny), "-q"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "overall (1-4)" in result.output and "ratio to BM25" in result.output
    bad = runner.invoke(main, ["bench", "locomo", str(tiny), "--k", "five"])
    assert bad.exit_code == 2 and "comma list" in bad.output


def test_synthetic_notes_are_varied_and_deterministic():
    import random

    first = [scale.synthetic_text(random.Random(3)) for _ in range(1)]
    again = [scale.synthetic_text(random.Random(3)) for _ in range(1)]
    assert first == again
    rng = random.Random(5)
    texts = [scale.synthetic_text(rng) for _ in range(300)]
    assert len(set(texts)) > 290
    memory = scale.synthetic_memory_md(20_000, random.Random(1))
    assert 20_000 <= len(memory.encode()) < 23_000 and memory.count("\n## ") > 3


def test_bulk_load_makes_searchable_crystals_in_a_few_transactions(ws, now):
    import random

    ws.init()
    created = scale.bulk_load(ws, 300, random.Random(2), now)
    store = ws.store
    assert created == store.db.execute("SELECT count(*) FROM crystals").fetchone()[0] > 290
    lifecycles = Counter(dict(store.crystals.count_by_lifecycle()))
    assert lifecycles["archived"] and lifecycles["consolidated"]
    sources = {row[0] for row in store.db.execute("SELECT DISTINCT source FROM crystals")}
    assert {"sessions", "scratch"} <= sources
    assert ws.search("kitchen remodel", now=now)


def test_cli_scale_json_prints_latencies(runner, tmp_path):
    result = runner.invoke(
        main,
        [
            "bench",
            "scale",
            "--crystals",
            "200",
            "--appends",
            "5",
            "--searches",
            "5",
            "--no-migrate",
            "--json",
            "-q",
            "-w",
            str(tmp_path),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    row = report["sizes"][0]
    assert row["crystals"] == 200
    assert row["append"]["n"] == 5 and row["append"]["p50_ms"] > 0
    assert row["search"]["n"] == 5 and row["search"]["p99_ms"] >= row["search"]["p50_ms"]
    assert row["dream"]["outcome"] == "committed" and row["dream"]["consumed"] >= 5
    assert row["consolidate"]["seconds"] >= 0 and "archived" in row["consolidate"]
    assert report["peak_rss_mb"] > 0
    assert list(tmp_path.iterdir()) == []  # the benchmark workspace is gone afterwards
    # Each search ran next to the bare FTS5 reference, in the same process.
    reference = row["fts_reference"]
    assert reference["n"] == 5 and reference["p50_ms"] > 0
    assert row["search_ratio"] == round(row["search"]["p50_ms"] / reference["p50_ms"], 2)
    cpu = row["search"]["cpu_p50_ms"], reference["cpu_p50_ms"]
    assert row["search_cpu_ratio"] == round(cpu[0] / max(cpu[1], 0.01), 2) and cpu[0] > 0


def test_cli_scale_table_names_the_fts5_reference(runner, tmp_path):
    args = ["bench", "scale", "--crystals", "150", "--appends", "2", "--searches", "3"]
    result = runner.invoke(
        main,
        [*args, "--no-migrate", "--no-dream", "-q", "-w", str(tmp_path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "x a bare FTS5 MATCH of the same words, same run" in result.output


def test_raw_fts_reference_ranks_the_words_as_the_store_does(ws, now):
    import random

    from dreamer_bench.raw_fts import RawFTS

    from dreamer.retrieval.search import query_terms

    ws.init()
    scale.bulk_load(ws, 400, random.Random(4), now)
    raw = RawFTS(ws.db_path)
    try:
        for query in ("kitchen remodel budget", "who owns the webhook", "Ada dashboard"):
            words = query_terms(query)
            found = raw.match(words, 6)
            assert found and found == [i for i, _ in ws.store.search.fts_match(words, [], 6)]
        assert raw.match([], 6) == []
        assert raw.match(["zzqxnotaword"], 6) == []
    finally:
        raw.close()


def _notes(root: Path) -> list[str]:
    """The notes the benchmark appended to the workspace measured under ``root``."""
    db = sqlite3.connect(root / "ws-300" / "memory" / "crystals.db")
    try:
        return [
            row[0] for row in db.execute("SELECT text FROM crystals WHERE text LIKE '%(note _)'")
        ]
    finally:
        db.close()


def test_scale_cache_loads_once_and_measures_what_a_fresh_load_would(tmp_path):
    kwargs = {"appends": 3, "searches": 3, "progress": None}
    fresh = scale.measure(300, tmp_path / "fresh", **kwargs)
    cache = tmp_path / "cache"
    first = scale.measure(300, tmp_path / "one", cache=cache, **kwargs)
    again = scale.measure(300, tmp_path / "two", cache=cache, **kwargs)
    assert first["cached"] == again["cached"] and (Path(first["cached"]) / scale.BUILT).exists()
    assert fresh["loaded"] == first["loaded"] == again["loaded"] > 290
    # The random state the load left is restored: the same notes, searches and dream follow.
    assert fresh["dream"]["consumed"] == first["dream"]["consumed"] == again["dream"]["consumed"]
    assert _notes(tmp_path / "fresh") == _notes(tmp_path / "one") == _notes(tmp_path / "two")
    assert fresh["db_mb"] == pytest.approx(again["db_mb"], abs=0.3)
    # What the dream took apart: the synthesizer's own time and the rest.
    dream = again["dream"]
    assert dream["synthesizer_seconds"] + dream["rest_seconds"] == pytest.approx(
        dream["seconds"], abs=0.02
    )
    assert dream["cpu_seconds"] > 0
    # The measured copy changed (notes appended, a dream); the cached workspace did not.
    db = sqlite3.connect(Path(first["cached"]) / "memory" / "crystals.db")
    assert db.execute("SELECT count(*) FROM crystals").fetchone()[0] == first["loaded"]
    db.close()


def test_cli_scale_cache_refuses_a_postgres_store(runner, tmp_path):
    result = runner.invoke(
        main,
        ["bench", "scale", "--cache", str(tmp_path / "c"), "--store-url", "postgresql:///x"],
    )
    assert result.exit_code != 0 and "--cache keeps SQLite workspaces only" in result.output


def test_cli_bench_report_times_a_workspace_with_history(runner, tmp_path):
    result = runner.invoke(
        main,
        [
            "bench",
            "report",
            "--crystals",
            "300",
            "--days",
            "3",
            "--json",
            "-q",
            "-w",
            str(tmp_path),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["days"] == 3 and 0 < figures["crystals"] <= 300
    assert figures["dreams"] == 36  # one every 2 hours
    assert figures["hormone_rows"] >= 3 * 48  # a consolidation every 30 minutes, plus stimuli
    assert figures["build_seconds"] > 0 and figures["cli_seconds"] > 0
    assert figures["bytes"] > 10_000 and figures["cli_bytes"] > 10_000
    assert figures["diffs"] > 0
    assert "cores" in figures["machine"] and "SQLite" in figures["machine"]
    assert list(tmp_path.iterdir()) == []  # the workspace is gone unless --keep


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc")
def test_bench_serve_runs_a_real_service_and_checks_every_run_is_recorded(tmp_path):
    from dreamer_bench import serve as serve_bench

    report = serve_bench.run(
        workspaces=3,
        seconds=4,
        nofile=64,
        consolidation_minutes=0.02,
        dream_minutes=0.05,
        notes_per_second=5,
        parent=tmp_path,
    )
    assert report["exit_code"] == 0
    assert report["runs"] >= 3 and report["logged_runs"] == report["runs"]
    assert report["logged_but_not_in_runs"] == 0 and report["tracebacks"] == 0
    assert report["peak_open_files"] > 0 and report["notes"] > 0
    assert list(tmp_path.iterdir()) == []  # nothing kept


def test_cli_scale_times_a_fresh_process_scan_and_reuses_a_kept_workspace(runner, tmp_path):
    def scale_run(*extra):
        result = runner.invoke(
            main,
            ["bench", "scale", "--crystals", "200", "--appends", "3", "--searches", "3"]
            + ["--no-migrate", "--no-dream", "--json", "-q", *extra],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    first = scale_run("--keep", "-w", str(tmp_path))
    (row,) = first["sizes"]
    scan = row["first_scan"]
    assert scan["scanned"] and scan["hits"] > 0, scan  # the probe's words match no crystal
    assert 0 < scan["search_ms"] < scan["process_ms"] and scan["peak_rss_mb"] > 0
    assert 0 < scan["scan_ms"] <= scan["search_ms"]
    assert scan["load_all"]["rows"] >= 190 and scan["load_all"]["peak_rss_mb"] > 0  # reference
    assert row["vector_file"]["mb"] > 0
    kept = Path(first["kept"])
    again = scale_run("--reuse", str(kept))
    (reused,) = again["sizes"]
    assert reused["reused"] and reused["load_seconds"] is None
    assert reused["loaded"] == row["loaded"] + 3  # what the first run loaded and noted
    assert reused["first_scan"]["scanned"]
    missing = runner.invoke(main, ["bench", "scale", "--reuse", str(tmp_path / "nowhere")])
    assert missing.exit_code != 0 and "not a folder" in missing.output


def test_bench_serve_counts_a_job_its_own_stop_cut_short_apart_from_errors():
    from collections import Counter

    from dreamer_bench import serve as serve_bench

    recorded = Counter(
        {
            ("/w/a", "consolidate", "interrupted"): 1,  # still running when the bench stopped
            ("/w/a", "consolidate", "done"): 9,
            ("/w/b", "dream", "overrun"): 2,
        }
    )
    assert serve_bench.tally(recorded) == {
        "job_errors": 0,
        "interrupted_at_stop": 1,
        "overruns": 2,
    }
    recorded[("/w/b", "dream", "failed")] += 1
    assert serve_bench.tally(recorded)["job_errors"] == 1
