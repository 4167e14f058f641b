"""The scratch write-ahead log behind ``Workspace.scratch``: the same promises whether it is
``memory/scratch.md`` (SQLite workspaces) or rows of the shared PostgreSQL store (fleets), and,
on PostgreSQL, what the rows add: fencing by lease token, no shared folder, and a scratch file
from before the move carried over without a note lost or doubled."""

from __future__ import annotations

import shutil
import threading
from datetime import timedelta

import pytest

from dreamer import Workspace, run_dream
from dreamer.errors import ScratchError
from dreamer.memory import scratch
from dreamer.memory.scratch import Note
from dreamer.service import worker as workers
from dreamer.store import content_hash, open_jobs, open_store
from dreamer.support.times import utc_now

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

TTL = timedelta(minutes=2)


def _environ(request: pytest.FixtureRequest) -> dict[str, str]:
    if request.param == "file":
        return {}
    return {"DREAM_STORE_URL": request.getfixturevalue("pg_database")}


@pytest.fixture(params=["file", pytest.param("postgres", marks=pytest.mark.postgres)])
def environ(request):
    """The environment a workspace is opened with: its scratch a file, or rows."""
    return _environ(request)


@pytest.fixture
def ws(environ, tmp_path):
    with Workspace.open(tmp_path / "ws", environ=environ) as opened:
        opened.init()
        yield opened


def texts(notes: list[scratch.Note]) -> list[str]:
    return [note.text for note in notes]


def test_the_kind_of_log_follows_the_store(ws, environ):
    expected = "RowScratch" if environ else "FileScratch"
    assert type(ws.scratch).__name__ == expected


def test_notes_come_back_in_order_and_render_as_the_file_does(ws, now):
    ws.scratch.append(Note(text="first", at=now, importance=0.8))
    ws.scratch.append(
        Note(
            text="second line one\nline two: ünïcode ✓",
            at=now + timedelta(minutes=1),
            importance=0.5,
        )
    )
    ws.scratch.append(
        Note(
            text="- [2026-01-01T00:00:00Z] (importance: 0.9) looks like an entry",
            at=now,
            importance=1.0,
        )
    )
    notes = ws.scratch.notes()
    assert texts(notes) == [
        "first",
        "second line one\nline two: ünïcode ✓",
        "- [2026-01-01T00:00:00Z] (importance: 0.9) looks like an entry",
    ]
    assert [(n.at, n.importance) for n in notes] == [
        (now, 0.8),
        (now + timedelta(minutes=1), 0.5),
        (now, 1.0),
    ]
    # The scratch.md view parses back to the same notes (the MCP resource serves it).
    parsed = scratch.parse_text(ws.scratch.text())
    assert [(n.at, n.importance, n.text) for n in parsed.notes] == [
        (n.at, n.importance, n.text) for n in notes
    ]
    assert parsed.stray == []


def test_a_note_appended_during_a_dream_waits_for_the_next_one(ws, now):
    for number in range(3):
        ws.scratch.append(Note(text=f"before {number}", at=now, importance=0.5))
    with ws.lock():
        taken = ws.scratch.rotate()
        ws.scratch.append(Note(text="during", at=now, importance=0.5))
        assert texts(taken) == ["before 0", "before 1", "before 2"]
        assert texts(ws.scratch.notes()) == ["during"]
        assert sorted(texts(ws.scratch.waiting())) == ["before 0", "before 1", "before 2", "during"]
        # The dream failed: its notes go back in front of the one that came meanwhile.
        assert ws.scratch.restore() == 3
        assert ws.scratch.restore() == 0  # twice is once
    assert texts(ws.scratch.notes()) == ["before 0", "before 1", "before 2", "during"]


def test_a_committed_dream_keeps_only_the_notes_it_could_not_take(ws, now):
    for text in ("taken", "left for later", "taken too"):
        ws.scratch.append(Note(text=text, at=now, importance=0.5))
    with ws.lock():
        ws.scratch.rotate()
        ws.scratch.append(Note(text="during", at=now, importance=0.5))
        back = ws.scratch.settle(lambda note: note.text == "left for later")
    assert back == 1
    assert texts(ws.scratch.notes()) == ["left for later", "during"]
    assert texts(ws.scratch.waiting()) == ["left for later", "during"]  # nothing rotated left


def test_a_rewrite_reaches_pending_and_rotated_notes_and_a_dry_run_changes_nothing(ws, now):
    for text in ("keep me", "token sk-live-123", "drop me"):
        ws.scratch.append(Note(text=text, at=now, importance=0.5))
    with ws.lock():
        ws.scratch.rotate()
        ws.scratch.append(Note(text="another sk-live-123", at=now, importance=0.5))

        def change(text: str) -> str | None:
            return None if text == "drop me" else text.replace("sk-live-123", "[SECRET]")

        before = sorted(texts(ws.scratch.waiting()))
        assert ws.scratch.rewrite(change, dry_run=True) == 3
        assert sorted(texts(ws.scratch.waiting())) == before
        assert ws.scratch.rewrite(change) == 3
        assert ws.scratch.restore() == 2
    assert texts(ws.scratch.notes()) == ["keep me", "token [SECRET]", "another [SECRET]"]


def test_the_stamp_moves_when_the_notes_do(ws, now):
    first = ws.scratch.stamp()
    ws.scratch.append(Note(text="one", at=now, importance=0.5))
    second = ws.scratch.stamp()
    assert second != first and ws.scratch.modified() is not None
    ws.scratch.rewrite(lambda text: text + " (edited)")
    assert ws.scratch.stamp() != second


def test_notes_from_many_writers_during_dreams_are_all_kept(environ, tmp_path, now):
    root = tmp_path / "ws"
    with Workspace.open(root, environ=environ) as ws:
        ws.init()
    acknowledged: list[str] = []
    guard = threading.Lock()

    def write(writer: int) -> None:
        with Workspace.open(root, environ=environ) as own:  # its own connection, as a process
            for number in range(25):
                text = f"writer {writer} note {number} about the Juniper release"
                own.note(text, at=now)
                with guard:
                    acknowledged.append(text)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(3)]
    for thread in threads:
        thread.start()
    outcomes = []
    with Workspace.open(root, environ=environ) as ws:
        for hour in range(1, 4):
            outcomes.append(run_dream(ws, now=now + timedelta(hours=hour), force=True).outcome)
        for thread in threads:
            thread.join()
        outcomes.append(run_dream(ws, now=now + timedelta(hours=5), force=True).outcome)
        assert set(outcomes) == {"committed"}
        assert len(acknowledged) == 75
        missing = [
            t for t in acknowledged if ws.store.crystals.find_by_hash(content_hash(t)) is None
        ]
        assert missing == []
        assert ws.scratch.waiting() == ws.scratch.notes()  # no dream holds a note any more


# --- PostgreSQL only ------------------------------------------------------------------------


@pytest.fixture
def pg_ws(pg_database, tmp_path):
    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}) as opened:
        opened.init()
        yield opened


def test_the_rows_are_the_log_and_no_file_is_written(pg_ws, now):
    pg_ws.note("Ada moved the launch to Thursday", at=now)
    assert texts(pg_ws.scratch.notes()) == ["Ada moved the launch to Thursday"]
    assert not pg_ws.scratch_path.exists()


def test_a_dream_takes_the_scratch_only_under_the_lock(pg_ws, now):
    pg_ws.scratch.append(Note(text="one", at=now, importance=0.5))
    with pytest.raises(ScratchError, match="workspace lock"):
        pg_ws.scratch.rotate()
    with pytest.raises(ScratchError, match="workspace lock"):
        pg_ws.scratch.settle(lambda note: False)


def test_a_worker_whose_lease_passed_on_never_touches_the_new_holder_s_notes(
    pg_ws, pg_database, tmp_path, now
):
    for number in range(3):
        pg_ws.note(f"Juniper milestone {number}", at=now)
    other = open_store(tmp_path / "o.db", url=pg_database, key=str(pg_ws.root.resolve()))
    try:
        with pg_ws.lock():  # the stale worker: it rotates, then stalls past its lease
            taken = pg_ws.scratch.rotate()
            assert len(taken) == 3
            token = other.acquire_lease("other", utc_now() + timedelta(hours=1), TTL)
            assert token is not None
            # The new holder recovers the stale dream's notes and takes them for its own.
            assert other.scratch_restore(token) == 3
            assert len(other.scratch_rotate(token)) == 3
            # The stale worker fails: putting back and settling touch nothing of the new one's.
            assert pg_ws.scratch.restore() == 0
            assert pg_ws.scratch.settle(lambda note: False) == 0
            assert len(other.scratch_rows(pending=False)) == 3
            # A note written meanwhile stays pending for whoever dreams next.
            pg_ws.scratch.append(Note(text="during", at=now, importance=0.5))
            assert texts(pg_ws.scratch.notes()) == ["during"]
        assert other.scratch_settle(token, []) == 0  # the new holder committed
    finally:
        other.close()
    assert texts(pg_ws.scratch.waiting()) == ["during"]


def test_a_machine_without_the_folder_dreams_the_notes_written_elsewhere(
    pg_database, tmp_path, now
):
    environ = {"DREAM_STORE_URL": pg_database}
    root = tmp_path / "ws"
    with Workspace.open(root, environ=environ) as ws:
        ws.init()
        for number in range(6):
            ws.note(f"Project Juniper milestone {number} shipped to staging", at=now)
        assert run_dream(ws, now=now + timedelta(hours=1)).outcome == "committed"
        first = ws.store.read_state()[0]
        ws.note("Ada will present the Juniper retrospective on Friday", importance=0.9, at=now)
        ws.note("The Juniper staging database moved to the new cluster", at=now)
        ws.note("Marco owns the Juniper rollback plan from now on", at=now)
    shutil.rmtree(root)  # another machine: the same path, nothing in it
    with Workspace.open(root, environ=environ) as elsewhere:
        result = run_dream(elsewhere, now=now + timedelta(hours=3), force=True)
        assert result.outcome == "committed" and result.notes == 3
        entry = elsewhere.store.journal.get_dream(result.dream_id)
        assert entry["old_state"] == first  # the state row, not an empty file, was the old state
        text = elsewhere.store.read_state()[0]
        assert "retrospective" in text
        assert elsewhere.memory_md.read_text(encoding="utf-8") == text
        assert elsewhere.scratch.waiting() == []


def test_a_stale_memory_file_is_not_taken_for_the_state(pg_ws, now):
    for number in range(6):
        pg_ws.note(f"Project Juniper milestone {number} shipped to staging", at=now)
    run_dream(pg_ws, now=now + timedelta(hours=1))
    committed = pg_ws.store.read_state()[0]
    pg_ws.memory_md.write_text("# an old copy from before the last dream\n", encoding="utf-8")
    assert pg_ws.read_memory() == committed
    for number in range(3):
        pg_ws.note(f"Juniper follow-up {number} scheduled", at=now)
    result = run_dream(pg_ws, now=now + timedelta(hours=3), force=True)
    assert pg_ws.store.journal.get_dream(result.dream_id)["old_state"] == committed


def test_a_worker_on_a_machine_without_the_folder_runs_the_job(pg_database, tmp_path, now):
    environ = {"DREAM_STORE_URL": pg_database}
    root = tmp_path / "agent"
    with Workspace.open(root, environ=environ) as ws:
        ws.init()
        for number in range(6):
            ws.note(f"Project Juniper milestone {number} shipped", at=now)
    with open_jobs(pg_database) as queue:
        workers.add_workspaces(queue, [root], now, environ=environ)
        shutil.rmtree(root)
        worker = workers.Worker(
            queue, owner="elsewhere", clock=lambda: now, lease=TTL, environ=environ
        )
        assert worker.run(until_idle=True) == 2
    assert {(o.claim.kind, o.outcome) for o in worker.done} == {
        ("consolidate", "done"),
        ("dream", "committed"),
    }
    with Workspace.open(root, create=False, environ=environ) as ws:
        assert ws.memory_md.read_text(encoding="utf-8") == ws.store.read_state()[0]
        assert "Juniper" in ws.memory_md.read_text(encoding="utf-8")


def test_a_scratch_file_from_before_the_move_is_carried_over_once(pg_database, tmp_path, now):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:  # on SQLite, as it began
        ws.init()
        ws.note("written before the move", at=now)
        with ws.lock():
            ws.scratch.rotate()  # a dream was interrupted, too
        ws.note("written after the interrupted dream", at=now)
    with ws.scratch_path.open("a", encoding="utf-8") as handle:
        handle.write("a line the user typed by hand\n")
    saved = ws.scratch_path.read_bytes()
    environ = {"DREAM_STORE_URL": pg_database}
    with Workspace.open(root, environ=environ) as moved:
        moved.init()
        assert texts(moved.scratch.notes()) == [
            "written before the move",
            "written after the interrupted dream",
        ]
        assert not scratch.rotated_path(moved.scratch_path).exists()
        left = scratch.parse(moved.scratch_path)
        assert left.notes == [] and [line for _, line in left.stray] == [
            "a line the user typed by hand"
        ]
        # A crash after the rows were written but before the file was: no note twice.
        moved.scratch_path.write_bytes(saved)
        assert moved.scratch.restore() == 0
        assert len(moved.scratch.notes()) == 2


def test_moving_a_workspace_to_postgres_says_what_stays_behind(runner, pg_database, tmp_path, now):
    from dreamer.cli import main

    root = tmp_path / "ws"
    with Workspace.open(root) as ws:  # months on SQLite
        ws.init()
        ws.note("Ada prefers the staging deploys on Tuesdays", at=now)
    moved = runner.invoke(main, ["status", "-w", str(root)], env={"DREAM_STORE_URL": pg_database})
    assert moved.exit_code == 0, moved.output
    assert "crystals.db holds this workspace's earlier SQLite memory" in moved.stderr
    assert "Unset memory.store.url" in moved.stderr
    # The pending note moved with the scratch: the next dream makes it a crystal, and once the
    # store has crystals the notice stops.
    dreamt = runner.invoke(
        main, ["run", "-w", str(root), "--force"], env={"DREAM_STORE_URL": pg_database}
    )
    assert dreamt.exit_code == 0, dreamt.output
    found = runner.invoke(
        main, ["search", "-w", str(root), "staging deploys"], env={"DREAM_STORE_URL": pg_database}
    )
    assert "Tuesdays" in found.stdout
    again = runner.invoke(main, ["status", "-w", str(root)], env={"DREAM_STORE_URL": pg_database})
    assert "earlier SQLite memory" not in again.stderr
