"""`dream import` of a file that is not what `dream export --all` wrote: one `Error:` line that
names the line and the field, exit 2, nothing written to the workspace, the file unchanged."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.cli import main


@pytest.fixture
def exported(tmp_path, runner, now):
    """The export of a workspace with two notes, as records."""
    with Workspace.open(tmp_path / "src") as ws:
        ws.note("The billing service moved to Frankfurt.", at=now - timedelta(hours=2))
        ws.note("The release train leaves every second Tuesday.", at=now - timedelta(hours=1))
    out = tmp_path / "all.jsonl"
    done = runner.invoke(main, ["export", "--all", "--to", str(out), "-w", str(tmp_path / "src")])
    assert done.exit_code == 0, done.output
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def crystal(rows, n=0):
    return [row for row in rows if row["type"] == "crystal"][n]


def refused(tmp_path, runner, data: bytes, *words: str) -> str:
    """Import ``data``: one Error line holding ``words``, exit 2, no crystal stored."""
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data)
    target = tmp_path / "new"
    done = runner.invoke(main, ["import", str(path), "-w", str(target)])
    assert done.exit_code == 2, done.output
    errors = [line for line in done.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in done.output, done.output
    for word in words:
        assert word in done.output
    assert path.read_bytes() == data  # the file is only read
    db = target / "memory" / "crystals.db"
    if db.exists():
        with Workspace.open(target, create=False) as ws:
            assert ws.store.crystals.max_crystal_id() == 0
    return done.output


def jsonl(rows) -> bytes:
    return ("\n".join(json.dumps(row, ensure_ascii=True) for row in rows) + "\n").encode()


def test_a_binary_file_is_one_error_line(tmp_path, runner):
    refused(tmp_path, runner, bytes(range(256)) * 40, "not UTF-8 text", "dream export --all")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("text", None, ["line 2 (crystal)", "no 'text' field"]),
        ("text", 42, ["line 2 (crystal)", "'text' must be text, not 42"]),
        ("created_at", "last Tuesday-ish", ["'created_at' must be an ISO-8601 time"]),
        ("importance", "high", ["'importance' must be a number from 0 to 1"]),
        ("id", "1", ["'id' must be a whole number"]),
        ("text", "half a pair \ud800 here", ["lone surrogate (U+D800)"]),
    ],
)
def test_a_crystal_record_with_a_bad_field_is_one_error_line(
    tmp_path, runner, exported, field, value, words
):
    if value is None:
        del crystal(exported)[field]
    else:
        crystal(exported)[field] = value
    refused(tmp_path, runner, jsonl(exported), *words)


def test_a_journal_record_cannot_name_a_column_the_journal_has_not(tmp_path, runner, exported):
    exported.append(
        {"type": "dream", "started_at": "2026-01-01T00:00:00Z", "outcome": "committed"}
        | {"outcome) VALUES ('x'); --": 1}
    )
    refused(tmp_path, runner, jsonl(exported), "fields a journal entry has not")


def test_an_export_of_another_version_is_refused(tmp_path, runner, exported):
    for version in (0, 2, "1"):
        exported[0]["version"] = version
        refused(tmp_path, runner, jsonl(exported), f"export version {version}")


def test_a_crystal_that_would_land_under_another_id_is_refused(tmp_path, runner, exported):
    crystal(exported, 1)["id"] = 3  # ids 1, 3: the second would come in as 2
    refused(tmp_path, runner, jsonl(exported), "crystal 3 of the export came in as 2")


def test_the_untouched_export_imports(tmp_path, runner, exported):
    path = tmp_path / "good.jsonl"
    path.write_bytes(jsonl(exported))
    done = runner.invoke(main, ["import", str(path), "-w", str(tmp_path / "new")])
    assert done.exit_code == 0, done.output
    with Workspace.open(tmp_path / "new", create=False) as ws:
        assert [c.id for c in ws.store.crystals.select()] == [1, 2]
