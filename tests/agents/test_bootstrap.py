"""The bootstrap block: description, MEMORY.md and pending notes, sized to the context window."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from dreamer.agents.bootstrap import (
    CUT_MARKER,
    bootstrap,
    bootstrap_block,
    budget_for,
    fit_state,
    parse_window,
)
from dreamer.cli import main
from dreamer.errors import UsageError
from dreamer.memory.state import WorkingMemory, render, sections
from dreamer.support import prompts

WINDOWS = {"32000": 3_200, "64000": 4_000, "128000": 6_000, "200000": 8_000}


def full_state() -> str:
    """A mature state whose sections are all longer than any budget allows."""
    bodies = {}
    for s in sections():
        bodies[s.key] = "\n".join(
            f"- {s.title} line {i}: Ada's Ferrous work, the Raft snapshot fix, Maja's football"
            f" on Tuesdays ({'x' * (i % 7)})"
            for i in range(30)
        )
    return render(WorkingMemory(bodies, "2026-03-12T14:30:00Z", "calm, focused"))


@pytest.fixture
def mature(ws, now):
    """A workspace with a long MEMORY.md and a few pending notes."""
    ws.init()
    ws.memory_md.write_text(full_state())
    for i in range(6):
        ws.note(
            f"Pending: decision {i} about region sharding",
            importance=0.5 + i * 0.08,
            at=now + timedelta(minutes=i),
        )
    return ws


def allowed_lines(ws) -> set[str]:
    """Every line the block may contain: template, MEMORY.md and scratch lines, markers."""
    lines = set(prompts.template("bootstrap").splitlines())
    lines |= set(ws.memory_md.read_text().splitlines())
    lines |= set(ws.scratch_path.read_text().splitlines())
    return lines | {CUT_MARKER, ""}


@pytest.mark.parametrize("window", sorted(WINDOWS))
def test_dream_bootstrap_stays_within_each_budget_and_never_cuts_a_line(mature, runner, window):
    result = runner.invoke(
        main,
        ["bootstrap", "--context-window", window, "-w", str(mature.root)],
        catch_exceptions=False,
    )

    assert result.exit_code == 0
    assert len(result.output) <= WINDOWS[window]
    assert CUT_MARKER in result.output
    allowed = allowed_lines(mature)
    strays = [
        line
        for line in result.output.splitlines()
        if line not in allowed and not line.startswith("[")
    ]
    assert strays == []  # every line is a whole line of its source
    assert "## The Bond" in result.output  # the most important section survives
    assert "## Emerging Skills" not in result.output  # the least important goes first
    assert "## Unsynthesized Notes (pending dream consolidation)" in result.output
    assert "importance: 0.9) Pending: decision 5" in result.output  # most important note kept


def test_larger_windows_keep_more(mature):
    sizes = [len(bootstrap_block(mature, int(window))) for window in sorted(WINDOWS, key=int)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]


def test_sections_are_cut_in_keep_rank_order(mature):
    cut = bootstrap(mature, 32_000).sections_cut
    ranks = {s.title: s.keep_rank for s in sections()}
    # Every section with a lower rank than a surviving one was cut (whole or in part).
    block = bootstrap_block(mature, 32_000)
    surviving = [t for t in ranks if f"## {t}" in block]
    assert all(title in cut for title in ranks if ranks[title] < min(ranks[t] for t in surviving))


def test_budgets_by_context_window():
    assert budget_for(None) == 8_000
    assert budget_for(1_000_000) == budget_for(200_000) == 8_000
    assert budget_for(150_000) == budget_for(128_000) == 6_000
    assert budget_for(100_000) == budget_for(64_000) == 4_000  # between rows: the smaller
    assert budget_for(32_000) == budget_for(8_000) == 3_200
    assert parse_window("128k") == 128_000 and parse_window("1m") == 1_000_000
    with pytest.raises(UsageError):
        parse_window("big")


def test_a_small_memory_is_shown_whole_with_its_notes(ws, now):
    ws.init()
    ws.memory_md.write_text("# Working Memory State\n\n## The Bond\nCalls the agent Bosun.\n")
    ws.note("Ada moved the sync to Thursday", importance=0.8, at=now)

    block = bootstrap_block(ws, 32_000)

    assert "## The Bond\nCalls the agent Bosun." in block
    assert "(importance: 0.8) Ada moved the sync to Thursday" in block
    assert CUT_MARKER not in block
    assert "memory_search" in block and "working_memory_note" in block


def test_an_empty_workspace_says_so(ws):
    ws.init()
    block = bootstrap_block(ws)
    assert "no dream has written MEMORY.md yet" in block and "(none pending)" in block


def test_a_line_longer_than_the_budget_is_dropped_whole(ws):
    ws.init()
    ws.memory_md.write_text("short first line\n" + "word " * 2_000 + "\nlast line\n")

    block = bootstrap_block(ws, 32_000)

    assert len(block) <= 3_200
    assert "word word" not in block and CUT_MARKER in block


def test_the_users_text_above_a_first_dream_is_cut_after_low_rank_sections():
    original = "\n".join(f"- hand-written fact {i}" for i in range(40))
    text = (
        f"{original}\n\n---\n\n<!-- Dream-generated working memory follows. Subsequent "
        "dream cycles will gradually integrate the above content. -->\n\n" + full_state()
    )

    roomy, roomy_cut = fit_state(text, 14_000)
    tight, tight_cut = fit_state(text, 4_000)

    assert len(text) > 14_000 and len(roomy) <= 14_000 and len(tight) <= 4_000
    # Roomy: the low-rank sections go, the user's text stays whole with its marker.
    assert "Emerging Skills" in roomy_cut and "hand-written" not in roomy_cut
    assert roomy.startswith(original + "\n\n---\n\n<!-- Dream-generated")
    # Tight: the user's text goes (it is in the seed crystals) before The Bond does.
    assert "hand-written" in tight_cut and "The Bond" not in tight_cut
    assert "hand-written fact" not in tight and "<!--" not in tight
    assert tight.startswith("# Working Memory State")


def test_bootstrap_json(mature, runner):
    result = runner.invoke(
        main,
        ["bootstrap", "--context-window", "64k", "--json", "-w", str(mature.root)],
        catch_exceptions=False,
    )
    data = json.loads(result.output)
    assert data["budget_chars"] == 4_000 and data["chars"] <= 4_000
    assert data["state_truncated"] is True and data["notes_total"] == 6
    assert data["text"].startswith("# Your Memory")


def test_a_bad_window_is_a_usage_error(mature, runner):
    result = runner.invoke(main, ["bootstrap", "--context-window", "lots", "-w", str(mature.root)])
    assert result.exit_code == 2 and "context window" in result.output
