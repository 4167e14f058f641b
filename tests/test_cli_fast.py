"""``dream note``, ``search`` and ``hook`` without click (dreamer.cli.fast) do exactly what the
click commands do: the same command line, run both ways on two copies of one workspace, prints
the same, exits the same and stores the same; and what the fast path does not take, click gets."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from dreamer.agents import hooks
from dreamer.cli import fast

ROOT = Path(__file__).resolve().parents[1]
# Both ways report whether click was imported; the click way runs the click group itself.
FAST = (
    "import atexit, os, sys\n"
    "def said():\n"
    "    open(os.environ['PROBE_OUT'], 'w').write(str('click' in sys.modules))\n"
    "atexit.register(said)\n"
    "sys.argv[0] = 'dream'\n"
    "from dreamer.cli import run\n"
    "run()\n"
)
CLICK = FAST.replace("from dreamer.cli import run\nrun()", "from dreamer.cli import main\nmain()")
START = {"hook_event_name": "SessionStart", "source": "startup", "cwd": "."}
PROMPT = {"hook_event_name": "UserPromptSubmit", "prompt": "which day is the deploy", "cwd": "."}
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
SCORE = re.compile(r'(score"?:? )[0-9.]+')

# (command line with W for the workspace, stdin, environment, whether the fast path takes it)
CASES = [
    (["note", "the deploy moved to Friday", "-w", "W"], "", {}, True),
    (
        ["note", "-w", "W", "--importance", "0.9", "--type", "directive", "Run the tests"],
        "",
        {},
        True,
    ),
    (
        ["note", "--importance=0.25", "--about", "launch date", "--replaces", "#1", "July 3"],
        "",
        {"DREAM_WORKSPACE": "W"},
        True,
    ),
    (
        ["note", "--at", "2026-03-12T14:30:00Z", "met Ada at the kiln", "--workspace", "W"],
        "",
        {},
        True,
    ),
    (
        ["note", "api key sk-ant-api03-" + "a1B2c3D4e5" * 8 + " for the bot", "-w", "W"],
        "",
        {},
        True,
    ),
    (["note", "ünïcødé ✓ and a red \x1b[31malert\x1b[0m", "-w", "W"], "", {}, True),
    (["note", "-", "-w", "W"], "a note\non two lines\n", {}, True),
    (["note", "too important", "--importance", "2", "-w", "W"], "", {}, True),
    (["note", "", "-w", "W"], "", {}, True),
    (["note", "--", "-5 C in the server room", "-w", "W"], "", {}, False),
    (["note", "x", "--bogus", "1", "-w", "W"], "", {}, False),
    (["note", "x", "--importance", "lots", "-w", "W"], "", {}, False),
    (["note", "--help"], "", {}, False),
    (["search", "deploy", "-w", "W"], "", {}, True),
    (["search", "alert", "-w", "W"], "", {}, True),
    (["search", "deploy", "--json", "--limit", "2", "-w", "W"], "", {}, True),
    (["search", "zzqx nothing", "--type", "conversations", "-w", "W"], "", {}, True),
    (["search", "deploy", "--limit", "0", "-w", "W"], "", {}, False),
    (["search", "deploy", "--type", "Facts", "-w", "W"], "", {}, False),
    (["search", "deploy", "-w", "W/missing"], "", {}, True),
    (["hook", "session-start", "-w", "W"], json.dumps(START), {}, True),
    (["hook", "user-prompt-submit", "--recall", "-w", "W"], json.dumps(PROMPT), {}, True),
    (["hook", "session-start", "--budget", "0", "-w", "W"], json.dumps(START), {}, False),
    (["get", "1", "-w", "W"], "", {}, False),
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("seeded") / "ws"
    from dreamer import Workspace

    with Workspace.open(folder) as opened:
        opened.init()
        for text in (
            "the deploy of the billing service is on Thursday",
            "Ada owns the kiln",
            "a red \x1b[31malert\x1b[0m on the dashboard",  # click strips it from a pipe
        ):
            opened.note(text)
    return folder


def _run(code: str, args: list[str], stdin: str, env: dict[str, str], folder: Path):
    out = folder.parent / f"{folder.name}.probe"
    full = {**os.environ, **env, "PYTHONPATH": str(ROOT), "PROBE_OUT": str(out)}
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=full,
        cwd=folder.parent,
    )
    clicked = out.read_text() == "True"
    return done, clicked


def _stored(folder: Path) -> tuple[str, list[tuple]]:
    scratch = folder / "memory" / "scratch.md"
    text = scratch.read_text(encoding="utf-8") if scratch.exists() else ""
    db = folder / "memory" / "crystals.db"
    rows: list[tuple] = []
    if db.exists():
        with sqlite3.connect(db) as conn:
            rows = conn.execute(
                "SELECT id, text, source, semantic_type, importance, lifecycle, about, replaces,"
                " access_count FROM crystals ORDER BY id"
            ).fetchall()
        conn.close()
    return TIME.sub("T", text), rows


@pytest.mark.slow
@pytest.mark.skipif(os.name != "posix", reason="the fast path leaves Windows to click")
@pytest.mark.parametrize(
    ("args", "stdin", "env", "taken"), CASES, ids=[" ".join(case[0])[:40] for case in CASES]
)
def test_the_fast_path_does_what_click_does(tmp_path, seeded, args, stdin, env, taken):
    results = []
    for way, code in (("fast", FAST), ("click", CLICK)):
        folder = tmp_path / way / "ws"
        shutil.copytree(seeded, folder)
        here = [a.replace("W", str(folder), 1) if a.startswith("W") else a for a in args]
        environ = {k: v.replace("W", str(folder)) for k, v in env.items()}
        done, clicked = _run(code, here, stdin, environ, folder)
        shown = [
            SCORE.sub(r"\1S", TIME.sub("T", s.replace(str(folder), "W")))
            for s in (done.stdout, done.stderr)
        ]
        results.append((done.returncode, shown[0], shown[1], _stored(folder), clicked))
    (fast_code, fast_out, fast_err, fast_stored, fast_clicked) = results[0]
    assert results[1][4], "the click way must run click"
    assert fast_clicked is not taken, "the fast path took (or refused) this command line"
    assert (fast_code, fast_out, fast_err) == results[1][:3]
    assert fast_stored == results[1][3]


def test_the_fast_path_knows_the_hook_events_and_defaults_of_the_commands():
    from click import Choice

    from dreamer.cli.integrations import hook
    from dreamer.cli.memory import note, search

    assert fast.HOOK_EVENTS == hooks.EVENTS
    params = {p.name: p for command in (note, search, hook) for p in command.params}
    assert isinstance(params["event"].type, Choice)
    assert tuple(params["event"].type.choices) == fast.HOOK_EVENTS
    assert params["importance"].default == fast.DEFAULT_IMPORTANCE
    assert params["limit"].default == fast.DEFAULT_LIMIT
    assert params["budget"].default == fast.DEFAULT_BUDGET
    # Every option of the three commands is one the fast path parses (or click gets it all).
    for command in (note, search, hook):
        argument, options, flags = fast._SPECS[command.name]
        for param in command.params:
            for name in getattr(param, "opts", []):
                if name.startswith("-"):
                    assert name in options or name in flags or name in ("-h", "--help"), name


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--version"],
        ["note"],
        ["note", "a", "b"],
        ["note", "a", "-w"],
        ["note", "a", "-w", ""],
        ["note", "a", "-w", "x", "--workspace", "y"],
        ["note", "a", "-wx"],
        ["note", "a", "-w=x"],
        ["search", "q", "--json=1"],
        ["search", "q", "--json", "--json"],
        ["search", "q", "--limit", "1001"],
        ["hook", "bogus-event"],
    ],
)
def test_what_the_fast_path_cannot_take_is_left_to_click(args):
    assert fast.parse(args) is None


@pytest.mark.parametrize(
    "args",
    [
        ["note", "a", "-w=x"],  # the fast path leaves these to click
        ["search", "q", "--limit", "1001"],
    ],
)
def test_what_click_runs_keeps_the_reference_cycle_collector(tmp_path, args):
    # A fast note or search runs without the cyclic collector; anything click runs (a serve,
    # a dream) is long-lived and must have it back.
    out = tmp_path / "enabled.txt"
    probe = (
        "import atexit, gc, os, sys\n"
        "atexit.register(lambda: open(os.environ['PROBE_OUT'], 'w').write(str(gc.isenabled())))\n"
        "sys.argv[0] = 'dream'\n"
        "from dreamer.cli import run\n"
        "run()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROBE_OUT": str(out)}
    subprocess.run([sys.executable, "-c", probe, *args], env=env, cwd=tmp_path, capture_output=True)
    assert out.read_text() == "True"
