"""A dream's input fits its token budget whatever is pending; what does not fit waits.

Must show (issue: bounded dream inputs): 1,000 pending notes of 2 KB and one 2 MB note make a
Claude request (through a local fake Messages API server that records it) within the
configured budget; the dream commits; the notes it could not take are still pending, back in
the scratch, and the next dream takes them.
"""

from __future__ import annotations

import json
from datetime import timedelta

import anthropic
import pytest
from click.testing import CliRunner
from fake_anthropic import FakeAnthropic

from dreamer.cli import main
from dreamer.dream.cycle import run
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.memory import scratch
from dreamer.memory.scratch import Note
from dreamer.memory.workspace import Workspace
from dreamer.store import NewCrystal
from dreamer.support import tokens

ANSWER = {
    "active_context": "- Working through a backlog of imported notes, batch by batch; "
    "a 2 MB log paste is in the crystals."
}


def _note(i: int) -> str:
    words = " ".join(f"item{i}-{j}" for j in range(230))  # ~2 KB, every note different
    return f"Imported note {i} about batch {i % 17}: {words}"


def _backlog(root):
    root.mkdir()
    (root / "dreamer.toml").write_text('"memory.search.embedder" = "hashing"\n')
    return Workspace.open(root, environ={})


@pytest.mark.slow
def test_a_backlog_and_a_huge_note_fit_the_budget_and_wait_their_turn(tmp_path, now):
    fake = FakeAnthropic()
    with _backlog(tmp_path / "ws") as ws:
        start = now - timedelta(days=3)
        for i in range(1000):
            ws.note(_note(i), importance=0.5, at=start + timedelta(minutes=i))
        huge = "A 2 MB paste of a log. " + "x" * 2_000_000
        # Far past a note's limit today: written the way older versions (or a store import)
        # could, straight to the scratch and the store.
        moment = now - timedelta(minutes=5)
        ws.scratch.append(Note(text=huge, at=moment, importance=0.9))
        ws.index(NewCrystal(huge, importance=0.9, at=moment, source="scratch"))
        assert ws.store.crystals.count_new() == 1001
        budget = ws.settings.input_tokens
        fake.tool_use(TOOL_NAME, ANSWER).tool_use(TOOL_NAME, ANSWER)
        with fake.serve() as base_url:
            client = anthropic.Anthropic(api_key="k", base_url=base_url, max_retries=0)
            synth = ClaudeSynthesizer(ws.settings, client=client)
            first = run(ws, now=now, synthesizer=synth)
            sent = fake.requests[0].json["messages"][0]["content"][0]["text"]

            assert first.committed
            # The data blocks fit the budget, and the whole message (with its template) too.
            assert first.inputs["tokens"]["total"] <= budget
            assert tokens.count(sent) <= budget + 1_000
            assert len(fake.requests[0].body) < 400_000  # not ~2 MB of note
            # The huge note went in clipped, with a marker naming the crystal that holds it.
            assert "[clipped: " in sent and "memory_get(" in sent
            assert sent.count("Imported note 999 ") == 1  # each note once
            # What did not fit is summarised by count and source, and stays pending.
            left = first.left_pending
            assert left > 900 and first.inputs["left_pending"] == {"scratch": left}
            assert f"{left} more pending notes did not fit" in sent
            assert ws.store.crystals.count_new() == left
            waiting = scratch.parse(ws.scratch_path).notes
            assert len(waiting) == left  # their scratch lines are back for the next dream
            assert not scratch.rotated_path(ws.scratch_path).exists()

            second = run(ws, now=now + timedelta(hours=2), synthesizer=synth)
        assert second.committed
        assert set(second.consumed) and not set(second.consumed) & set(first.consumed)
        assert ws.store.crystals.count_new() == left - len(second.consumed)
        assert len(scratch.parse(ws.scratch_path).notes) == ws.store.crystals.count_new()


def test_dry_run_json_shows_the_input_tokens_by_block(tmp_path, now):
    root = tmp_path / "ws"
    with _backlog(root) as ws:
        for i in range(6):
            ws.note(f"Shipped feature {i} of the billing export", at=now - timedelta(hours=i))
    result = CliRunner().invoke(
        main, ["run", "--dry-run", "--json", "-w", str(root)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    counts = data["inputs"]["tokens"]
    for block in ("state", "notes", "insights", "hormones", "instructions", "niche", "left"):
        assert isinstance(counts[block], int)
    assert counts["total"] == sum(v for k, v in counts.items() if k != "total")
    assert counts["total"] <= data["inputs"]["budget"] == 24_000
    # Near-duplicates ride along with the note they repeat: covered, not sent twice.
    assert data["inputs"]["given"] + data["inputs"]["covered"] == 6
    assert data["inputs"]["left_pending"] == {}


@pytest.mark.slow
def test_a_20_kb_hand_written_active_context_commits_and_every_line_is_searchable(tmp_path, now):
    root = tmp_path / "ws"
    lines = [
        f"- Client {i}: {name} renewal call, quote {1000 + i} for the {kind} plan"
        for i, (name, kind) in enumerate(
            (f"Northwind{i}", ("basic", "team", "enterprise")[i % 3]) for i in range(290)
        )
    ]
    body = "\n".join(lines)
    assert len(body) >= 20_000
    with _backlog(root) as ws:
        ws.memory_md.write_text(
            "# Working Memory State\n\n## The Bond\n- Ada runs a small consultancy.\n\n"
            f"## Active Context\n{body}\n"
        )
        for i in range(5):
            ws.note(f"Sent renewal quote {i} to a client", at=now - timedelta(hours=i))
        result = run(ws, now=now)  # offline
        assert result.committed, result.report
        assert result.inputs["overflow"]["Active Context"] > 0
        for line in lines:
            text = line.removeprefix("- ")
            hits = ws.search(text, now=now, limit=5)
            assert any(text in hit.text for hit in hits), text
        # And a second dream still commits (no workspace stuck on its own budgets).
        for i in range(5):
            ws.note(f"Followed up renewal {i}", at=now + timedelta(hours=1, minutes=i))
        assert run(ws, now=now + timedelta(hours=2)).committed
