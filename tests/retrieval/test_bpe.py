"""The SQLite BPE table tokenizes plain texts exactly as WordLlama's tokenizer does."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from dreamer.retrieval import bpe, static

pytestmark = pytest.mark.skipif(not static.available(), reason="wordllama is not installed")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    from tokenizers import Tokenizer

    folder = static._package_dir()
    assert folder is not None
    source = folder / static._TOKENIZER
    table = bpe.open_table(source, tmp_path_factory.mktemp("bpe") / "table.sqlite3")
    assert table is not None
    yield table, Tokenizer.from_file(str(source)), json.loads(source.read_text())["model"]
    table.close()


def _agree(table, tokenizer, texts):
    wrong = []
    for text in texts:
        ids = table.ids(text)
        if ids is None:
            continue
        if ids != tokenizer.encode(text, add_special_tokens=False).ids:
            wrong.append(text)
    return wrong


@pytest.mark.slow
def test_every_vocabulary_token_as_a_word_tokenizes_the_same(both):
    table, tokenizer, model = both
    words = [token.lstrip("▁") for token in list(model["vocab"])[::2]]  # every other: 16,000
    words = [w for w in words if w and not w.startswith("<")]
    checked = [w for w in words if table.ids(w) is not None]
    assert len(checked) > 12_000
    assert _agree(table, tokenizer, words) == []


@pytest.mark.slow
def test_real_sentences_tokenize_the_same(both):
    table, tokenizer, _ = both
    texts = []
    for name in ("dev.jsonl", "test.jsonl"):
        for line in (ROOT / "benchmarks" / "paraphrase" / name).read_text().splitlines():
            texts.extend(v for v in json.loads(line).values() if isinstance(v, str))
    texts += (ROOT / "benchmarks" / "paraphrase" / "distractors.txt").read_text().splitlines()
    pick = random.Random(5)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789.,;:!?'\"-()/éüñ€"
    texts += [
        " ".join(
            "".join(pick.choice(letters) for _ in range(pick.randint(1, 14))) for _ in range(6)
        )
        for _ in range(3000)
    ]
    plain = [text for text in texts if table.ids(text) is not None]
    assert len(plain) > 3000
    assert _agree(table, tokenizer, texts) == []


@pytest.mark.parametrize(
    "text", ["two  spaces", " leading", "trailing ", "new\nline", "tab\there", "", "emoji 🙂"]
)
def test_texts_that_are_not_plain_go_to_the_real_tokenizer(both, text):
    table, _, _ = both
    assert table.ids(text) is None


def test_the_embedder_gives_the_same_vectors_either_way(both):
    import numpy as np

    embedder = static.StaticEmbedder()
    texts = ["where did we put the kiln keys", "Ada prefers dark mode", "a\nb  c"]
    fast = embedder.embed(texts)  # few texts: through the table where plain
    slow = embedder.embed(texts * 10)[:3]  # a big batch: the tokenizer for all
    assert np.array_equal(fast, slow)


def test_a_damaged_cache_file_falls_back_to_the_tokenizer(tmp_path):
    folder = static._package_dir()
    cache = tmp_path / "table.sqlite3"
    table = bpe.open_table(folder / static._TOKENIZER, cache)
    cache.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)  # damaged after it was opened
    assert table.ids("plain words here") is None
    table.close()


def test_a_tokenizer_of_another_shape_gets_no_table(tmp_path):
    other = tmp_path / "tokenizer.json"
    other.write_text(json.dumps({"model": {"type": "WordPiece", "vocab": {}}, "normalizer": None}))
    assert bpe.open_table(other, tmp_path / "t.sqlite3") is None


@pytest.mark.slow
def test_ranks_and_ids_kept_in_memory_give_the_tokenizers_answer(both, monkeypatch):
    """A word's BPE reads pairs' ranks and symbols' ids once a process (most of a new word's
    pairs were seen in other words); kept or read again after the memory filled, the same."""
    _, tokenizer, model = both
    monkeypatch.setattr(bpe, "LOOKUP_CACHE", 300)  # fills and starts again many times
    table = bpe.TokenTable(both[0].path)  # a table of its own: nothing kept yet
    try:
        words = [token.lstrip("▁") for token in list(model["vocab"])[1::7]]
        words = [w for w in words if w and not w.startswith("<")]
        pick = random.Random(9)
        letters = "bdfgklmnprstvzaeiou"
        made_up = ["".join(pick.choice(letters) for _ in range(9)) for _ in range(800)]
        statements: list[str] = []
        table._file._conn.set_trace_callback(statements.append)
        assert _agree(table, tokenizer, words + made_up) == []
        assert table._ranks and len(table._ranks) <= 300
        before = len(statements)
        table._words.clear()  # the words again: their pairs' ranks are kept
        monkeypatch.setattr(bpe, "LOOKUP_CACHE", 10**6)
        assert _agree(table, tokenizer, made_up) == []
        assert _agree(table, tokenizer, made_up) == []
        table._words.clear()
        again = len(statements)
        assert _agree(table, tokenizer, made_up) == []
        assert len(statements) == again  # nothing read: every rank and id kept
        assert again > before
    finally:
        table._file._conn.set_trace_callback(None)
        table.close()
