"""The Python API: Workspace.open / note / search / get, validation, and the workspace lock."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest

from dreamer import Crystal, Workspace
from dreamer.errors import InvalidNote, LockHeld, WorkspaceError
from dreamer.memory import scratch
from dreamer.retrieval.embed import Embedder, HashingEmbedder
from dreamer.retrieval.reindex import embed_waiting


@pytest.mark.slow
def test_public_api_round_trip(tmp_path, now):
    with Workspace.open(tmp_path / "agent") as ws:
        crystal_id = ws.note(
            "Ada's birthday is 4 May", importance=0.9, type="world_fact", at="2026-03-12T14:30:00Z"
        )
        crystal = ws.get(crystal_id)
        assert isinstance(crystal, Crystal)
        assert (crystal.text, crystal.importance, crystal.semantic_type, crystal.created_at) == (
            "Ada's birthday is 4 May",
            0.9,
            "world_fact",
            "2026-03-12T14:30:00Z",
        )
        assert ws.get(str(crystal_id)).id == crystal_id  # ids from JSON or a CLI are strings
        hits = ws.search("birthday", limit=1, search_type="facts", now=now)
        assert [hit.id for hit in hits] == [crystal_id]


def test_note_defaults(ws):
    before = datetime.now(UTC).replace(microsecond=0)
    crystal = ws.get(ws.note("Remember to always run the linter"))
    assert crystal.importance == 0.7
    assert crystal.semantic_type == "directive"  # inferred when not given
    assert crystal.source == "scratch" and crystal.lifecycle == "generated"
    created = datetime.fromisoformat(crystal.created_at.replace("Z", "+00:00"))
    assert before <= created <= datetime.now(UTC) + timedelta(seconds=1)


def test_note_time_is_stored_in_utc(ws):
    local = datetime(2026, 3, 12, 16, 30, 59, 999999, tzinfo=timezone(timedelta(hours=2)))
    crystal = ws.get(ws.note("timezone check", at=local))
    assert crystal.created_at == "2026-03-12T14:30:59Z"
    assert scratch.parse(ws.scratch_path).notes[0].at == datetime(
        2026, 3, 12, 14, 30, 59, tzinfo=UTC
    )


def test_vector_is_stored_with_the_crystal(ws, now):
    text = "Vectors live beside the text"
    crystal_id = ws.note(text, at=now)
    embed_waiting(ws.store, ws.embedder)  # a deferred embedder's note: as a search does first
    blob = ws.store.db.execute(
        "SELECT embedding FROM crystals WHERE id = ?", [crystal_id]
    ).fetchone()[0]
    stored = np.frombuffer(blob, dtype=np.float16).astype(np.float32)  # as to_blob stored it
    assert stored.shape == (ws.embedder.dim,)
    assert np.allclose(stored, ws.embedder.embed([text])[0], atol=2e-3)
    assert isinstance(ws.embedder, Embedder)
    assert abs(float(np.linalg.norm(stored)) - 1.0) < 1e-2


def test_default_embedder_is_deterministic_and_offline():
    first = HashingEmbedder().embed(["the same words", "other words"])
    second = HashingEmbedder().embed(["the same words", "other words"])
    assert np.array_equal(first, second)
    assert first.dtype == np.float32 and first.shape == (2, 384)
    assert float(first[0] @ first[1]) < 0.99


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": ""}, "empty"),
        ({"text": " \n\t"}, "empty"),
        ({"text": None}, "a note is text"),
        ({"text": "bad \ud800 surrogate"}, "surrogates"),
        ({"importance": 1.01}, "from 0 to 1"),
        ({"importance": -0.01}, "from 0 to 1"),
        ({"importance": float("nan")}, "from 0 to 1"),
        ({"importance": float("inf")}, "from 0 to 1"),
        ({"importance": True}, "a number"),
        ({"importance": "0.5"}, "a number"),
        ({"type": "feeling"}, "experience, directive, world_fact, mental_model"),
        ({"at": "last tuesday"}, "ISO-8601"),
        ({"source": "web"}, "unknown source"),
    ],
)
def test_bad_notes_are_refused_and_change_nothing(ws, now, kwargs, message):
    ws.note("already here", at=now)
    before = (
        ws.scratch_path.read_bytes(),
        ws.store.db.execute("SELECT count(*) FROM crystals").fetchone()[0],
    )
    fields = {"text": "fine", **kwargs}
    with pytest.raises(InvalidNote, match=message):
        ws.note(fields.pop("text"), **fields)
    after = (
        ws.scratch_path.read_bytes(),
        ws.store.db.execute("SELECT count(*) FROM crystals").fetchone()[0],
    )
    assert after == before


def test_writing_creates_the_workspace_reading_does_not(tmp_path):
    absent = tmp_path / "later"
    with pytest.raises(WorkspaceError, match="dream init"):
        Workspace.open(absent, create=False)
    assert not absent.exists()
    with Workspace.open(absent) as ws:
        ws.note("first note creates everything")
    assert (absent / "memory" / "scratch.md").exists()


def test_same_note_twice_is_one_crystal_and_two_scratch_entries(ws, now):
    first = ws.note("Standup is at ten", at=now)
    second = ws.note("Standup  is at ten", at=now + timedelta(minutes=1))
    assert first == second
    assert len(scratch.parse(ws.scratch_path).notes) == 2


def test_workspace_lock_is_exclusive(ws):
    other = Workspace.open(ws.root)
    try:
        with ws.lock():
            assert (ws.memory_dir / "dream.lock").read_text() == str(os.getpid())
            with pytest.raises(LockHeld, match="dream already running"), other.lock():
                pass
        with other.lock():  # released when the holder leaves
            pass
    finally:
        other.close()


def test_init_twice_keeps_the_scratch(ws, now):
    ws.init()
    ws.note("kept", at=now)
    before = ws.scratch_path.read_bytes()
    ws.init()
    assert ws.scratch_path.read_bytes() == before


def test_search_limit_above_the_cap_is_a_usage_error(ws, now):
    from dreamer.errors import UsageError

    with pytest.raises(UsageError, match="at most 1000"):
        ws.search("anything", limit=10**20, now=now)


def test_crystal_and_scratch_agree_on_importance(ws, now):
    crystal = ws.get(ws.note("precise importance", importance=0.12345, at=now))
    assert crystal.importance == scratch.parse(ws.scratch_path).notes[0].importance == 0.123


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda ws: ws.note(123), "a note is text (str), not int"),
        (lambda ws: ws.note(None), "a note is text (str), not None"),
        (lambda ws: ws.search(None), "a query is text (str), not None"),
        (lambda ws: ws.search("x", limit=True), "limit is a whole number"),
        (lambda ws: ws.search("x", limit=2.5), "limit is a whole number"),
        (lambda ws: ws.get(1.5), "a crystal id is a whole number, not 1.5"),
        (lambda ws: ws.forget([None]), "a crystal id is a whole number, not None"),
    ],
)
def test_the_python_api_checks_its_types(ws, call, message):
    from dreamer.errors import UsageError

    with pytest.raises(UsageError, match=re.escape(message)):
        call(ws)


def test_ingest_refuses_what_is_not_a_regular_file(ws, now, tmp_path):
    import os

    from dreamer.agents.ingest import ingest

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    report = ingest(ws, [fifo, "/dev/zero"], now)  # a FIFO would block, /dev/zero never ends
    assert [result.error for result in report.files] == [
        f"{fifo}: not a regular file; pass a file or a folder",
        "/dev/zero: not a regular file; pass a file or a folder",
    ]


@pytest.mark.slow
def test_absurd_intervals_name_the_flag_typed(tmp_path, runner):
    from dreamer.cli import main

    ws = str(tmp_path / "ws")
    runner.invoke(main, ["init", "-w", ws])
    zero = runner.invoke(main, ["tick", "--dream-interval", "0", "-w", ws])
    assert zero.exit_code == 2 and "--dream-interval must be a number above 0" in zero.output
    huge = runner.invoke(main, ["tick", "--consolidation-interval", "1e308", "-w", ws])
    assert huge.exit_code == 2 and "--consolidation-interval must be at most 525600" in huge.output
