"""Issue 22: the secret corpus (benchmarks/secrets/corpus.py) through all five doors.

Each door (``dream note``, ``Workspace.note``, the SDK tool handler, ingest of a Claude Code
transcript, the MCP tool over stdio with the real MCP SDK) writes the 107 secret notes one by
one and the 300 ordinary notes ten lines to a note into a fresh workspace. After an offline dream
nothing of any secret is in MEMORY.md, the database files, the bootstrap block or report.html,
and at most 1% of the ordinary notes were altered at a door (none by redact alone). A dream
through the real Anthropic SDK sends none of them either.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic

from dreamer import Workspace, run_dream
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.support.secrets import redact

pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "secrets"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


measure = _load("secrets_measure", BENCH / "measure.py")
corpus = measure.corpus
CASES = corpus.secrets()
ORDINARY = corpus.ordinary()


def _values(case) -> list[bytes]:
    """The value, and each line of a multi-line value's body (a key's lines leak one by one)."""
    body = [line for line in case.value.splitlines() if len(line) >= 16 and "-----" not in line]
    return [v.encode() for v in [case.value, *body]]


def _leaks(blob: str | bytes) -> list[str]:
    data = blob.encode() if isinstance(blob, str) else blob
    return [case.kind for case in CASES if any(v in data for v in _values(case))]


def test_the_corpus_is_large_and_its_kinds_distinct():
    kinds = [case.kind for case in CASES]
    assert len(set(kinds)) == len(kinds) >= 100
    assert len(ORDINARY) == len(set(ORDINARY)) >= 300
    assert all(case.value in case.note for case in CASES)
    # The same corpus every run: values come from a fixed seed.
    assert [c.value for c in corpus.secrets()] == [c.value for c in CASES]
    # No ordinary note holds a corpus secret by accident.
    assert _leaks("\n".join(ORDINARY)) == []


def test_every_kind_is_redacted_and_ordinary_notes_stay():
    missed = [case.kind for case in CASES if _leaks(redact(case.note).text)]
    assert missed == []
    altered = [note for note in ORDINARY if redact(note).text != note]
    assert altered == []


@pytest.mark.parametrize("door", measure.DOORS)
def test_no_corpus_secret_lands_through_the_door(tmp_path, door):
    root = tmp_path / "ws"
    measure.write(door, root, measure.notes())
    altered = measure.altered(door, root, ORDINARY)
    places = measure.finish(root)

    assert "[secret:" in places["MEMORY.md"] + "\n".join(measure.stored_texts(root))
    for place, text in places.items():
        assert _leaks(text) == [], place
    assert (root / "memory" / "report.html").is_file()
    files = [p for p in root.rglob("*") if p.is_file()]
    assert any(p.name == "crystals.db" for p in files)
    for path in files:  # crystals.db and its WAL, the scratch, the journal, report.html
        assert _leaks(path.read_bytes()) == [], path
    assert len(altered) <= len(ORDINARY) // 100, altered


def test_a_dream_request_carries_no_corpus_secret(tmp_path, now):
    fake = FakeAnthropic()
    for _ in range(3):  # a draft and up to two revisions
        fake.tool_use(
            TOOL_NAME,
            {
                "bond": "- Prefers answers with the code first, then a short why.\n"
                "- Works on the billing service; reviews happen on Mondays.",
                "active_context": "- Deploy keys and tokens were set up for CI and backups.",
            },
        )
    with Workspace.open(tmp_path / "ws") as ws:
        for i, case in enumerate(CASES):
            ws.note(case.note, at=now - timedelta(minutes=len(CASES) - i))
        synth = ClaudeSynthesizer(ws.settings, client=fake.client())
        run_dream(ws, now=now, force=True, synthesizer=synth)
    sent = json.dumps([request.json for request in fake.requests])
    assert "[secret:" in sent
    assert _leaks(sent) == []
