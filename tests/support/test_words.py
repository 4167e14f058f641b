"""One owner for stop words, stemming and tokenising: ``dreamer.support.words``."""

from __future__ import annotations

import ast
from pathlib import Path

from dreamer.support import words

PACKAGE = Path(words.__file__).resolve().parents[1]
OWNER = Path(words.__file__).resolve()


def test_the_exceptions_are_built_from_the_stop_words():
    assert words.EMBEDDING_STOP_WORDS < words.STOP_WORDS
    assert words.QUERY_STOP_WORDS == words.STOP_WORDS | words.CONTRACTION_PIECES
    assert words.NOTE_STOP_WORDS > words.STOP_WORDS
    assert words.RESTATEMENT_STOP_WORDS < words.NOTE_STOP_WORDS


def test_a_query_splits_at_apostrophes_and_drops_the_pieces():
    kept = [
        w for w in words.words("Don't deploy the payments API") if w not in words.QUERY_STOP_WORDS
    ]
    assert kept == ["deploy", "payments", "api"]


def test_keywords_keep_words_whole_and_drop_note_stop_words():
    assert words.keywords("The user asked: don't re-deploy the e-mail service yourself") == [
        "don't",
        "re-deploy",
        "e-mail",
        "service",
    ]
    assert words.stems("deploying deployed deploys") == {"deploy"}


def test_stem_is_light():
    assert [words.stem(w) for w in ("deploying", "cities", "quickly", "bus")] == [
        "deploy",
        "cit",
        "quick",
        "bus",
    ]


def _listed_words(node: ast.AST) -> set[str]:
    """The words a node lists: ``"...".split()``, or a set, list or tuple of strings."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "split" and isinstance(node.func.value, ast.Constant):
            return set(str(node.func.value.value).split())
    if isinstance(node, ast.Set | ast.List | ast.Tuple):
        return {
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        }
    return set()


def test_no_module_but_the_owner_keeps_a_list_of_function_words():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.resolve() == OWNER or "bench" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            common = _listed_words(node) & words.STOP_WORDS
            if len(common) >= 6:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {sorted(common)}")
    assert not found, "stop words belong in dreamer/support/words.py:\n" + "\n".join(found)
