"""The offline dream's rules compare words with static vectors, whatever ranks the searches."""

from __future__ import annotations

from dreamer.retrieval.embed import HashingEmbedder, embedder_for, for_rules


def test_a_workspace_searching_with_the_sentence_model_dreams_with_the_static_vectors():
    sentence = embedder_for("minilm")
    rules = for_rules(sentence)
    assert rules.name.startswith("wordllama")
    # "spend" and "budget" name one subject for the rules' word test (values.WORD_SIMILARITY).
    spend, budget = rules.embed(["spend", "budget"])
    assert float(spend @ budget) >= 0.4


def test_any_other_embedder_is_kept_as_chosen():
    hashing = HashingEmbedder()
    assert for_rules(hashing) is hashing
    static = embedder_for("wordllama")
    assert for_rules(static) is static
