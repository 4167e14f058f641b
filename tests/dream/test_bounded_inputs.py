"""Bounded inputs: a note has a maximum size at every door, and nothing already stored, however
big, can make a search or a dream slow or stuck.

Must show (issue 22, item 3): a 10 MB note gets one clear ``Error:`` line at the CLI (argument
and stdin), the Python API, the SDK tool handler and MCP, and nothing is stored; ingest clips a
single huge exchange; a workspace holding a 10 MB crystal written straight into the store (as
older versions could) searches and dreams in seconds, and hands the embedder at most the cap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from claude_code_fixture import Session, text_block
from click.testing import CliRunner
from mcp_session import run_session, text_of

from dreamer import Workspace
from dreamer.agents import tools
from dreamer.agents.ingest import ingest
from dreamer.cli import main
from dreamer.config import DEFAULT_NOTE_MAX_CHARS
from dreamer.dream.cycle import run
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import InvalidSetting, NoteTooLarge
from dreamer.memory import scratch
from dreamer.memory.scratch import Note
from dreamer.retrieval.embed import EMBED_MAX_CHARS, HashingEmbedder
from dreamer.store import NewCrystal
from dreamer.support.bounds import READ_MAX_CHARS

TEN_MB = "A pasted build log. " + "compile step ok " * 655_360  # ~10 MB of text
LIMIT_WORDS = "over the limit of 32,000"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != "dream.lock"
    }


@pytest.fixture
def root(tmp_path) -> Path:
    path = tmp_path / "ws"
    with Workspace.open(path, environ={}) as ws:
        ws.note("Ada prefers short answers", at=None)
    return path


def _unchanged(root: Path, before: dict[str, bytes]) -> None:
    with Workspace.open(root, create=False, environ={}) as ws:
        assert [c.text for c in ws.store.crystals.select()] == ["Ada prefers short answers"]
    after = _files(root)
    assert after["memory/scratch.md"] == before["memory/scratch.md"]


@pytest.mark.parametrize("via", ["argument", "stdin"])
def test_a_10_mb_note_is_one_error_line_at_the_cli_and_nothing_is_stored(root, via):
    before = _files(root)
    args, stdin = (["note", TEN_MB], None) if via == "argument" else (["note", "-"], TEN_MB)
    result = CliRunner().invoke(main, [*args, "-w", str(root)], input=stdin)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Error: the note is ") and result.stderr.count("\n") == 1
    assert LIMIT_WORDS in result.stderr and "memory.note.maxChars" in result.stderr
    assert "nothing was stored" in result.stderr
    _unchanged(root, before)


def test_stdin_is_not_read_past_the_limit():
    """A pipe of any size is refused after reading 4 bytes a character at most."""

    class Endless:
        read_sizes: list[int] = []

        def read(self, size: int = -1) -> bytes:
            assert size > 0, "stdin read without a bound"
            self.read_sizes.append(size)
            return b"x" * size

    from dreamer.cli.memory import read_stdin

    with pytest.MonkeyPatch.context() as patch:
        stdin = type("Stdin", (), {"buffer": Endless()})()
        patch.setattr("sys.stdin", stdin)
        with pytest.raises(NoteTooLarge, match="more than 32,000 characters"):
            read_stdin(DEFAULT_NOTE_MAX_CHARS)
    assert Endless.read_sizes == [4 * DEFAULT_NOTE_MAX_CHARS + 1]


def test_a_10_mb_note_raises_note_too_large_from_the_api(root):
    before = _files(root)
    with Workspace.open(root, create=False, environ={}) as ws:
        with pytest.raises(NoteTooLarge, match=LIMIT_WORDS):
            ws.note(TEN_MB)
    _unchanged(root, before)


def test_a_10_mb_note_is_an_error_tool_result(root, now):
    before = _files(root)
    with Workspace.open(root, create=False, environ={}) as ws:
        result = tools.handle(
            ws, {"id": "t1", "name": "working_memory_note", "input": {"note": TEN_MB}}, now=now
        )
    assert result["is_error"] is True
    assert result["content"].startswith("Error: the note is ") and "\n" not in result["content"]
    assert LIMIT_WORDS in result["content"]
    _unchanged(root, before)


@pytest.mark.slow
def test_a_10_mb_note_is_an_error_result_over_mcp(root, tmp_path):
    before = _files(root)
    seen: dict = {}

    async def scenario(session) -> None:
        result = await session.call_tool("working_memory_note", {"note": TEN_MB})
        seen["big"] = (result.is_error, text_of(result))
        good = await session.call_tool("memory_search", {"query": "short answers"})
        seen["after"] = json.loads(text_of(good))["count"]

    run_session(tmp_path, root, scenario, env={"DREAM_EMBEDDER": "hashing"})
    is_error, text = seen["big"]
    assert is_error and text.startswith("Error: the note is ") and LIMIT_WORDS in text
    assert seen["after"] == 1  # the server kept serving
    _unchanged(root, before)


def test_the_limit_is_a_setting(tmp_path):
    root = tmp_path / "ws"
    env = {"DREAM_NOTE_MAX_CHARS": "200"}
    with Workspace.open(root, environ=env) as ws:
        assert ws.settings.note_max_chars == 200
        ws.note("x" * 200)
        with pytest.raises(NoteTooLarge, match="201 characters, over the limit of 200"):
            ws.note("y" * 201)
        assert len(ws.store.crystals.select()) == 1
    result = CliRunner().invoke(main, ["config", "-w", str(root)], env=env)
    assert result.exit_code == 0, result.output
    shown = [line for line in result.output.split("\n") if "memory.note.maxChars" in line]
    assert len(shown) == 1 and "200" in shown[0]
    (root / "dreamer.toml").write_text('"memory.note.maxChars" = 50\n')
    with pytest.raises(InvalidSetting, match="from 100 to 1000000"):
        Workspace.open(root, environ={})


def test_ingest_clips_a_huge_exchange_and_keeps_its_head(tmp_path, now):
    root = tmp_path / "ws"
    chat = tmp_path / "chat.jsonl"
    lines = [
        {"role": "user", "content": "Here is the whole build log, what broke? " + TEN_MB},
        {"role": "assistant", "content": "The linker step broke."},
        {"role": "user", "content": "Thanks, Ada will fix the linker flags tomorrow."},
    ]
    chat.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = Session("9e1f0a52-8d3c-4b7e-a6f1-0c2d3e4f5a6b", "main")
    session.user("Please read this: " + TEN_MB)
    session.reply("msg_1", text_block("It is a build log."), stop="end_turn")
    session.user("Remember that the release is on Friday")
    session.reply("msg_2", text_block("Noted."), stop="end_turn")
    claude = session.write(tmp_path / "projects" / "p" / "session.jsonl")
    with Workspace.open(root, environ={"DREAM_EMBEDDER": "hashing"}) as ws:
        report = ingest(ws, [chat, claude], now)
        assert not report.failed, [r.error for r in report.failed]
        texts = [c.text for c in ws.store.crystals.select()]
        # One huge exchange is a handful of windows of its head, not ~25,000 of them.
        assert sum(len(text) for text in texts) < 4 * DEFAULT_NOTE_MAX_CHARS
        assert any("Here is the whole build log" in text for text in texts)
        assert any("Please read this" in text for text in texts)
        assert sum("[clipped " in text for text in texts) == 2
        assert any("fix the linker flags" in text for text in texts)  # the later turns stay
        assert any("release is on Friday" in text for text in texts)


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, remembering the longest text it was handed."""

    def __init__(self) -> None:
        super().__init__()
        self.longest = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.longest = max([self.longest, *map(len, texts)])
        return super().embed(texts)


def _with_huge_crystal(root: Path, now) -> None:
    """A 10 MB crystal in the store and a 10 MB note in the scratch, as older versions wrote."""
    with Workspace.open(root, environ={"DREAM_EMBEDDER": "hashing"}) as ws:
        ws.init()
        ws.store.crystals.add_crystal(
            NewCrystal(
                TEN_MB,
                source="scratch",
                semantic_type="experience",
                importance=0.9,
                at=now,
                embedding=None,
                embedder=None,
                hormones={},
            )
        )
        ws.scratch.append(Note(text="Second paste. " + TEN_MB, at=now, importance=0.9))
        for i in range(5):
            ws.note(f"Deploy {i} of the billing service went out", at=now + timedelta(minutes=i))


@pytest.mark.slow
def test_a_huge_crystal_is_embedded_by_its_head_only(tmp_path, now):
    root = tmp_path / "ws"
    _with_huge_crystal(root, now)
    embedder = RecordingEmbedder()
    with Workspace.open(root, environ={}, embedder=embedder) as ws:
        hits = ws.search("build log compile", now=now + timedelta(hours=1))
        assert hits and hits[0].text.startswith("A pasted build log.")
        assert len(ws.get(hits[0].id).text) == len(TEN_MB)  # stored and returned whole
        # The search tool hands the agent its head, and memory_get for the rest.
        found = tools.handle(
            ws, {"id": "s", "name": "memory_search", "input": {"query": "build log"}}, now=now
        )
        first = json.loads(found["content"])["results"][0]
        assert first["id"] == hits[0].id and len(first["text"]) < READ_MAX_CHARS + 100
        assert first["text"].endswith(f"memory_get({hits[0].id}) has it whole]")
        assert (
            ws.store.vectors.unembedded(0, None, 10) == []
        )  # it has its vector: no retry next time
        synth = RecordingSynthesizer()
        result = run(ws, now=now + timedelta(hours=1), force=True, synthesizer=synth)
        assert result.committed, result.report
    assert 0 < embedder.longest <= EMBED_MAX_CHARS
    # The dream read both 10 MB texts by their heads only (its analyses cost what they read).
    assert synth.longest == READ_MAX_CHARS


class RecordingSynthesizer(OfflineSynthesizer):
    """The offline synthesizer, remembering the longest note or crystal text it was given."""

    longest = 0

    def synthesize(self, inputs, **kwargs):
        texts = [note.text for note in inputs.notes] + [c.text for c in inputs.crystals]
        self.longest = max([self.longest, *map(len, texts)])
        return super().synthesize(inputs, **kwargs)


@pytest.mark.slow
def test_search_and_dream_on_a_workspace_with_a_10_mb_crystal_finish_in_seconds(tmp_path, now):
    root = tmp_path / "ws"
    _with_huge_crystal(root, now)
    runner = CliRunner(env={"DREAM_EMBEDDER": "hashing"})
    searched = runner.invoke(main, ["search", "build log", "-w", str(root)])
    assert searched.exit_code == 0, searched.output
    # The hit is shown by its head, with where to read it whole.
    assert len(searched.output) < 2 * READ_MAX_CHARS
    assert "more characters; dream get " in searched.output
    dreamt = runner.invoke(main, ["run", "--force", "-w", str(root)])
    assert dreamt.exit_code == 0, dreamt.output
    assert "committed" in dreamt.output
    # The huge rotated note was indexed and consumed: the next dream does not retry it.
    path = root / "memory" / "scratch.md"
    assert not scratch.rotated_path(path).exists()
    assert scratch.parse(path).notes == []
    with Workspace.open(root, create=False, environ={}) as ws:
        assert any(c.text.startswith("Second paste.") for c in ws.store.crystals.select())


@pytest.mark.slow
def test_a_consolidation_tick_never_compares_two_huge_crystals_word_by_word(tmp_path, now):
    """Two near-identical 10 MB crystals were a merge candidate whose word-by-word comparison
    ran for hours, and every tick started it again; a crystal longer than any note is never
    merged, so the tick takes seconds."""
    root = tmp_path / "ws"
    _with_huge_crystal(root, now)
    with Workspace.open(root, environ={"DREAM_EMBEDDER": "hashing"}) as ws:
        assert run(ws, now=now + timedelta(hours=1), force=True).committed  # indexes the 2nd
        ws.search("build log", now=now + timedelta(hours=1))  # both have vectors now
        huge = [c for c in ws.store.crystals.select() if len(c.text) > READ_MAX_CHARS]
        assert len(huge) == 2 and all(c.embedder for c in huge)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "dreamer.cli", "consolidate", "--json", "-w", str(root)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "DREAM_EMBEDDER": "hashing"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the consolidation tick did not finish in 120 s")
    assert done.returncode == 0, done.stderr
    with Workspace.open(root, create=False, environ={}) as ws:
        huge = [c for c in ws.store.crystals.select() if len(c.text) > READ_MAX_CHARS]
        # Neither merged into the other (the CLI's clock is months on: both may have faded).
        assert [c.parent_id for c in huge] == [None, None]
    assert json.loads(done.stdout)["outcome"] == "done"


@pytest.mark.slow
def test_counting_an_access_of_a_huge_crystal_does_not_reindex_its_words(tmp_path, now):
    """The full-text row follows the text, not every update of the row (a search counting an
    access re-tokenized all 10 MB): counting an access changes the crystal's row alone, where
    a full-text trigger would add its own writes to the connection's count of changed rows."""
    root = tmp_path / "huge"
    _with_huge_crystal(root, now)
    with Workspace.open(root, environ={"DREAM_EMBEDDER": "hashing"}) as ws:
        ws.search("build log", now=now)  # the first one embeds what waits
        for _ in range(5):
            assert ws.search("build log compile", now=now)[0].text.startswith("A pasted")
        huge = ws.store.crystals.select()[0]
        assert len(huge.text) == len(TEN_MB)
        conn = ws.store.db.conn
        before = conn.total_changes
        ws.store.crystals.record_access([huge.id], now)
        assert conn.total_changes - before == 1
        assert ws.get(huge.id).text == TEN_MB  # and the words are still found as they were
        assert ws.search("build log compile", now=now)[0].id == huge.id
    with Workspace.open(root, environ={}) as ws:
        assert ws.store.crystals.select()[0].access_count == 8  # every access still counted
