"""What was made from forgotten text goes with it: a topic label, a pointer's keywords, a
journal summary, the bootstrap, the report and every export keep no forgotten word."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamer import Workspace, run_dream
from dreamer.cli import main
from dreamer.memory import forgetting

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

WORD = "quokkavelvet"
ATTIC = [
    f"Spent the morning in the {WORD} attic sorting boxes",
    f"The {WORD} attic needs a new lamp",
    f"Moved the old chairs into the {WORD} attic",
]
OTHER = [
    "Maya prefers concise answers with the code first",
    "The billing service deploys on Tuesdays",
    "Priya approves the releases of the payments team",
]


def holding(root: Path, word: str = WORD) -> list[str]:
    """The files under root whose bytes hold the word, any case."""
    needle = word.lower().encode()
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and needle in path.read_bytes().lower()
    )


def _label_case(root: Path, env: dict[str, str], now) -> None:
    with Workspace.open(root, environ=env) as ws:
        for i, text in enumerate([*ATTIC, *OTHER]):
            ws.note(text, at=now - timedelta(hours=6 - i))
        assert run_dream(ws, now=now, force=True).committed
        assert f"Mostly busy with: attic {WORD}" in ws.read_memory()  # a label made from them
    runner = CliRunner(env=env)
    w = ["-w", str(root)]
    assert runner.invoke(main, ["report", *w]).exit_code == 0
    assert "memory/report.html" in holding(root)
    result = runner.invoke(main, ["forget", "--search", WORD, "--yes", "--all", *w])
    assert result.exit_code == 0, result.output
    assert holding(root) == []
    exported = root.parent / "export.jsonl"  # not the working folder's dreamer-export.jsonl
    for command in (
        ["bootstrap"],
        ["export", "--all", "--to", str(exported)],
        ["log", "--json"],
        ["status"],
    ):
        shown = runner.invoke(main, [*command, *w])
        assert shown.exit_code == 0, shown.output
        assert WORD not in shown.output.lower(), command
    assert exported.is_file() and WORD not in exported.read_text(encoding="utf-8").lower()
    with Workspace.open(root, environ=env) as ws:
        rows = [ws.store.journal.get_dream(e["id"]) for e in ws.store.journal.dream_entries(50)]
        assert len(rows) == 2 and WORD not in json.dumps(rows, default=str).lower()
        memory = ws.read_memory()
        assert "Maya prefers concise answers" in memory  # what it did not hold stays
        assert "## The Phenotype" in memory  # the sections stay whatever the words


# (A test's name is in its tmp_path, and the report shows the path: no word of it here.)
@pytest.mark.slow
def test_a_label_made_from_forgotten_notes_leaves_with_them(tmp_path, now):
    _label_case(tmp_path / "ws", {}, now)


def test_on_postgresql_the_label_leaves_too(tmp_path, now, pg_database):
    from test_forget_traces import pg_dump

    _label_case(tmp_path / "ws", {"DREAM_STORE_URL": pg_database}, now)
    assert WORD.encode() not in pg_dump(pg_database)


def test_a_line_with_a_word_only_the_forgotten_held_is_dropped(ws, now):
    ws.note(ATTIC[0], at=now)
    ws.note(OTHER[0], at=now)
    forgetting.forget(ws, [1], reason="test", now=now)
    lost = forgetting.lost_words(ws.store, [ATTIC[0]])
    assert WORD in lost and "maya" not in lost
    derived = "\n".join(
        [
            "# Working Memory State",
            "_Last dream: 2026-03-12 14:30 UTC | Mood: morning calm_",  # the clock, not memory
            "## The Phenotype",
            f"- Mostly busy with: attic {WORD}.",
            "- Maya: code first",
            "## Crystal Pointers",
            f"- Past: attic work → search: `{WORD.upper()}s attic`",  # another form and case
            "## Emerging Skills",
            f"- {WORD.title()} sorting → Confidence: 40% | Occurrences: 2",
        ]
    )
    assert forgetting.scrub(derived, [ATTIC[0]], lost).split("\n") == [
        "# Working Memory State",
        "_Last dream: 2026-03-12 14:30 UTC | Mood: morning calm_",
        "## The Phenotype",
        "- Maya: code first",
        "## Crystal Pointers",
        "## Emerging Skills",
    ]


def test_a_forget_leaves_a_receipt_by_place_without_the_text(tmp_path, now):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        for i, text in enumerate([*ATTIC, *OTHER]):
            ws.note(text, at=now - timedelta(hours=6 - i))
    result = CliRunner().invoke(main, ["forget", "1", "2", "-w", str(root)])
    assert result.exit_code == 0, result.output
    receipt = result.output.split("\n")
    assert receipt[0] == "Forgot 2 crystal(s) (#1, #2). Removed, by place:"
    places = {line.split()[0] for line in receipt[1:] if line.strip()}
    assert {"crystals", "vectors", "full-text", "scratch", "MEMORY.md", "journal"} <= places
    assert "  scratch          2 pending note(s) removed" in receipt
    assert "  full-text index  2 entrie(s) removed" in receipt
    with Workspace.open(root) as ws:
        (entry,) = [e for e in ws.store.records.audit_entries() if e["action"] == "forget receipt"]
    assert entry["detail"]["forgotten"] == [1, 2] and entry["detail"]["scratch_notes"] == 2
    assert entry["detail"]["index_entries"] == 2 and entry["detail"]["lost_words"] >= 1
    assert WORD not in json.dumps(entry).lower() and WORD not in result.output


def test_a_line_the_person_wrote_keeps_a_word_it_shares_with_the_forgotten(ws, now):
    ws.memory_md.write_text("# Working Memory State\n\n## The Bond\n- Ada prefers short answers.\n")
    crystal_id = ws.note("Ada drinks her coffee black, no sugar", at=now)
    report = ws.forget([crystal_id], reason="asked", now=now)
    assert "- Ada prefers short answers." in ws.read_memory()  # "Ada" is theirs, not derived
    assert report.memory_lines == 0 and report.lost_words >= 3  # drinks, coffee, black, sugar


@pytest.mark.slow
def test_a_request_in_a_note_takes_the_label_and_the_old_journal_with_it(ws, now):
    for i, text in enumerate([*ATTIC, *OTHER]):
        ws.note(text, at=now - timedelta(hours=6 - i))
    first = run_dream(ws, now=now, force=True)
    assert f"Mostly busy with: attic {WORD}" in ws.read_memory()
    ws.note(f"Please forget the {WORD} attic", at=now + timedelta(hours=1))
    for i in range(5):  # enough new notes for a dream
        ws.note(f"Standup moved to room {i}", at=now + timedelta(hours=1, minutes=i + 1))
    second = run_dream(ws, now=now + timedelta(hours=2), force=True)
    [resolution] = ws.store.journal.get_dream(second.dream_id)["inputs"]["forget_requests"]
    assert resolution["forgotten"] == [1, 2, 3]
    assert WORD not in ws.read_memory().lower()
    assert WORD not in json.dumps(ws.store.journal.get_dream(first.dream_id)).lower()


def test_a_three_letter_word_and_another_form_of_a_lost_word_go_too(ws, now):
    ws.note("Tea with Kim on Friday", at=now)
    lost = forgetting.lost_words(ws.store, ["Zed drinks tea, Kim plays oboe"])
    assert lost == {"zed", "drinks", "plays", "oboe"}  # "tea" and "kim" are still held
    assert forgetting.holds_lost("Zed was drinking", frozenset({"drinks"}))
    assert forgetting.holds_lost("She was drinking", frozenset({"drinks"}))  # another form
    assert not forgetting.holds_lost("She was eating", frozenset({"drinks"}))
