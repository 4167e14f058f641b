"""`dream export --all` / `dream import`: a whole workspace moves between machines and backends.

The round trip goes SQLite -> file -> PostgreSQL -> file -> SQLite, through the CLI, and the
files must say the same thing apart from what docs/guides/export-import.md names (the export
time and the journal's own ids); search must find the same crystals on every side. Forgotten
text never leaves: the file holds tombstones only.
"""

from __future__ import annotations

import json
import stat
from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.agents.memory_tool import DreamerMemoryTool
from dreamer.cli import main
from dreamer.dream.cycle import run as run_dream
from dreamer.dream.synth.offline import OfflineSynthesizer

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

SECRET_WORD = "Quillfeather"  # said once, then forgotten: it must appear in no export
NOTES = [
    (0.9, "Ada's daughter is called Mira; she starts school in September."),
    (0.8, "Ada moved the billing service to the Frankfurt region."),
    (0.6, "The release train leaves every second Tuesday."),
    (0.7, "Ada prefers tea to coffee in the afternoon."),
    (0.5, f"Ada's old alarm password was {SECRET_WORD}."),
    (0.8, "The Q3 analytics report is due on Friday."),
]


def build(root, now) -> None:
    """A workspace with a dream, a frozen and an archived crystal, accesses, a note file and a
    forget: every kind of record an export carries."""
    with Workspace.open(root) as ws:
        ids = [
            ws.note(text, importance=imp, at=now - timedelta(hours=10 - i))
            for i, (imp, text) in enumerate(NOTES)
        ]
        run_dream(ws, now=now - timedelta(hours=3), force=True, synthesizer=OfflineSynthesizer())
        ws.search("billing region", now=now - timedelta(hours=2))
        ws.store.crystals.update_crystal(ids[0], {"lifecycle": "frozen"}, action="pinned", at=now)
        ws.store.crystals.update_crystal(
            ids[2], {"lifecycle": "archived", "parent_id": ids[1]}, action="merged", at=now
        )
        tool = DreamerMemoryTool(ws, clock=lambda: now)
        tool.call(
            {
                "command": "create",
                "path": "/memories/notes/kids.md",
                "file_text": "Mira likes drawing whales.",
            }
        )
        ws.forget([ids[4]], reason="asked by Ada", now=now + timedelta(minutes=5))


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def comparable(path) -> list[dict]:
    """The records minus what docs/guides/export-import.md says may differ (export time, ids)."""
    out = []
    for row in records(path):
        row = dict(row)
        if row["type"] == "header":
            row.pop("exported_at")
        if row["type"] == "dream":
            row.pop("id")
        out.append(row)
    return out


def hits(runner, root, query, env=None) -> list[tuple[int, str]]:
    done = runner.invoke(main, ["search", query, "-w", str(root), "--json"], env=env or {})
    assert done.exit_code == 0, done.output
    return [(hit["id"], hit["text"]) for hit in json.loads(done.output)]


def test_export_import_round_trip_through_postgresql_and_back(tmp_path, runner, now, pg_database):
    source = tmp_path / "laptop"
    build(source, now)
    first = tmp_path / "first.jsonl"
    done = runner.invoke(main, ["export", "--all", "--to", str(first), "-w", str(source)])
    assert done.exit_code == 0, done.output
    assert stat.S_IMODE(first.stat().st_mode) == 0o600  # memory is private
    kinds = [row["type"] for row in records(first)]
    assert kinds[0] == "header" and {
        "memory",
        "crystal",
        "tombstone",
        "dream",
        "note_files",
    } <= set(kinds)

    fleet = {"DREAM_STORE_URL": pg_database}
    server = tmp_path / "server"
    done = runner.invoke(main, ["import", str(first), "-w", str(server)], env=fleet)
    assert done.exit_code == 0, done.output
    # Every journal entry of the source comes back (how many a forget adds depends on whether
    # the dream wrote the forgotten note into MEMORY.md, which is the synthesizer's choice).
    dreams = kinds.count("dream")
    assert dreams >= 1
    summary = f"6 crystals, 1 tombstones (no text), {dreams} journal entries, MEMORY.md"
    assert summary in done.output
    second = tmp_path / "second.jsonl"
    done = runner.invoke(
        main, ["export", "--all", "--to", str(second), "-w", str(server)], env=fleet
    )
    assert done.exit_code == 0, done.output
    assert comparable(second) == comparable(first)

    back = tmp_path / "desktop"
    assert runner.invoke(main, ["import", str(second), "-w", str(back)]).exit_code == 0
    third = tmp_path / "third.jsonl"
    assert (
        runner.invoke(main, ["export", "--all", "--to", str(third), "-w", str(back)]).exit_code == 0
    )
    assert comparable(third) == comparable(first)
    assert (back / "MEMORY.md").read_text() == (source / "MEMORY.md").read_text()

    for query in ("billing Frankfurt", "Mira school", "analytics report"):
        found = hits(runner, source, query)
        assert found, query
        assert hits(runner, server, query, fleet) == found
        assert hits(runner, back, query) == found


@pytest.mark.slow
def test_forgotten_text_is_never_exported(tmp_path, runner, now):
    source = tmp_path / "ws"
    build(source, now)
    out, pages = tmp_path / "all.jsonl", tmp_path / "pages"
    done = runner.invoke(
        main,
        ["export", "--all", "--to", str(out), "--markdown", str(pages), "-w", str(source)],
    )
    assert done.exit_code == 0, done.output
    written = out.read_text(encoding="utf-8")
    assert SECRET_WORD.lower() not in written.lower()
    (tomb,) = [row for row in records(out) if row["type"] == "tombstone"]
    assert "text" not in tomb and tomb["reason"] == "asked by Ada"
    for page in pages.rglob("*"):
        if page.is_file():
            assert SECRET_WORD.lower() not in page.read_text(encoding="utf-8").lower()
    crystal = next(row for row in records(out) if row["type"] == "crystal")
    page = (pages / "crystals" / f"{crystal['id']}.md").read_text(encoding="utf-8")
    assert page.startswith("---\n") and f"importance: {crystal['importance']}" in page
    assert page.endswith(crystal["text"] + "\n")


def test_import_refuses_a_workspace_that_is_not_empty_and_a_file_that_is_no_export(
    tmp_path, runner, now
):
    source = tmp_path / "ws"
    build(source, now)
    out = tmp_path / "all.jsonl"
    assert (
        runner.invoke(main, ["export", "--all", "--to", str(out), "-w", str(source)]).exit_code == 0
    )
    again = runner.invoke(main, ["import", str(out), "-w", str(source)])
    assert (
        again.exit_code != 0 and again.output.startswith("Error:") and "not empty" in again.output
    )
    assert again.output.count("\n") == 1
    # The workspace holds what the file holds (as after an import stopped while it embedded;
    # its journal: the dream and the forget):
    # the refusal says so, and what to run instead.
    assert (
        "it already holds what this export holds (7 crystal ids, 2 journal rows and" in again.output
    )
    assert f"'dream reindex -w {source}'" in again.output
    with Workspace.open(source) as ws:
        ws.note("One more note after the export", at=now + timedelta(hours=1))
    other = runner.invoke(main, ["import", str(out), "-w", str(source)])
    assert "is not empty (it holds 8 crystal ids, 2 journal rows and MEMORY.md)" in other.output
    assert "import into a new one: dream import FILE -w NEW_FOLDER" in other.output

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "crystal"}\n')
    wrong = runner.invoke(main, ["import", str(bad), "-w", str(tmp_path / "new")])
    assert wrong.exit_code != 0 and "not a dreamer export" in wrong.output
    assert not (tmp_path / "new" / "memory" / "crystals.db").exists()


@pytest.mark.slow
def test_plain_export_still_writes_memory_md_only(tmp_path, runner, now):
    source = tmp_path / "ws"
    build(source, now)
    out = tmp_path / "state.md"
    done = runner.invoke(main, ["export", "--to", str(out), "-w", str(source)])
    assert done.exit_code == 0 and out.read_text() == (source / "MEMORY.md").read_text()


@pytest.mark.slow
def test_two_crystals_with_the_same_text_both_come_back(tmp_path, runner, now):
    with Workspace.open(tmp_path / "ws") as ws:
        first = ws.note("Ada's token is [secret:api-key]", at=now)
        second = ws.note("Ada's token is sk-live-not-yet-redacted", at=now)
        # What a later redaction does: the second now says what the first says.
        ws.store.forgetting.replace_text(
            second,
            "Ada's token is [secret:api-key]",
            embedding=None,
            embedder=None,
            action="redacted",
            detail={},
            at=now,
        )
    out = tmp_path / "all.jsonl"
    assert (
        runner.invoke(
            main, ["export", "--all", "--to", str(out), "-w", str(tmp_path / "ws")]
        ).exit_code
        == 0
    )
    done = runner.invoke(main, ["import", str(out), "-w", str(tmp_path / "new")])
    assert done.exit_code == 0, done.output
    with Workspace.open(tmp_path / "new", create=False) as ws:
        assert [(c.id, c.text) for c in ws.store.crystals.select()] == [
            (first, "Ada's token is [secret:api-key]"),
            (second, "Ada's token is [secret:api-key]"),
        ]
    again = tmp_path / "again.jsonl"
    runner.invoke(main, ["export", "--all", "--to", str(again), "-w", str(tmp_path / "new")])
    assert comparable(again) == comparable(out)
