"""Fresh ``dream note``, ``dream search`` and ``dream hook session-start`` processes against
bare Python's start, interleaved, with and without dreamer's ``.pyc`` files.

    python benchmarks/coldstart.py [--runs 15] [--notes 200] [--before DIR] [--json]

Each run is a new ``dream`` process, as an agent's hook or shell starts it: the console script
pip writes, made here for each copy from its ``pyproject.toml`` (``[project.scripts]``).
Every round runs each (mode, command) pair once, in a shuffled order, so that the machine's
load falls on all of them alike; the figures are the p50 (and p90) wall time of the rounds and
each command's ratio to bare ``python -c pass`` of the same mode.

The two modes run dreamer from two copies of the package made here (``dreamer/`` with
``prompts/``, ``schemas/`` and ``plugin/`` beside it, put first on ``PYTHONPATH``):

- ``pyc``: the copy was byte-compiled first (``compileall``), as ``pip install`` leaves it;
- ``no pyc``: the copy has no ``__pycache__`` and ``PYTHONDONTWRITEBYTECODE=1`` keeps it so,
  so every process compiles each dreamer module it imports (a checkout run without write
  access, or an install that skipped compiling). Python's own and the dependencies' ``.pyc``
  files stay as installed, in both modes: that is what a user has.

Bare Python runs with the same interpreter, environment and ``PYTHONPATH`` in each mode.
``--before DIR`` measures a second version too, in the same rounds (a folder holding its
``dreamer/``, ``prompts/``, ``schemas/`` and ``pyproject.toml``, e.g. from ``git archive``; it
must read the workspaces this version makes), so that a change is compared under one load.
The note command writes into its own workspace; search and the hook read another that holds
``--notes`` notes, all embedded, so each search measures a steady state. ``dream search (serve
running)`` is the same search with a ``dream serve`` over that workspace (one per mode, from
that mode's copy, started here with its own ``XDG_RUNTIME_DIR``): its search door answers, so
the process imports neither numpy nor the store. ``dream search (door left by a search)`` is
the same search at the default ``memory.search.warmMinutes``, in a runtime folder of its own
and without a serve: the first of its runs searches by itself and leaves a door (``dream
door``) that answers the runs after it, as it does for a user; stopped at the end. Every other
command runs with an empty ``XDG_RUNTIME_DIR`` and ``DREAM_SEARCH_WARM_MINUTES=0``, so no door
answers it (yours neither) and none is left, and all run with dreams off
(``DREAM_DREAM_ENABLED=false``: the serves never dream over the searched notes). Figures go in
docs/contributing/bench.md ("Cold start").
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("dreamer", "prompts", "schemas", "plugin")  # and pyproject.toml, for the script
# The bar: a command's p50 over bare Python's p50, in each mode.
LEFT = "dream search (door left by a search)"  # answered by the door an earlier one left
SERVED = "dream search (serve running)"  # the one command a running serve's door answers
# The budgets users feel, on CPU against bare Python's start (docs/performance.md): the
# SessionStart hook runs before every session; a note has a looser bound.
TARGETS = {"dream hook session-start": 10.0, "dream note": 15.0}
PARTS = ("import filelock", "import numpy", "import click")


def _copy(source: Path, into: Path, *, compiled: bool) -> Path:
    """A copy of the package at ``source`` in ``into`` (with ``.pyc`` files when ``compiled``)."""
    for name in SHIPPED:
        if (source / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(source / name, into / name, ignore=ignore)
    if compiled and not compileall.compile_dir(into / "dreamer", quiet=1):
        raise SystemExit("compileall failed on the copy of dreamer")
    _script(source, into / "dream")
    return into


def _script(source: Path, path: Path) -> None:
    """The ``dream`` console script as pip writes it, for the entry point ``source`` names."""
    try:
        project = (source / "pyproject.toml").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SystemExit(f"{source} has no pyproject.toml (it names the dream script)") from None
    found = re.search(r'^dream = "([\w.]+):(\w+)"', project, re.M)
    if found is None:
        raise SystemExit(f"{source}/pyproject.toml names no dream script")
    module, attribute = found.groups()
    path.write_text(
        f"import sys\nfrom {module} import {attribute}\nif __name__ == '__main__':\n"
        f"    sys.argv[0] = sys.argv[0].removesuffix('.exe')\n    sys.exit({attribute}())\n",
        encoding="utf-8",
    )


# The floor of a search in its own process: numpy, sqlite3 and pathlib imported, the default
# embedder's tokenizer and cached weights loaded (the sentence model, as the searched workspace
# has it) and the query run through it. A part, like the libraries above: this version only.
FLOOR = "numpy + the query's vector"
FLOOR_CODE = (
    "import numpy, pathlib, sqlite3\n"
    "from dreamer.retrieval.embed import embedder_for\n"
    "embedder_for('auto').embed(['when is the deploy'])"
)
PARTS += (FLOOR,)


def _commands(note_ws: str, search_ws: str, home: str) -> dict[str, tuple[list[str], str]]:
    """Each measured command: its arguments after the interpreter, and its stdin."""
    cli = ["{dream}"]  # the copy's console script
    start = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": home})
    return {
        "python -c pass": (["-c", "pass"], ""),
        "import dreamer.cli": (["-c", "import dreamer.cli"], ""),
        "dream note": ([*cli, "note", "-w", note_ws, "cold start note {i} on the release"], ""),
        "dream search": ([*cli, "search", "-w", search_ws, "when is the deploy"], ""),
        LEFT: ([*cli, "search", "-w", search_ws, "when is the deploy"], ""),
        SERVED: ([*cli, "search", "-w", search_ws, "when is the deploy"], ""),
        "dream hook session-start": ([*cli, "hook", "session-start", "-w", search_ws], start),
        # What is left of them, for scale: the lock library of every write, the vector maths
        # of every search, the CLI framework.
        "import filelock": (["-c", "import filelock"], ""),
        "import numpy": (["-c", "import numpy"], ""),
        FLOOR: (["-c", FLOOR_CODE], ""),
        "import click": (["-c", "import click"], ""),
    }


def _run(argv: list[str], stdin: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one fresh process, started in $HOME (a
    folder without dreamer: ``-c`` and ``-m`` put the current folder first on sys.path)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *argv],
        input=stdin,
        env=env,
        cwd=env["HOME"],
        capture_output=True,
        text=True,
    )
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return wall, cpu


def _env(path: Path, home: Path, runtime: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAM_")}
    env.update(PYTHONPATH=str(path), PYTHONDONTWRITEBYTECODE="1", HOME=str(home))
    env.update(XDG_RUNTIME_DIR=str(runtime), DREAM_DREAM_ENABLED="false")
    env.update(DREAM_SEARCH_WARM_MINUTES="0")  # a search on its own leaves no door
    for blas in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(blas, "1")  # as dreamer.cli sets them, for the bare numpy import too
    env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def _check_copy(env: dict[str, str], path: Path) -> None:
    """The child processes import dreamer from the copy, not from the checkout."""
    where = subprocess.run(
        [sys.executable, "-c", "import dreamer; print(dreamer.__file__)"],
        env=env,
        cwd=env["HOME"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not where.startswith(str(path)):
        raise SystemExit(f"dreamer was imported from {where}, not from the copy at {path}")


def _serve(dream: Path, search_ws: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    """A ``dream serve`` over the searched workspace, once its door has answered a search."""
    with log.open("w") as out:
        serve = subprocess.Popen(
            [sys.executable, str(dream), "serve", "-w", search_ws, "-v"],
            env=env,
            cwd=env["HOME"],
            stdout=subprocess.DEVNULL,
            stderr=out,
        )
    deadline = time.monotonic() + 120
    while "search door: open at" not in log.read_text():
        if serve.poll() is not None or time.monotonic() > deadline:
            _stop(serve)
            raise SystemExit(f"dream serve opened no search door:\n{log.read_text()}")
        time.sleep(0.1)
    while True:  # its first search loads what the rounds then find loaded
        subprocess.run(
            [sys.executable, str(dream), "search", "-w", search_ws, "warm up"],
            env=env,
            cwd=env["HOME"],
            capture_output=True,
            check=True,
        )
        if "search door: answered" in log.read_text():
            return serve
        if time.monotonic() > deadline:
            _stop(serve)
            raise SystemExit(f"dream serve's door answered no search:\n{log.read_text()}")
        time.sleep(0.5)


def _stop(serve: subprocess.Popen) -> None:
    if serve.poll() is None:
        serve.send_signal(signal.SIGTERM)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()


def _stats(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50": statistics.median(ordered),
        "p90": ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))],
    }


def _rounds(
    runs: int,
    seed: int,
    pairs: list[tuple[str, str]],
    commands: dict[str, tuple[list[str], str]],
    paths: dict[str, Path],
    envs: dict[str, dict[str, str]],
    doors: dict[str, dict[str, dict[str, str]]],
) -> tuple[dict[tuple[str, str], list[float]], dict[tuple[str, str], list[float]]]:
    """Wall and CPU times of each (mode, command), ``runs`` shuffled rounds of every pair."""
    wall: dict[tuple[str, str], list[float]] = {pair: [] for pair in pairs}
    cpu: dict[tuple[str, str], list[float]] = {pair: [] for pair in pairs}
    order = random.Random(seed)
    for i in range(runs):
        order.shuffle(pairs)
        for mode, name in pairs:
            args, stdin = commands[name]
            argv = [
                a.replace("{i}", f"{mode.replace(' ', '-')}-{i}").replace(
                    "{dream}", str(paths[mode] / "dream")
                )
                for a in args
            ]
            w, c = _run(argv, stdin, doors.get(name, envs)[mode])
            wall[mode, name].append(w)
            cpu[mode, name].append(c)
    return wall, cpu


def measure(runs: int, notes: int, seed: int = 0, before: Path | None = None) -> dict[str, Any]:
    """Run the rounds; return p50/p90 wall, p50 CPU and ratio to bare Python per mode."""
    sources = {"": ROOT, **({", before": before} if before else {})}
    with tempfile.TemporaryDirectory(prefix="dream-coldstart-") as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        nowhere = base / "no-door"  # an empty runtime folder: no serve answers there
        nowhere.mkdir(mode=0o700)
        paths = {}
        for n, (label, source) in enumerate(sources.items()):
            paths["pyc" + label] = _copy(source, base / f"pyc{n}", compiled=True)
            paths["no pyc" + label] = _copy(source, base / f"src{n}", compiled=False)
        envs = {mode: _env(path, home, nowhere) for mode, path in paths.items()}
        # Each version's own serve and door (a door answers only the copy it runs from), and
        # its own folder for the door the first search leaves (at the default warm minutes).
        served, left = {}, {}
        for n, mode in enumerate(m for m in paths if not m.endswith("before")):
            runtime = base / f"door{n}"
            runtime.mkdir(mode=0o700)
            served[mode] = {**envs[mode], "XDG_RUNTIME_DIR": str(runtime)}
            runtime = base / f"left{n}"
            runtime.mkdir(mode=0o700)
            left[mode] = {**envs[mode], "XDG_RUNTIME_DIR": str(runtime)}
            del left[mode]["DREAM_SEARCH_WARM_MINUTES"]
        for mode, path in paths.items():
            _check_copy(envs[mode], path)
        sys.path.insert(0, str(ROOT))
        from dreamer import Workspace

        note_ws, search_ws = str(base / "note-ws"), str(base / "search-ws")
        with Workspace.open(note_ws) as opened:
            opened.init()
        with Workspace.open(search_ws) as opened:
            opened.init()
            for i in range(notes):
                opened.note(f"note {i}: the deploy of service {i % 17} moved to day {i % 7}")
        commands = _commands(note_ws, search_ws, str(home))
        pairs = [
            (mode, name)
            for mode in paths
            for name in commands
            # the same libraries; and a version before the search door has none
            if not (mode.endswith("before") and (name in PARTS or name in (LEFT, SERVED)))
        ]
        serves = []
        try:
            for mode, env in served.items():
                log = base / f"serve-{mode.replace(' ', '-')}.log"
                serves.append(_serve(paths[mode] / "dream", search_ws, env, log))
            doors = {SERVED: served, LEFT: left}
            wall, cpu = _rounds(runs, seed, pairs, commands, paths, envs, doors)
        finally:
            for serve in serves:
                _stop(serve)
            for mode, env in left.items():  # the doors the searches left
                dream = str(paths[mode] / "dream")
                # What it says goes nowhere: --json's output is the report alone.
                subprocess.run(
                    [sys.executable, dream, "door", "--stop"],
                    env=env,
                    cwd=env["HOME"],
                    stdout=subprocess.DEVNULL,
                )
        for mode, path in paths.items():
            stray = list((path / "dreamer").rglob("*.pyc")) if mode.startswith("no") else []
            if stray:
                raise SystemExit(f"the no-pyc copy gained {len(stray)} .pyc files; not measured")
    result: dict[str, Any] = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpu, {platform.platform()}",
        "python": platform.python_version(),
        "runs": runs,
        "notes": notes,
        "modes": {},
    }
    for mode in paths:
        floor = statistics.median(wall[mode, "python -c pass"])
        floor_cpu = statistics.median(cpu[mode, "python -c pass"])
        rows = {}
        for name in commands:
            if (mode, name) not in wall:
                continue
            row = _stats(wall[mode, name])
            row["cpu_p50"] = statistics.median(cpu[mode, name])
            row["ratio"] = row["p50"] / floor
            row["cpu_ratio"] = row["cpu_p50"] / floor_cpu
            rows[name] = row
        result["modes"][mode] = rows
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="rounds [default: 15]")
    parser.add_argument("--notes", type=int, default=200, help="notes in the searched workspace")
    parser.add_argument("--seed", type=int, default=0, help="seed of the shuffled order")
    parser.add_argument(
        "--before", type=Path, default=None, help="another version's folder, measured alongside"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    opts = parser.parse_args()
    result = measure(opts.runs, opts.notes, opts.seed, opts.before)
    if opts.json:
        print(json.dumps(result, indent=2))
        return
    print(f"machine: {result['machine']}, Python {result['python']}")
    print(
        f"{opts.runs} interleaved rounds: wall p50 (p90), and its ratio to bare Python's; "
        "CPU p50, and its ratio"
    )
    failed = []
    for mode, rows in result["modes"].items():
        print(f"\n[{mode}]")
        for name, row in rows.items():
            target = TARGETS.get(name)
            verdict = ""
            if target is not None:
                ok = row["cpu_ratio"] <= target
                verdict = f"  (budget CPU <= {target:g}x: {'met' if ok else 'NOT met'})"
                if not ok and not mode.endswith("before"):
                    failed.append(f"{name} [{mode}]")
            print(
                f"{name:<38} {row['p50']:6.0f} ms ({row['p90']:4.0f}) {row['ratio']:5.1f}x"
                f"   cpu {row['cpu_p50']:5.0f} ms {row['cpu_ratio']:5.1f}x{verdict}"
            )
    print("\nall targets met" if not failed else f"\nnot met: {', '.join(failed)}")


if __name__ == "__main__":
    main()
