"""Mutation testing of dreamer's safety modules: how many planted bugs the tests catch.

The tool is mutmut 3 (not a dependency of dreamer or of its tests; install it first)::

    pip install mutmut
    python benchmarks/mutation.py                    # every target, one after the other
    python benchmarks/mutation.py files guards       # some targets
    python benchmarks/mutation.py --list             # the targets and their test files

Each target is one module (or some functions of one) with the few test files that exercise it,
so a mutant runs in seconds. The repository is copied to a temporary folder first (mutmut
writes a ``mutants/`` folder beside the code; the working tree is left alone), mutmut runs there
with one worker under ``nice``, and the figures are printed: mutants, killed, survived, not
covered by the target's tests, kill rate, run time, then every survivor as a diff. The machine
this is meant for has two cores shared with other work: run targets one at a time.

A timeout counts as killed (the mutant hung the tests: a user would notice). A mutant no test of
the target reaches counts as a survivor in the kill rate. docs/contributing/testing.md holds the
last figures and why each remaining survivor is harmless.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Target:
    """One module (or some of its functions) and the test files that must catch its bugs."""

    name: str
    module: str  # path of the source file, from the repository root
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()  # mutant name globs; empty: the whole module
    why: str = ""


TARGETS = (
    Target(
        "files",
        "dreamer/support/files.py",
        (
            "tests/support/test_files.py",
            "tests/safety/test_safety_files.py",
            "tests/memory/test_scratch_log.py",
        ),
        why="atomic writes (temp file, fsync, rename), durable appends, file stamps",
    ),
    Target(
        "scratch",
        "dreamer/memory/scratch.py",
        ("tests/memory/test_scratch.py", "tests/safety/test_safety_scratch.py"),
        why="the write-ahead log: parse, rotate, restore, settle, rewrite",
    ),
    Target(
        "scratch_file",
        "dreamer/memory/scratch_file.py",
        ("tests/memory/test_scratch.py", "tests/safety/test_safety_scratch.py"),
        why="the write-ahead log's append: its format, its lock, its durable write",
    ),
    Target(
        "scratch_rows",
        "dreamer/memory/scratch_rows.py",
        ("tests/memory/test_scratch_log.py", "tests/memory/test_scratch_rows_edges.py"),
        why="the scratch as rows of a shared store (PostgreSQL: set DREAMER_REQUIRE_POSTGRES=1)",
    ),
    Target(
        "guards",
        "dreamer/dream/guards.py",
        ("tests/dream/test_guards.py", "tests/safety/test_safety_guards.py"),
        why="the collapse guards that keep a bad rewrite out of MEMORY.md",
    ),
    Target(
        "leases",
        "dreamer/store/postgres/leases.py",
        ("tests/store/test_store_postgres.py", "tests/safety/test_safety_leases.py"),
        why="the workspace lease and its fencing token on PostgreSQL",
    ),
    Target(
        "store_forget",
        "dreamer/store/sqlite/crystals.py",
        ("tests/safety/test_safety_forget.py", "tests/memory/test_forget.py"),
        functions=("*forget_crystal__mutmut_*",),
        why="the SQLite store's forget",
    ),
    Target(
        "store_purge",
        "dreamer/store/sqlite/crystals.py",
        ("tests/safety/test_safety_forget.py", "tests/memory/test_forget.py"),
        functions=("*purge__mutmut_*",),
        why="the SQLite purge (FTS merge, WAL truncation)",
    ),
    Target(
        "store_rewrite",
        "dreamer/store/sqlite/journal.py",
        ("tests/safety/test_safety_forget.py", "tests/memory/test_forget.py"),
        functions=("*rewrite_texts__mutmut_*",),
        why="the journal, search log and reasons a forget rewrites",
    ),
    Target(
        "cycle",
        "dreamer/dream/cycle.py",
        # The in-process crashes only: a killed child process runs the installed, unmutated code.
        (
            "tests/safety/test_safety_cycle.py",
            "tests/safety/test_safety_cycle_journal.py",
            "tests/dream/test_hand_edits_during.py",
            "tests/dream/test_dream.py",
            "tests/dream/test_review.py",
            "tests/dream/test_budget.py",
            "tests/dream/test_pins.py",
            "tests/dream/test_bounded_dreams.py",
            "tests/support/test_secrets_answers.py",
            "tests/dream/test_dream_crash.py::test_an_exception_at_any_step",
        ),
        functions=(
            "*ǁ_Dreamǁrun__mutmut_*",
            "*ǁ_Dreamǁ_dream__mutmut_*",
            "*ǁ_Dreamǁ_commit__mutmut_*",
            "*ǁ_Dreamǁ_fail__mutmut_*",
            "*ǁ_Dreamǁsynth__mutmut_*",
        ),
        why="the dream's safety code: recovery of rotated notes, the redaction of answers, the "
        "re-dream over a hand edit, the commit and the put-back on failure or interrupt",
    ),
    Target(
        "forgetting",
        "dreamer/memory/forgetting.py",
        (
            "tests/memory/test_forget.py",
            "tests/safety/test_safety_forget.py",
            "tests/memory/test_forget_edges.py",
            "tests/memory/test_forget_derived.py",
        ),
        why="explicit forgetting everywhere, derived text (labels, keywords, summaries) included",
    ),
    Target(
        "forget_derived",
        "dreamer/memory/forgetting.py",
        ("tests/memory/test_forget_derived.py", "tests/memory/test_forget_edges.py"),
        functions=(
            "*x_lost_words__mutmut_*",
            "*x_hand_written__mutmut_*",
            "*x_holds_lost__mutmut_*",
            "*x__stems_of__mutmut_*",
            "*x__stems__mutmut_*",
            "*x__gone__mutmut_*",
        ),
        why="the cleaning of derived text: the words no memory holds any more after a forget",
    ),
    Target(
        "forget_text",
        "dreamer/memory/forgetting.py",
        (
            "tests/memory/test_forget_edges.py",
            "tests/memory/test_forget_derived.py",
            "tests/memory/test_forget.py",
            "tests/memory/test_forget_text_edges.py",
        ),
        functions=(
            "*x_carries__mutmut_*",
            "*x_names__mutmut_*",
            "*x_scrub__mutmut_*",
            "*x__scrub_piece__mutmut_*",
            "*x_map_stored__mutmut_*",
            "*x__map_json__mutmut_*",
            "*x__normal__mutmut_*",
            "*x__shape_lines__mutmut_*",
            "*x__placeholder_hash__mutmut_*",
            "*x_crystal_ids__mutmut_*",
        ),
        why="which lines and stored strings a forget takes out, and the ids it takes",
    ),
    Target(
        "forget_run",
        "dreamer/memory/forgetting.py",
        (
            "tests/memory/test_forget_edges.py",
            "tests/safety/test_safety_forget.py",
            "tests/memory/test_forget.py",
            "tests/memory/test_forget_run_edges.py",
        ),
        functions=(
            "*x_forget__mutmut_*",
            "*ForgetReport*",
            "*x_seed_backups__mutmut_*",
            "*x_rewrite_backups__mutmut_*",
            "*x_remove_report__mutmut_*",
        ),
        why="a forget everywhere: crystals, scratch, MEMORY.md, journal, backups, report, receipt",
    ),
    Target(
        "secrets",
        "dreamer/support/secrets.py",
        (
            "tests/support/test_secrets.py",
            "tests/support/test_secrets_rules.py",
            "tests/support/test_redaction.py",
            "tests/support/test_secrets_shapes.py",
            "tests/support/test_secrets_prose_edges.py",
        ),
        why="the secret detector: shapes, the prose detectors' gates, placeholders",
    ),
    Target(
        "secrets_rules",
        "dreamer/support/secrets_rules.py",
        (
            "tests/support/test_secrets.py",
            "tests/support/test_secrets_rules.py",
            "tests/support/test_redaction.py",
            "tests/support/test_secrets_rules_edges.py",
        ),
        why="the gitleaks rules engine: keywords, allow lists, entropy",
    ),
    Target(
        "secrets_prose",
        "dreamer/support/secrets_prose.py",
        (
            "tests/support/test_secrets.py",
            "tests/support/test_secrets_rules.py",
            "tests/support/test_redaction.py",
            "tests/support/test_secrets_prose_edges.py",
        ),
        why="secrets given in words and said in prose: keywords, phrases, bare keys, logins",
    ),
    Target(
        "secrets_numbers",
        "dreamer/support/secrets_numbers.py",
        (
            "tests/support/test_secrets.py",
            "tests/support/test_secrets_rules.py",
            "tests/support/test_redaction.py",
            "tests/support/test_secrets_prose_edges.py",
        ),
        why="secrets written as numbers: card numbers, IBANs, social security numbers",
    ),
    Target(
        "provenance",
        "dreamer/memory/provenance.py",
        (
            "tests/memory/test_provenance.py",
            "tests/agents/test_capture_provenance.py",
            "tests/dream/test_dropped_lines.py",
        ),
        why="who said what: the speaker of a note and whether it may set a rule",
    ),
    Target(
        "held",
        "dreamer/memory/held.py",
        (
            "tests/memory/test_held.py",
            "tests/agents/test_capture_provenance.py",
            "tests/dream/test_dropped_lines.py",
        ),
        why="the held set: instructions from a source that may not set rules, never promoted",
    ),
    Target(
        "speakers",
        "dreamer/agents/speakers.py",
        (
            "tests/agents/test_capture_provenance.py",
            # not test_ingest_claude_code.py and test_ingest_codex.py: their hooks start child
            # processes, which mutmut 3.8.1's worker pool reaps as its own and then fails
            "tests/agents/test_ingest.py",
            "tests/agents/test_speakers_edges.py",
        ),
        why="a captured exchange split by who said what, the agent's promises and dumps dropped",
    ),
    Target(
        "harness",
        "dreamer/agents/harness.py",
        (
            "tests/agents/test_capture_provenance.py",
            # not test_ingest_claude_code.py and test_ingest_codex.py: their hooks start child
            # processes, which mutmut 3.8.1's worker pool reaps as its own and then fails
            "tests/agents/test_ingest.py",
            "tests/agents/test_speakers_edges.py",
            "tests/agents/test_harness_edges.py",
        ),
        why="the harness's markup out of the words, machine paths made relative, tool output "
        "reduced to its outcome",
    ),
    Target(
        "dropped",
        "dreamer/dream/dropped.py",
        ("tests/dream/test_dropped_lines.py",),
        why="the lines a rule takes out of a draft, each with its reason",
    ),
    Target(
        "numbers",
        "dreamer/dream/numbers.py",
        ("tests/dream/test_numbers.py",),
        why="the dates, amounts and counts a draft writes must stand in the evidence",
    ),
    Target(
        "forget_pending",
        "dreamer/memory/forget_pending.py",
        (
            "tests/memory/test_forget_pending.py",
            "tests/memory/test_forget_requests.py",
            "tests/memory/test_forget_pending_edges.py",
        ),
        why="forget requests that wait for the user: confirm, dismiss, keep no words when done",
    ),
    Target(
        "forget_search",
        "dreamer/memory/forget_search.py",
        (
            "tests/memory/test_forget_search.py",
            "tests/memory/test_forget_phrase.py",
            "tests/memory/test_forget_search_edges.py",
        ),
        why="which crystals a forget query names: every word of it, never a neighbour",
    ),
    Target(
        "reconnect",
        "dreamer/store/postgres/base.py",
        # PostgreSQL: set DREAMER_REQUIRE_POSTGRES=1, so that a server that cannot start fails
        ("tests/store/test_pg_reconnect_edges.py", "tests/store/test_pg_reconnect.py"),
        functions=(
            "*x_alive__mutmut_*",
            "*ǁConnectedǁ_execute__mutmut_*",
            "*ǁConnectedǁ_reconnect__mutmut_*",
            "*x__reads_only__mutmut_*",
        ),
        why="the PostgreSQL store's reconnect: a dead connection replaced, only reads sent again",
    ),
    Target(
        "secrets_unnamed",
        "dreamer/support/secrets_unnamed.py",
        (
            "tests/support/test_secrets.py",
            "tests/support/test_secrets_unnamed.py",
            "tests/support/test_secrets_boundary.py",
            "tests/support/test_secrets_unnamed_edges.py",
        ),
        why="secrets no rule names: key-shaped tokens, secret-looking settings, base64 by a key",
    ),
    Target(
        "secrets_sentences",
        "dreamer/support/secrets_sentences.py",
        (
            "tests/support/test_secrets.py",
            "tests/support/test_secrets_unnamed.py",
            "tests/support/test_secrets_words.py",
            "tests/support/test_secrets_prose_edges.py",
        ),
        why="a password said in a sentence, in any of its languages",
    ),
)
BY_NAME = {target.name: target for target in TARGETS}


def _project_files() -> list[str]:
    """The files of the working tree git knows or would add (no caches, no venv)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def _copy(into: Path) -> None:
    for name in _project_files():
        dest = into / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dest)


def _configure(copy: Path, target: Target) -> None:
    tests = [t for t in target.tests if (copy / t.split("::")[0]).exists()]
    lines = [
        "",
        "[tool.mutmut]",
        'source_paths = ["dreamer"]',
        f"only_mutate = [{json.dumps(target.module)}]",
        'also_copy = ["prompts", "schemas", "plugin", "benchmarks"]',
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
        # -m "": every tier of the chosen tests (pytest -q alone runs the fast one)
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x", "-m", ""]',
    ]
    with (copy / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def _mutmut(copy: Path, *args: str, nice: int) -> subprocess.CompletedProcess[str]:
    command = ["nice", "-n", str(nice), sys.executable, "-m", "mutmut", *args]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, cwd=copy, capture_output=True, text=True, env=env)


def run_target(target: Target, *, nice: int, keep: bool) -> dict[str, object]:
    """Run mutmut on one target in a fresh copy; return its figures and survivors."""
    folder = Path(tempfile.mkdtemp(prefix=f"dreamer-mutation-{target.name}-"))
    try:
        _copy(folder)
        _configure(folder, target)
        started = time.monotonic()
        ran = _mutmut(folder, "run", "--max-children", "1", *target.functions, nice=nice)
        seconds = time.monotonic() - started
        if ran.returncode != 0:
            tail = "\n".join((ran.stdout + ran.stderr).splitlines()[-15:])
            raise RuntimeError(f"mutmut run failed for {target.name}:\n{tail}")
        _mutmut(folder, "export-cicd-stats", nice=nice)
        stats = json.loads((folder / "mutants" / "mutmut-cicd-stats.json").read_text())
        listed = _mutmut(folder, "results", "--all", "true", nice=nice).stdout
        wanted = _selected(listed, target)
        survivors = [name for name, status in wanted if status in ("survived", "no tests")]
        counts = {status: sum(1 for _, s in wanted if s == status) for _, status in wanted}
        killed = counts.get("killed", 0) + counts.get("timeout", 0)
        total = len(wanted) - counts.get("skipped", 0)
        diffs = {name: _mutmut(folder, "show", name, nice=nice).stdout for name in survivors}
        return {
            "target": target.name,
            "module": target.module,
            "functions": list(target.functions),
            "tests": list(target.tests),
            "mutants": total,
            "killed": killed,
            "survived": counts.get("survived", 0),
            "no_tests": counts.get("no tests", 0),
            "kill_rate": round(killed / total, 4) if total else None,
            "seconds": round(seconds),
            "mutmut_totals": stats,
            "survivors": diffs,
        }
    finally:
        if keep:
            print(f"kept {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


def _selected(listed: str, target: Target) -> list[tuple[str, str]]:
    """(mutant, status) of the target's mutants from ``mutmut results --all true``."""
    import fnmatch

    out = []
    for line in listed.splitlines():
        name, sep, status = line.strip().partition(": ")
        if not sep or "__mutmut_" not in name:
            continue
        if target.functions and not any(fnmatch.fnmatch(name, g) for g in target.functions):
            continue
        out.append((name, status.strip()))
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run the targets, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="target names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the targets and exit")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--nice", type=int, default=10, help="niceness of mutmut (default 10)")
    parser.add_argument("--keep", action="store_true", help="keep each temporary copy")
    args = parser.parse_args(argv)
    if args.list:
        for target in TARGETS:
            scope = ", ".join(target.functions) or "whole module"
            print(f"{target.name:14} {target.module} ({scope}): {target.why}")
            print(f"{'':14} tests: {' '.join(target.tests)}")
        return 0
    unknown = [name for name in args.targets if name not in BY_NAME]
    if unknown:
        print(f"Error: unknown target(s) {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    try:
        import mutmut  # noqa: F401  (only to say how to install it)
    except ImportError:
        print("Error: mutmut is not installed; run 'pip install mutmut' first", file=sys.stderr)
        return 2
    from importlib.metadata import version

    print(f"mutmut {version('mutmut')}, {os.cpu_count()} cores, 1 worker")
    results = []
    for target in [BY_NAME[name] for name in args.targets] or list(TARGETS):
        print(f"== {target.name}: {target.module} {' '.join(target.functions)}", flush=True)
        result = run_target(target, nice=args.nice, keep=args.keep)
        results.append(result)
        rate = result["kill_rate"]
        print(
            f"   {result['mutants']} mutants, {result['killed']} killed, "
            f"{result['survived']} survived, {result['no_tests']} not reached by its tests; "
            f"kill rate {rate:.1%} in {result['seconds']} s"
            if isinstance(rate, float)
            else "   no mutants",
            flush=True,
        )
        for name, diff in result["survivors"].items():  # type: ignore[union-attr]
            print(f"   -- {name}\n" + "\n".join("      " + line for line in diff.splitlines()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
