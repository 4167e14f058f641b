"""Plant each known safety bug, one at a time, and check that its test fails.

Run from the repository root: ``python benchmarks/planted_bugs.py`` (or give bug numbers:
``python benchmarks/planted_bugs.py 3 17``). The repository is copied to a temporary folder
and the bugs are planted there (``PYTHONPATH`` points the tests at the copy), so the working
tree is never edited. Prints one line per bug: CAUGHT when its test failed, MISSED when it
passed. docs/contributing/testing.md has the table of bugs and tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutation import _copy  # noqa: E402  (benchmarks/ is not a package)

S = "tests/safety/test_safety_scratch.py::"
F = "tests/safety/test_safety_forget.py::"
G = "tests/safety/test_safety_guards.py::"
R = "tests/safety/test_safety_redaction.py::"
L = "tests/safety/test_safety_leases.py::"
FORGET_UPDATE = (
    "\"UPDATE crystals SET text = '', embedding = NULL, embedder = NULL, origin = NULL,\""
)
ROTATE_COPY = "        atomic_write(aside, _encode(content))\n"
ROTATE_EMPTY = (
    '        fresh = HEADER + "\\n" + "".join(line + "\\n" for _, line in parsed.stray)\n'
    "        atomic_write(path, _encode(fresh))\n"
)
# (number, what, file, [(old, new), ...], tests)
# (number, what, file or files, edits or one list of edits a file, tests that must fail)
BUGS: list[tuple[str, str, Any, list[Any], list[str]]] = [
    (
        "1",
        "a note appended without fsync",
        "dreamer/memory/scratch_file.py",
        [("        write_all(fd, data)\n        os.fsync(fd)\n", "        write_all(fd, data)\n")],
        [S + "test_an_append_is_synced_before_it_returns"],
    ),
    (
        "2",
        "a note appended without the scratch lock",
        "dreamer/memory/scratch_file.py",
        [
            (
                "    with locked(path):\n        _append_unlocked(path, line)",
                "    if True:\n        _append_unlocked(path, line)",
            )
        ],
        [S + "test_every_change_to_the_scratch_files_is_made_under_the_scratch_lock"],
    ),
    (
        "3",
        "rotation empties the scratch before its copy is written",
        "dreamer/memory/scratch.py",
        [(ROTATE_COPY + ROTATE_EMPTY, ROTATE_EMPTY + ROTATE_COPY)],
        [S + "test_a_kill_at_any_file_call_loses_no_note_and_recovery_doubles_none"],
    ),
    (
        "4",
        "an interrupted dream skips putting the notes back (except Exception)",
        "dreamer/dream/cycle.py",
        [
            (
                "        except BaseException as e:\n            self._fail(e)",
                "        except Exception as e:\n            self._fail(e)",
            )
        ],
        ["tests/safety/test_safety_cycle.py"],
    ),
    (
        "5",
        "the Bond-drift threshold halved",
        "dreamer/dream/guards.py",
        [("BOND_KEEP_RATIO = 0.3\n", "BOND_KEEP_RATIO = 0.15\n")],
        [G + "test_the_bond_drift_line_is_at_thirty_percent"],
    ),
    (
        "6",
        "the presence guard skips the last section",
        "dreamer/dream/guards.py",
        [("for s in sections() if s.key not in", "for s in list(sections())[:-1] if s.key not in")],
        [G + "test_each_of_the_seven_sections_is_required"],
    ),
    (
        "7",
        "a note's raw, unredacted text written to the scratch",
        "dreamer/memory/workspace.py",
        [
            (
                "        text = self.redact(text).text\n        about =",
                "        raw, text = text, self.redact(text).text\n        about =",
            ),
            (
                "Note(at=moment, importance=importance, text=text, about=about, replaces=replaces)",
                "Note(at=moment, importance=importance, text=raw, about=about, replaces=replaces)",
            ),
        ],
        [R + "test_a_note_reaches_the_scratch_file_redacted"],
    ),
    (
        "8",
        "a revision's replayed draft sent unredacted (the request, and the answer wrap that "
        "redacts the draft first)",
        ("dreamer/dream/synth/claude.py", "dreamer/dream/synth/__init__.py"),
        [
            [
                (
                    'return {**request, "messages": redacted(request["messages"])}',
                    'return {**request, "messages": redacted(request["messages"][:1])'
                    ' + request["messages"][1:]}',
                )
            ],
            [
                (
                    "bodies={key: self.redact(body) for key, body in state.bodies.items()},",
                    "bodies=dict(state.bodies),",
                )
            ],
        ],
        [R + "test_a_revision_request_replays_the_draft_redacted"],
    ),
    (
        "9",
        "forget leaves the note in the scratch",
        "dreamer/memory/forgetting.py",
        [("    ws.scratch.rewrite(drop_note)\n", "")],
        [F + "test_the_note_leaves_the_scratch_file"],
    ),
    (
        "10",
        "forget skips the purge",
        "dreamer/memory/forgetting.py",
        [("    store.forgetting.purge()\n", "")],
        [F + "test_no_byte_of_the_text_or_its_vector_is_left_in_the_database_files"],
    ),
    (
        "11",
        "forget keeps the embedding vector (SQLite)",
        "dreamer/store/sqlite/crystals.py",
        [(FORGET_UPDATE, "\"UPDATE crystals SET text = '', origin = NULL,\"")],
        [F + "test_the_vector_is_gone"],
    ),
    (
        "11pg",
        "forget keeps the embedding vector (PostgreSQL)",
        "dreamer/store/postgres/crystals.py",
        [(FORGET_UPDATE, "\"UPDATE crystals SET text = '', origin = NULL,\"")],
        [F + "test_on_postgres_the_tsvector_and_the_rows_forget_too"],
    ),
    (
        "12",
        "forget keeps the search-log entry",
        "dreamer/store/records.py",
        [('    "searches": ("query",),\n', "")],
        [F + "test_the_search_log_forgets_the_query"],
    ),
    (
        "13",
        "forget keeps PostgreSQL's tsvector",
        "dreamer/store/postgres/crystals.py",
        [("\" tsv = ''::tsvector, doc_len = 0", '" doc_len = 0')],
        [F + "test_on_postgres_the_tsvector_and_the_rows_forget_too"],
    ),
    (
        "14",
        "atomic writes without fsync",
        "dreamer/support/files.py",
        [("        write_all(fd, data)\n        os.fsync(fd)\n", "        write_all(fd, data)\n")],
        ["tests/safety/test_safety_files.py"],
    ),
    (
        "15",
        "atomic writes in place (no temp file + rename)",
        "dreamer/support/files.py",
        [
            (
                'temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")',
                "temp = path",
            )
        ],
        ["tests/safety/test_safety_files.py"],
    ),
    (
        "16",
        "a long dream's workspace lease never renewed",
        "dreamer/memory/lease.py",
        [("while not stop.wait(ttl.total_seconds() / 3):", "while not stop.wait(3600):")],
        [L + "test_a_long_dream_keeps_its_workspace_lease"],
    ),
    (
        "16job",
        "a long dream's job lease never renewed",
        "dreamer/service/worker.py",
        [
            (
                "while not self._stop.wait(self.lease.total_seconds() / 3):",
                "while not self._stop.wait(3600):",
            )
        ],
        [L + "test_a_long_dream_keeps_its_job"],
    ),
    (
        "17",
        "forget leaves the crystal's words in the FTS index (no merge)",
        "dreamer/store/sqlite/crystals.py",
        [
            (
                "self.db.execute(\"INSERT INTO crystals_fts(crystals_fts) VALUES ('optimize')\")",
                "pass",
            )
        ],
        [F + "test_no_byte_of_the_text_or_its_vector_is_left_in_the_database_files"],
    ),
]


def plant(copy: Path, path: str, edits: list[tuple[str, str]]) -> str:
    """Make the edits in the copy; return the file's original text."""
    target = copy / path
    original = target.read_text(encoding="utf-8")
    text = original
    for old, new in edits:
        if text.count(old) != 1:
            raise SystemExit(f"Error: {path} changed; the bug's line is no longer there: {old!r}")
        text = text.replace(old, new)
    target.write_text(text, encoding="utf-8")
    return original


def main(argv: list[str]) -> int:
    """Plant the chosen bugs (default: all) one at a time; exit 1 if one was missed."""
    chosen = [bug for bug in BUGS if not argv or bug[0] in argv]
    missed = 0
    with tempfile.TemporaryDirectory(prefix="dreamer-planted-") as folder:
        copy = Path(folder)
        _copy(copy)
        env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
        for number, what, path, edits, tests in chosen:
            # A bug in two places (two layers that each keep a promise) names both files.
            paths, groups = (path, edits) if isinstance(path, tuple) else ((path,), [edits])
            pairs = zip(paths, groups, strict=True)
            originals = {one: plant(copy, one, group) for one, group in pairs}
            try:
                # -m "": every tier of the named tests (pytest -q alone runs the fast one)
                ran = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
                    + ["-m", "", *tests],
                    cwd=copy,
                    env=env,
                    capture_output=True,
                    text=True,
                )
            finally:
                for one, original in originals.items():
                    (copy / one).write_text(original, encoding="utf-8")
            caught = ran.returncode == 1
            missed += not caught
            summary = (ran.stdout.strip().splitlines() or ["(no output)"])[-1]
            print(f"bug {number:5} {'CAUGHT' if caught else 'MISSED'}  {what}: {summary}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
