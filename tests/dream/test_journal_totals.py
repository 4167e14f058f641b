"""The journal's totals in `dream log` and `dream status`: every input token counts (a
claude-code dream that read 44,955 tokens, most from the prompt cache, shows 44,955, not the 121
billed at the full rate), and a skipped run is no dream."""

from __future__ import annotations

import json

from freezegun import freeze_time

from dreamer.cli import main


def _cached_dream(ws, now):
    ws.init()
    ws.store.journal.record_dream(
        {
            "started_at": "2026-03-12T14:00:00Z",
            "outcome": "committed",
            "reason": "6 new notes since the last dream",
            "synthesizer": "claude-code",
            "input_tokens": 121,
            "cache_read_tokens": 40_000,
            "cache_write_tokens": 4_834,
            "output_tokens": 900,
            "cost_usd": 0.0312,
        }
    )


def test_dream_log_counts_cached_input_tokens(ws, now, runner):
    _cached_dream(ws, now)
    out = runner.invoke(main, ["log", "-w", str(ws.root)], catch_exceptions=False).output
    assert "44955/900 tok" in out
    assert "total: 1 dream, 44955 input (44834 from the prompt cache) and 900 output tokens" in out
    rows = json.loads(runner.invoke(main, ["log", "--json", "-w", str(ws.root)]).output)
    assert (rows[0]["cache_read_tokens"], rows[0]["cache_write_tokens"]) == (40_000, 4_834)


def test_dream_status_counts_cached_input_tokens(ws, now, runner):
    _cached_dream(ws, now)
    with freeze_time(now):
        out = runner.invoke(main, ["status", "-w", str(ws.root)], catch_exceptions=False).output
    assert (
        "LLM to date: $0.0312 over 1 dream (44955 input, 44834 of them from the prompt cache; "
        "900 output tokens)" in out
    )


def test_a_skipped_run_is_no_dream_in_the_totals(ws, now, runner):
    ws.init()
    ws.store.journal.record_dream(
        {"started_at": "2026-03-12T13:00:00Z", "outcome": "skipped", "reason": "only 1 new note"}
    )
    out = runner.invoke(main, ["log", "-w", str(ws.root)], catch_exceptions=False).output
    assert "total: 0 dreams, 0 input and 0 output tokens" in out
    _cached_dream(ws, now)
    with freeze_time(now):
        status = runner.invoke(main, ["status", "-w", str(ws.root)], catch_exceptions=False)
    assert "LLM to date: $0.0312 over 1 dream (" in status.output
