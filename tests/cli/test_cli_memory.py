"""`dream init / note / search / get` end to end, and every kind of bad input refused cleanly."""

from __future__ import annotations

import json
import sqlite3

import pytest
from freezegun import freeze_time

from dreamer.cli import main
from dreamer.memory.scratch import parse

TRICKY = "first line\r\n  indented second\n\ttab, é, 日本語, 🦀, \u2028 sep\n- [not] an entry\n\n"


def dream(runner, *args, input=None):
    return runner.invoke(main, [str(arg) for arg in args], input=input, catch_exceptions=False)


@pytest.fixture
def root(tmp_path, runner):
    path = tmp_path / "ws"
    result = dream(runner, "init", "-w", path)
    assert result.exit_code == 0, result.output
    return path


def snapshot(root):
    """What is stored: scratch bytes and every crystal row (the DB bytes may be checkpointed)."""
    conn = sqlite3.connect(root / "memory" / "crystals.db")
    try:
        rows = conn.execute("SELECT * FROM crystals ORDER BY id").fetchall()
        audit = conn.execute("SELECT * FROM audit ORDER BY id").fetchall()
    finally:
        conn.close()
    return (root / "memory" / "scratch.md").read_bytes(), rows, audit


def test_init_creates_the_workspace(tmp_path, runner):
    root = tmp_path / "new" / "agent"
    result = dream(runner, "init", "-w", root)
    assert result.exit_code == 0
    assert result.output == f"Initialized dreamer workspace at {root}\n"
    assert (root / "memory" / "scratch.md").read_text(encoding="utf-8") == (
        "# Scratch Buffer (Working Memory WAL)\n\n"
    )
    assert (root / "memory" / "crystals.db").exists()
    again = dream(runner, "init", "-w", root)  # idempotent
    assert again.exit_code == 0


@freeze_time("2026-03-12T14:30:00Z")
def test_note_prints_the_id_and_search_finds_it(root, runner):
    result = dream(
        runner,
        "note",
        "User prefers dark mode",
        "--importance",
        "0.8",
        "--type",
        "directive",
        "-w",
        root,
    )
    assert result.exit_code == 0
    crystal_id = int(result.output)
    assert result.output == f"{crystal_id}\n"
    assert (
        (root / "memory" / "scratch.md")
        .read_text(encoding="utf-8")
        .endswith("- [2026-03-12T14:30:00Z] (importance: 0.8) User prefers dark mode\n")
    )
    second = int(dream(runner, "note", "Standup moved to 10am", "-w", root).output)
    assert second != crystal_id

    found = dream(runner, "search", "dark mode", "-w", root)
    assert found.exit_code == 0
    assert found.output.startswith(f"#{crystal_id}  score ")
    assert "    User prefers dark mode\n" in found.output
    assert "Standup" not in found.output

    as_json = json.loads(dream(runner, "search", "dark mode", "--json", "-w", root).output)
    assert as_json[0]["id"] == crystal_id
    assert as_json[0]["text"] == "User prefers dark mode"
    assert {"score", "source", "created_at", "semantic_type"} <= set(as_json[0])

    got = json.loads(dream(runner, "get", crystal_id, "--json", "-w", root).output)
    assert (got["text"], got["importance"], got["semantic_type"], got["created_at"]) == (
        "User prefers dark mode",
        0.8,
        "directive",
        "2026-03-12T14:30:00Z",
    )
    assert got["access_count"] == 2  # both searches returned it

    plain = dream(runner, "get", crystal_id, "-w", root)
    assert f"id: {crystal_id}\n" in plain.output
    assert plain.output.endswith("text:\nUser prefers dark mode\n")


def test_note_from_stdin_comes_back_byte_for_byte(root, runner):
    result = runner.invoke(
        main, ["note", "-", "-w", str(root)], input=TRICKY.encode("utf-8"), catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    crystal_id = int(result.output)
    got = json.loads(dream(runner, "get", crystal_id, "--json", "-w", root).output)
    assert got["text"] == TRICKY
    assert [note.text for note in parse(root / "memory" / "scratch.md").notes] == [TRICKY]
    hits = json.loads(dream(runner, "search", "indented tab 日本語", "--json", "-w", root).output)
    assert hits[0]["id"] == crystal_id and hits[0]["text"] == TRICKY


def test_note_with_at_keeps_the_time(root, runner):
    crystal_id = dream(
        runner, "note", "Launched v2", "--at", "2026-01-02T03:04:05+02:00", "-w", root
    ).output.strip()
    got = json.loads(dream(runner, "get", crystal_id, "--json", "-w", root).output)
    assert got["created_at"] == "2026-01-02T01:04:05Z"


def test_search_with_no_match_says_so(root, runner):
    result = dream(runner, "search", "nothing stored yet", "-w", root)
    assert result.exit_code == 0
    assert result.output == "No memories match 'nothing stored yet'.\n"
    assert json.loads(dream(runner, "search", "nothing", "--json", "-w", root).output) == []


def test_search_limit_and_type(root, runner):
    for i in range(5):
        dream(runner, "note", f"Roadmap item {i} for the launch", "-w", root)
    hits = json.loads(
        dream(runner, "search", "roadmap launch", "--limit", "2", "--json", "-w", root).output
    )
    assert len(hits) == 2
    conversations = json.loads(
        dream(runner, "search", "roadmap", "--type", "conversations", "--json", "-w", root).output
    )
    assert conversations == []


# --- bad input: one line naming the fix, non-zero exit, nothing stored changes ----------------


@pytest.mark.parametrize(
    ("args", "input", "message"),
    [
        (["note", ""], None, "the note is empty"),
        (["note", "   \n\t "], None, "the note is empty"),
        (["note", "-"], b"  \n\n", "the note is empty"),
        (["note", "-"], b"caf\xe9 latin-1", "not UTF-8"),
        (["note", "x", "--importance", "1.5"], None, "from 0 to 1"),
        (["note", "x", "--importance", "-0.1"], None, "from 0 to 1"),
        (["note", "x", "--importance", "nan"], None, "from 0 to 1"),
        (["note", "x", "--type", "opinion"], None, "experience, directive, world_fact"),
        (["note", "x", "--at", "yesterday"], None, "2026-03-12T14:30:00Z"),
        (["note", "x", "--at", "2026-02-30T10:00:00Z"], None, "ISO-8601"),
        (["get", "999"], None, "dream search"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(root, runner, args, input, message):
    dream(runner, "note", "already stored", "-w", root)
    before = snapshot(root)
    result = runner.invoke(main, [*args, "-w", str(root)], input=input)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert snapshot(root) == before


def test_workspace_that_is_a_file(tmp_path, runner):
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("mine\n")
    for args in (["note", "hello"], ["init"], ["search", "hello"], ["get", "1"], ["config"]):
        result = runner.invoke(main, [*args, "-w", str(not_a_folder)])
        assert result.exit_code == 1, (args, result.output)
        assert (
            result.stderr == f"Error: {not_a_folder} is a file, not a folder; pass a folder "
            "with -w PATH\n"
        )
    assert not_a_folder.read_text() == "mine\n"


def test_missing_workspace_for_reading_names_dream_init(tmp_path, runner):
    absent = tmp_path / "absent"
    result = runner.invoke(main, ["search", "x", "-w", str(absent)])
    assert result.exit_code == 1
    assert f"dream init -w {absent}" in result.stderr and result.stderr.count("\n") == 1
    assert not absent.exists()  # reading never creates a workspace


@pytest.mark.parametrize("blocker", ["memory", "memory/scratch.md", "memory/crystals.db"])
def test_unusable_workspace_parts(tmp_path, runner, blocker):
    """Running as root, permissions do not stop us; a folder where a file belongs (or the
    reverse) does."""
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    target = root / blocker
    if blocker == "memory":
        (root / "memory").rmdir()
        target.write_text("not a folder")
    else:
        target.mkdir()
    result = runner.invoke(main, ["note", "hello", "-w", str(root)])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert str(target) in result.stderr or str(root) in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("garbage", [b"\x00garbage" * 500, b"x"])
def test_corrupt_database_is_refused_and_left_alone(root, runner, garbage):
    dream(runner, "note", "kept in the scratch", "-w", root)
    db = root / "memory" / "crystals.db"
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    db.write_bytes(garbage)
    scratch_before = (root / "memory" / "scratch.md").read_bytes()
    for args in (["note", "another"], ["search", "kept"], ["get", "1"]):
        result = runner.invoke(main, [*args, "-w", str(root)])
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
        assert "move it aside" in result.stderr
        assert db.read_bytes() == garbage
        assert (root / "memory" / "scratch.md").read_bytes() == scratch_before


@pytest.mark.parametrize("crystal_id", ["0", "99999999999999999999", "9223372036854775808"])
def test_get_of_an_impossible_id_is_not_found(root, runner, crystal_id):
    result = runner.invoke(main, ["get", crystal_id, "-w", str(root)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: no crystal with id {crystal_id}; find ids with 'dream search QUERY'\n"
    )


def test_search_limit_is_bounded(root, runner):
    result = runner.invoke(
        main, ["search", "x", "--limit", "99999999999999999999", "-w", str(root)]
    )
    assert result.exit_code == 2 and "1<=x<=1000" in result.output
