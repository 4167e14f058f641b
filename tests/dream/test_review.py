"""Review mode: a dream writes memory/MEMORY.candidate.md; dream adopt / discard decide."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.cli import main
from dreamer.dream import review
from dreamer.dream.cycle import run

NOTES = [
    "Maya is the product lead at Acme and prefers short, direct answers",
    "Acme quarterly report is due 2026-03-20; Maya wants charts in section 2",
    "Deployed the staging build of the report generator; it worked first time",
]


@pytest.fixture
def reviewed(tmp_path, now):
    """A workspace in review mode with a committed first dream and three new notes."""
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        (root / "dreamer.toml").write_text(
            '[memory.dream]\nminChunksForDream = 1\nsynthesizer = "offline"\n', encoding="utf-8"
        )
    with Workspace.open(root) as ws:
        ws.note("Maya works from Lisbon and prefers tea over coffee", at=now - timedelta(days=1))
        assert run(ws, now=now - timedelta(hours=20)).committed
    with open(root / "dreamer.toml", "a", encoding="utf-8") as handle:
        handle.write("review = true\n")
    ws = Workspace.open(root)
    for i, text in enumerate(NOTES):
        ws.note(text, at=now - timedelta(hours=3 - i))
    yield ws
    ws.close()


def test_a_dream_in_review_mode_leaves_memory_md_and_writes_the_candidate(reviewed, now):
    before = reviewed.memory_md.read_bytes()
    result = run(reviewed, now=now)
    assert result.outcome == "candidate"
    assert reviewed.memory_md.read_bytes() == before
    candidate = review.path(reviewed).read_text(encoding="utf-8")
    assert "Lisbon" in candidate and "2026-03-20" in candidate
    entry = reviewed.store.journal.get_dream(result.dream_id)
    assert entry["outcome"] == "candidate" and entry["new_state"] == candidate
    diff = entry["inputs"]["review_diff"]
    assert diff.startswith("--- MEMORY.md\n+++ memory/MEMORY.candidate.md")
    assert any(line.startswith("+") and "2026-03-20" in line for line in diff.splitlines())
    # Consumed as a committed dream would: consolidated crystals, searchable, not pending.
    assert reviewed.store.crystals.count_new() == 0
    # No second candidate replaces the first while it waits.
    reviewed.note("Another note", at=now)
    again = run(reviewed, now=now + timedelta(hours=2))
    assert again.outcome == "skipped" and "a candidate waits for review" in again.reason
    assert review.path(reviewed).read_text(encoding="utf-8") == candidate


def test_review_shows_the_diff_and_adopt_commits_it(reviewed, now, runner):
    run(reviewed, now=now)
    candidate = review.path(reviewed).read_text(encoding="utf-8")
    shown = runner.invoke(main, ["review", "-w", str(reviewed.root)], catch_exceptions=False)
    assert shown.exit_code == 0 and "+++ memory/MEMORY.candidate.md" in shown.output
    adopted = runner.invoke(main, ["adopt", "-w", str(reviewed.root)], catch_exceptions=False)
    assert adopted.exit_code == 0, adopted.output
    assert reviewed.memory_md.read_text(encoding="utf-8") == candidate
    assert not review.path(reviewed).exists()
    newest = reviewed.store.journal.dream_entries(1)[0]
    assert newest["outcome"] == "committed" and "adopted the candidate" in newest["reason"]
    nothing = runner.invoke(main, ["adopt", "-w", str(reviewed.root)])
    assert nothing.exit_code == 2 and nothing.output.startswith("Error: no candidate waits")


def test_a_hand_edit_before_adopting_makes_adopt_refuse(reviewed, now, runner):
    run(reviewed, now=now)
    edited = reviewed.memory_md.read_text(encoding="utf-8") + "\n- Hand note: call Maya\n"
    reviewed.memory_md.write_text(edited, encoding="utf-8")
    result = runner.invoke(main, ["adopt", "-w", str(reviewed.root)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: MEMORY.md changed since dream #")
    assert reviewed.memory_md.read_text(encoding="utf-8") == edited  # nothing lost
    assert review.path(reviewed).exists()
    shown = runner.invoke(main, ["review", "-w", str(reviewed.root)]).output
    assert "'dream adopt' will refuse" in shown


def test_adopt_goes_through_the_guards(reviewed, now, runner):
    run(reviewed, now=now)
    before = reviewed.memory_md.read_bytes()
    review.path(reviewed).write_text("# Working Memory State\n", encoding="utf-8")
    result = runner.invoke(main, ["adopt", "-w", str(reviewed.root)])
    assert result.exit_code == 3 and "the guards reject the candidate" in result.output
    assert reviewed.memory_md.read_bytes() == before


@pytest.mark.slow
def test_discard_keeps_the_notes_as_crystals_unless_asked(reviewed, now, runner):
    run(reviewed, now=now)
    before = reviewed.memory_md.read_bytes()
    out = runner.invoke(main, ["discard", "-w", str(reviewed.root)], catch_exceptions=False)
    assert out.exit_code == 0 and not review.path(reviewed).exists()
    assert reviewed.memory_md.read_bytes() == before
    assert reviewed.store.crystals.count_new() == 0  # nothing returned to pending
    hits = reviewed.search("quarterly report charts", limit=3)
    assert any("2026-03-20" in hit.text for hit in hits)  # still a searchable crystal
    # A new candidate, discarded with the notes returned: they wait for the next dream.
    reviewed.note("Maya moved the Acme report deadline to 2026-03-24", at=now)
    run(reviewed, now=now + timedelta(hours=1))
    out = runner.invoke(main, ["discard", "--return-notes", "-w", str(reviewed.root)])
    assert out.exit_code == 0 and "1 notes wait for the next dream" in out.output
    assert reviewed.store.crystals.count_new() == 1


def test_a_forget_reaches_the_waiting_candidate(reviewed, now, runner):
    run(reviewed, now=now)
    assert "2026-03-20" in review.path(reviewed).read_text(encoding="utf-8")
    [crystal] = [c for c in reviewed.store.crystals.select() if "2026-03-20" in c.text]
    out = runner.invoke(main, ["forget", str(crystal.id), "-w", str(reviewed.root)])
    assert out.exit_code == 0, out.output
    assert "2026-03-20" not in review.path(reviewed).read_text(encoding="utf-8")
