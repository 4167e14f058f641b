"""`dream bench embed` and `import`: figures from real small runs with the hashing embedder,
and no progress line when stderr is not a terminal."""

from __future__ import annotations

import json

from dreamer.cli import main


def test_bench_embed_reports_each_childs_peak_at_each_size(runner, tmp_path):
    result = runner.invoke(
        main,
        ["bench", "embed", "--texts", "20", "--texts", "60", "--embedder", "hashing"]
        + ["--waiting", "--json", "-q", "-w", str(tmp_path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [row["texts"] for row in report["sizes"]] == [20, 60]
    for row in report["sizes"]:
        assert row["reindex"]["embedded"] == row["texts"]
        assert row["waiting"]["embedded"] == row["texts"]
        for path in ("floor", "reindex", "waiting"):
            assert 10 < row[path]["peak_rss_mb"] < 1_000
    assert report["embedder"].startswith("hashing")
    assert list(tmp_path.iterdir()) == []  # the workspaces are gone


def test_bench_import_times_both_embedders_on_one_export(runner, tmp_path):
    result = runner.invoke(
        main,
        ["bench", "import", "--crystals", "20", "-w", str(tmp_path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "import of 20 crystals" in result.output and "hashing-v1-384" in result.output
    assert "\r" not in result.output  # counts only on a terminal
