"""`dream bench staleness`: the echo model, what counts as a stale belief, each backend's run."""

from __future__ import annotations

import json

import pytest
from dreamer_bench import staleness
from dreamer_bench.staleness import (
    CASES,
    ECHO_CHARS,
    Case,
    echo_state,
    format_report,
    run,
    stated_as_current,
    without_pointers,
)

PROMPT = """Dream time: now.
<current_state>
# Working Memory State

## The Bond
- Lena lives in Leeds.

## Active Context
- Lena's commute is the 07:40 train.
</current_state>

<notes count="2">
#4 2026-06-03 10:00 world_fact .70: Lena has moved to Bristol.
#5 2026-06-03 11:00 experience .70 seen 2, last 2026-06-03 11:30: Lena joined a climbing gym.
  a later line of that note
</notes>
"""

SMALL = (
    Case(
        "moved",
        ("Lena lives in Leeds.", "Lena's gym is on Kirkstall Road."),
        "Lena has moved to Bristol.",
        ("Leeds", "Kirkstall Road"),
        ("Bristol",),
    ),
)


def test_the_echo_keeps_active_context_and_adds_each_note_once():
    answer = echo_state(PROMPT)
    assert list(answer) == ["active_context"]  # the other sections are left out: kept
    assert answer["active_context"].split("\n") == [
        "- Lena's commute is the 07:40 train.",
        "- Lena has moved to Bristol.",
        "- Lena joined a climbing gym.",
    ]
    assert echo_state(PROMPT) == answer  # deterministic
    assert echo_state("no state at all") == {"active_context": "- (nothing yet)"}


def test_the_echo_drops_its_oldest_lines_when_the_section_is_full():
    many = "\n".join(
        f"#{i} 2026-06-03 10:00 experience .70: note number {i} " + "x" * 80 for i in range(100)
    )
    lines = echo_state(f"<current_state>\n</current_state>\n<notes>\n{many}\n</notes>")
    kept = lines["active_context"].split("\n")
    assert sum(len(line) + 1 for line in kept) <= ECHO_CHARS
    assert kept[-1].startswith("- note number 99 ") and not any("number 0 " in k for k in kept)


def test_a_belief_marked_as_past_or_in_a_pointer_is_not_current():
    text = (
        "- Lena lives in Leeds.\n- Moved from Leeds to Bristol.\n- Past: Leeds flat → search: `x`"
    )
    assert stated_as_current(text, "Leeds") == [
        "- Lena lives in Leeds.",
        "- Past: Leeds flat → search: `x`",
    ]
    assert stated_as_current(without_pointers(text), "Leeds") == ["- Lena lives in Leeds."]
    assert stated_as_current("- Leedsbury", "Leeds") == []  # whole words


def test_seven_cases_in_other_words_each_with_stale_and_new_facts():
    assert len(CASES) >= 6 and len({c.name for c in CASES}) == len(CASES)
    for case in CASES:
        assert case.stale and case.new
        earlier = " ".join(case.before)
        assert all(stated_as_current(earlier, p) for p in case.stale), case.name
        assert not any(stated_as_current(case.change, p) for p in case.stale), case.name


def test_offline_and_both_api_backends_run_through_the_echo(tmp_path):
    results = run(("offline", "claude", "openai"), parent=tmp_path, cases=SMALL)
    assert [r.backend for r in results] == ["offline", "claude", "openai"]
    for result in results:
        (case,) = result.cases
        assert case.dreams == ["committed", "committed"], (result.backend, case.dreams)
        assert case.kept_new == 1 and case.stale == 2
        assert set(case.left_memory) <= {"Leeds", "Kirkstall Road"}
    report = format_report(results)
    assert report.splitlines()[0].split()[:2] == ["backend", "cases"]
    assert any(line.startswith("claude ") for line in report.splitlines())
    assert not list(tmp_path.iterdir())  # the temporary workspaces are gone


def test_the_api_backends_reach_the_fake_and_write_what_it_echoed(tmp_path, monkeypatch):
    seen: list[str] = []
    original = staleness._answer

    def spy(recorded):
        seen.append(recorded.path)
        return original(recorded)

    monkeypatch.setattr(staleness, "_answer", spy)
    (claude, openai) = run(("claude", "openai"), parent=tmp_path, cases=SMALL)
    assert "/v1/messages" in seen and "/v1/chat/completions" in seen
    # The echo never drops a line, so the old city it was handed is still there.
    assert "Leeds" in claude.cases[0].left_memory and "Leeds" in openai.cases[0].left_memory


def test_claude_code_is_skipped_without_a_cli(tmp_path):
    (result,) = run(("claude-code",), parent=tmp_path, cases=SMALL, cli=None)
    assert result.cases == [] and "DREAM_CLAUDE_CLI" in result.skipped
    assert "claude-code  skipped: no Claude Code CLI" in format_report([result])


@pytest.mark.cli
def test_claude_code_runs_the_real_cli_against_the_echo(tmp_path):
    from claude_cli import cli_path

    (result,) = run(("claude-code",), parent=tmp_path, cases=SMALL, cli=cli_path())
    (case,) = result.cases
    assert case.dreams == ["committed", "committed"] and case.kept_new == 1


def test_the_command_prints_json_for_one_backend(tmp_path, runner):
    from dreamer.cli import main

    done = runner.invoke(
        main, ["bench", "staleness", "--backend", "offline", "--json", "-w", str(tmp_path)]
    )
    assert done.exit_code == 0, done.output
    (backend,) = json.loads(done.output)["backends"]
    assert backend["backend"] == "offline" and len(backend["cases"]) == len(CASES)
    assert 0 <= backend["shares"]["memory"] <= 1 and backend["shares"]["new"] == 1.0
