"""A fresh ``dream note`` process loads none of the heavy parts a note does not use: a note is
stored without a vector, so neither numpy nor the embedders; no pending migration, so not
sqlite-utils; a SQLite workspace, so not psycopg; and not the dream, the scheduler, the MCP SDK
or the Anthropic SDK. (``tests/cli/test_coldstart.py`` checks what ``dream note`` and ``dream
search`` both leave out.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dreamer.memory.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
# Runs `dream ARGS` as the console script does, then writes the names of every module loaded.
PROBE = (
    "import os, sys\n"
    "sys.argv[0] = 'dream'\n"
    "from dreamer.cli import run\n"
    "try:\n"
    "    run()\n"
    "finally:\n"
    "    with open(os.environ['PROBE_OUT'], 'w') as out:\n"
    "        out.write('\\n'.join(sorted(sys.modules)))\n"
)
# Whole packages (the name or anything under it) a note never needs, and why it would load them.
NEVER = {
    "numpy": "vectors: a note is stored without one, the next search embeds it",
    "sqlite_utils": "migrations: only a store with one pending imports it",
    "psycopg": "a SQLite workspace",
    "dreamer.dream": "the dream cycle",
    "dreamer.retrieval": "embedders, vectors and search",
    "apscheduler": "the scheduler",
    "mcp": "the MCP SDK",
    "anthropic": "the Anthropic SDK: only a dream talks to a model",
    "http.server": "the memory page's web server: only 'dream ui'",
}


def _loaded(folder: Path, text: str) -> set[str]:
    """The modules a fresh ``dream note -w folder text`` loaded (it must succeed)."""
    out = folder.parent / "modules.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAM_")}
    env.update(PYTHONPATH=str(ROOT), PROBE_OUT=str(out), PYTHONIOENCODING="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "note", "-w", str(folder), text],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder.parent,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().isdigit(), done.stdout  # the new crystal's id
    return set(out.read_text().split())


def _offending(loaded: set[str]) -> dict[str, str]:
    return {
        name: why
        for prefix, why in NEVER.items()
        for name in loaded
        if name == prefix or name.startswith(prefix + ".")
    }


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    with Workspace.open(folder) as ws:
        ws.init()
    return folder


def test_a_fresh_note_loads_none_of_what_a_note_does_not_use(folder):
    loaded = _loaded(folder, "the deploy moved to Friday, thanks to the team")
    assert _offending(loaded) == {}
    # No word a secret given in words starts from (password, key, pin, login...): those
    # detectors are not even compiled. A note holding one loads them (the test below).
    assert "dreamer.support.secrets_prose" not in loaded
    # What it does load: the note reached the scratch and the store through these.
    assert {"dreamer.memory.scratch_file", "dreamer.store.sqlite.store"} <= loaded
    assert "the deploy moved to Friday" in (folder / "memory" / "scratch.md").read_text()


def test_a_note_with_a_secret_and_fields_loads_none_of_it_either(folder):
    text = "the bot key is sk-ant-api03-" + "a1B2c3D4e5" * 8 + " (rotated after the outage)"
    loaded = _loaded(folder, text)
    assert _offending(loaded) == {}
    assert "dreamer.support.secrets_prose" in loaded  # "key": the phrases are read
    assert "[secret:anthropic-key#" in (folder / "memory" / "scratch.md").read_text()


def test_the_check_names_a_forbidden_module_and_its_package():
    assert _offending({"numpy.linalg", "dreamer.dream.cycle", "dreamer.dreaming", "re"}) == {
        "numpy.linalg": NEVER["numpy"],
        "dreamer.dream.cycle": NEVER["dreamer.dream"],
    }


def test_a_notes_content_hash_is_the_sha256_of_its_normalised_text():
    # A different hash would give every stored note a new identity.
    import hashlib

    from dreamer.store import content_hash

    text = "  the deploy\nmoved  to Friday "
    assert content_hash(text) == hashlib.sha256(b"the deploy moved to Friday").hexdigest()
