"""A fresh ``dream note`` or ``dream search`` imports only what it uses (speed: a benchmark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from import_probe import modules_loaded

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# What the write and read paths never need: the scheduler, schema validation (the dream's),
# the benchmarks, the Anthropic SDK and HTTP clients (only a dream talks to a model), the MCP
# SDK, sqlite-utils (only a pending migration needs it), the tokenizer of budgets, the TOML
# writer of the install commands.
NOT_NEEDED = (
    "apscheduler",
    "jsonschema",
    "dreamer_bench",
    "anthropic",
    "httpx",
    "httpx2",
    "mcp",
    "dreamer.service",
    "dreamer.dream",
    "sqlite_utils",
    "tiktoken",
    "tomlkit",
)


@pytest.mark.parametrize(
    "command", [("note", "the deploy moved to Friday"), ("search", "deploy day")]
)
def test_note_and_search_import_only_what_they_use(tmp_path, command):
    workspace = str(tmp_path / "ws")
    modules_loaded("init", "-w", workspace)
    modules = modules_loaded(*command, "-w", workspace)
    loaded = [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_NEEDED)]
    assert loaded == []


def test_note_loads_no_embedder_numpy_or_tokenizer(tmp_path):
    workspace = str(tmp_path / "ws")
    modules_loaded("init", "-w", workspace)
    modules = modules_loaded("note", "a note that waits for its vector", "-w", workspace)
    heavy = ("numpy", "tokenizers", "dreamer.retrieval.search", "dreamer.retrieval.vectors")
    assert [m for m in heavy if m in modules] == []


def test_a_plain_query_builds_no_tokenizer(tmp_path):
    workspace = str(tmp_path / "ws")
    modules_loaded("init", "-w", workspace)
    modules_loaded("note", "the kiln keys are in the blue drawer", "-w", workspace)
    modules = modules_loaded("search", "where are the kiln keys", "-w", workspace)
    assert "tokenizers" not in modules  # the sentence model tokenizes with its own WordPiece
    # A search writes nothing: no lock, no scratch, no forgetting code.
    writers = ("filelock", "dreamer.memory.scratch", "dreamer.memory.forgetting")
    assert [m for m in writers if m in modules] == []


def test_a_search_by_meaning_imports_only_the_forward_pass(tmp_path):
    from dreamer.retrieval import minilm

    if not minilm.available():
        pytest.skip("the model package is not installed")
    workspace = str(tmp_path / "ws")
    for text in ("the kiln keys are in the blue drawer", "the deploy moved to Friday"):
        modules_loaded("note", text, "-w", workspace)
    modules_loaded("search", "where are the kiln keys", "-w", workspace)  # embeds; caches weights
    modules = modules_loaded("search", "when is the deploy", "-w", workspace)  # re-ranks its hit
    assert "dreamer.retrieval.bert" in modules  # the query went through the sentence model
    # Not the model file's reader (the cached weights answered), not the static
    # embedder, and not numpy.ma (np.unique imports it, for its check of masked arrays).
    unused = ("dreamer.retrieval.onnx_weights", "dreamer.retrieval.static", "numpy.ma")
    assert [m for m in unused if m in modules] == []


def test_a_session_start_hook_imports_neither_the_dream_nor_ingest(tmp_path):
    # A hook runs at every session start: it prints the memory block and hands the transcripts
    # to a background process, so it needs neither the dream (numpy, jsonschema) nor ingest.
    workspace = str(tmp_path / "ws")
    modules_loaded("note", "the kiln keys are in the blue drawer", "-w", workspace)
    start = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": workspace})
    modules = modules_loaded("hook", "session-start", "-w", workspace, stdin=start)
    assert "dreamer.agents.bootstrap" in modules  # it did build the block
    # Its health lines read the dream's light modules (health, budget, seed); not the dream.
    dream = ("dreamer.dream.synth", "dreamer.dream.cycle", "dreamer.dream.inputs")
    light = [n for n in NOT_NEEDED if n != "dreamer.dream"]
    heavy = (*light, *dream, "numpy", "dreamer.agents.ingest")
    assert [m for m in modules if any(m == n or m.startswith(n + ".") for n in heavy)] == []
