"""The static embedder (WordLlama's vectors shipped in a wheel, the fallback when the sentence
model is missing), re-embedding after a change of embedder, near-duplicates."""

from __future__ import annotations

import logging
from datetime import timedelta

import numpy as np
import pytest

from dreamer import Workspace
from dreamer.memory import lifecycle
from dreamer.retrieval import static
from dreamer.retrieval.embed import HashingEmbedder, embedder_for
from dreamer.retrieval.reindex import reindex

pytestmark = pytest.mark.skipif(not static.available(), reason="wordllama is not installed")


def test_the_static_embedder_loads_offline_without_touching_logging():
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    embedder = embedder_for("wordllama")
    vectors = embedder.embed(
        ["User prefers dark mode", "editor theme", "", "billing runs Tuesdays"]
    )
    assert (list(root.handlers), root.level) == before
    assert isinstance(embedder, static.StaticEmbedder) and embedder.dim == 256
    assert embedder.name.startswith("wordllama-l2_supercat-256@")
    assert vectors.dtype == np.float32 and vectors.shape == (4, 256)
    assert np.allclose(np.linalg.norm(vectors[[0, 1, 3]], axis=1), 1.0, atol=1e-5)
    assert not vectors[2].any()  # no token, no direction
    theme = vectors[0] @ vectors[1]
    assert theme > vectors[0] @ vectors[3] and theme > vectors[1] @ vectors[3]


def test_it_computes_what_wordllama_itself_computes():
    wordllama = pytest.importorskip("wordllama")
    from pathlib import Path

    model = wordllama.WordLlama.load(
        cache_dir=Path(wordllama.__file__).parent, disable_download=True
    )
    texts = ["Douglas's daughter Mia starts school on March 16", "ünïcödé, emoji 🎉 and tabs\t"]
    assert np.allclose(
        model.embed(texts, norm=True), embedder_for("wordllama").embed(texts), atol=1e-6
    )


def test_the_static_embedder_finds_dark_mode_by_editor_theme(tmp_path, now):
    ws = Workspace.open(tmp_path / "ws", embedder=embedder_for("wordllama"))
    ws.note("User prefers dark mode", importance=0.8, at=now)
    for text in [
        "The billing service deploys on Tuesdays",
        "Maya's daughter starts school",
        "Renew the TLS certificate before May",
        "Lunch with the design team",
    ]:
        ws.note(text, at=now)
    assert ws.search("editor theme", now=now)[0].text == "User prefers dark mode"
    ws.close()


def test_a_changed_embedder_is_never_compared_and_reindex_catches_up(tmp_path, now):
    with Workspace.open(tmp_path / "ws", embedder=HashingEmbedder()) as old:
        for i, text in enumerate(["User prefers dark mode", "Billing deploys on Tuesdays"]):
            old.note(text, at=now - timedelta(minutes=i))
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.store.vectors.count_stale_vectors(ws.embedder.name) == 2
        # Before re-embedding, a paraphrase has no vector of this embedder to match.
        assert ws.search("editor theme", now=now) == []
        assert reindex(ws.store, ws.embedder) == 2
        assert ws.store.vectors.count_stale_vectors(ws.embedder.name) == 0
        assert ws.search("editor theme", now=now)[0].text == "User prefers dark mode"


def test_the_consolidation_tick_re_embeds_in_the_background(tmp_path, now):
    from dreamer.service.consolidation import tick

    with Workspace.open(tmp_path / "ws", embedder=HashingEmbedder()) as old:
        old.note("User prefers dark mode", at=now)
    with Workspace.open(tmp_path / "ws") as ws:
        report = tick(ws, now + timedelta(minutes=30))
        assert report.reindexed == 1 and "1 re-embedded" in report.summary()


def test_dream_reindex_command(tmp_path, now, runner):
    from dreamer.cli import main

    with Workspace.open(tmp_path / "ws", embedder=HashingEmbedder()) as old:
        old.note("User prefers dark mode", at=now)
    result = runner.invoke(main, ["reindex", "-w", str(tmp_path / "ws")])
    # With the default embedder, the sentence model (the static vectors where it is missing).
    default = embedder_for("auto").name.split("@")[0]
    assert result.exit_code == 0 and f"Re-embedded 1 crystal(s) with {default}" in result.output
    again = runner.invoke(main, ["reindex", "-w", str(tmp_path / "ws")])
    assert "Re-embedded 0 crystal(s)" in again.output


@pytest.mark.parametrize(
    "first, second, same",
    [
        (
            "Deployed the billing service to staging",
            "Deployed the billing service to staging.",
            True,
        ),
        ("User prefers dark mode", "The user prefers dark mode", True),
        ("Maya prefers tabs over spaces", "Maya prefers spaces over tabs", False),
        ("The report deadline moved to April 3", "The report deadline moved to April 7", False),
        ("Refactored the invoice module", "Refactored the payments module", False),
    ],
)
def test_near_duplicates_are_judged_by_their_words(first, second, same):
    assert lifecycle.same_words(first, second) is same


def test_a_reversed_preference_is_not_merged_away(ws, now):
    ws.note("Maya prefers tabs over spaces", importance=0.6, at=now - timedelta(days=2))
    newer = ws.note("Maya prefers spaces over tabs", importance=0.6, at=now)
    report = lifecycle.run(ws, now)
    assert report.merged == [] and ws.get(newer).lifecycle == "generated"
