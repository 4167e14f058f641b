"""PostgreSQL ranks only the matches holding two of a question's words, as SQLite does, when
every word is common (a large store): the same candidates, each scored as PostgreSQL's wider
query scores it, whichever way the scores are computed (the postings read whole, the statement
that looks the other words up match by match, a word split into a phrase)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.retrieval import search as search_module
from dreamer.store import NewCrystal

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL


@pytest.fixture
def ws(pg_database, tmp_path):
    workspace = Workspace.open(
        tmp_path / "ws",
        environ={"DREAM_STORE_URL": pg_database},
        overrides={"embedder": "hashing"},
    )
    workspace.init()
    yield workspace
    workspace.close()


def _talk(ws, now, turns):
    return [
        ws.index(
            NewCrystal(
                text,
                importance=0.5,
                semantic_type="experience",
                at=now + timedelta(minutes=n),
                source="scratch",
            )
        )
        for n, text in enumerate(turns)
    ]


def test_when_every_word_is_common_the_crystals_holding_two_are_ranked_first_on_postgres(
    ws, now, monkeypatch
):
    monkeypatch.setattr(search_module, "COMMON_MIN_CRYSTALS", 10)  # a large store's rules
    filler = "and then the weekly review went on for quite a while longer than planned"
    both = _talk(ws, now, [f"alpha beta note {n}: {filler}" for n in range(30)])
    _talk(ws, now, [f"gamma beta note {n}: {filler}" for n in range(30)])
    _talk(ws, now, [f"delta entry {n}" for n in range(200)])
    (short,) = _talk(ws, now, ["alpha"])  # the best match of alpha alone
    store = ws.store
    terms = ["alpha", "beta"]
    assert search_module._split_common(store, terms) == (["alpha"], ["beta"])  # both common
    full = store.search.fts_match(["alpha"], ["beta"], 1000)
    assert short in [crystal_id for crystal_id, _ in full[:10]]
    # At least the depth hold both words: those are the candidates, scored as the wider
    # query scores them, and the crystal with alpha alone is none.
    lexical = search_module._lexical(store, terms, True, True, 10)
    assert len(lexical) == 10 and set(lexical) <= set(both) and short not in lexical
    assert lexical == {i: max(score, 0.0) for i, score in full if i in lexical}
    # Fewer than the depth hold both: every crystal holding alpha is ranked, as before.
    deep = search_module._lexical(store, terms, True, True, 40)
    assert deep == {i: max(score, 0.0) for i, score in full[:40]} and short in deep
    # In a small store nothing of this applies: the least common word alone finds.
    monkeypatch.setattr(search_module, "COMMON_MIN_CRYSTALS", 20000)
    small = search_module._lexical(store, terms, True, True, 10)
    whole = store.search.fts_match(terms, [], 10)
    assert small == {i: max(score, 0.0) for i, score in whole} and short in small


def test_matches_holding_two_words_keep_the_score_the_wider_query_gives_on_postgres(ws, now):
    rng = random.Random(5)
    common = "river stone lamp orchard violin ledger harbor copper meadow lantern".split()
    # Rare words beside common ones make the statement look the others up match by match;
    # a hyphenated word is split by the parser into a phrase, scored over each match instead.
    rare = ["quince", "zephyr", "wi-fi"]
    texts = []
    for n in range(240):
        words = rng.choices(common, k=rng.randint(1, 12))
        if n % 12 == 0:
            words.append(rare[(n // 12) % len(rare)])
        texts.append(" ".join(words))
    ids = _talk(ws, now, texts)
    store = ws.store
    assert len(store._stemmed(["wi-fi"])["wi-fi"]) > 1  # a phrase, as said above
    vocabulary = common + rare
    narrower = 0
    for _ in range(60):
        words = rng.sample(vocabulary, 5)
        finding, ranking = words[:2], words[2:]
        full = store.search.fts_match(finding, ranking, 1000)
        paired = store.fts_match_paired(finding, ranking, 1000)
        scores = [score for _, score in paired]
        assert scores == sorted(scores, reverse=True)
        # The candidates: exactly the matches holding one of the ranking words too, in the
        # wider query's order, each with its score to the bit.
        holding = {
            crystal_id
            for crystal_id, text in zip(ids, texts, strict=True)
            if any(_holds(text, w) for w in finding) and any(_holds(text, w) for w in ranking)
        }
        assert paired == [row for row in full if row[0] in holding]
        narrower += len(paired) < len(full)
        # A limit keeps the best of them.
        assert store.fts_match_paired(finding, ranking, 5) == paired[:5]
    assert narrower > 20  # and a narrower set than the wider query's
    assert store.fts_match_paired(["river"], [], 10) == []


def _holds(text: str, word: str) -> bool:
    return word in text.split()


def test_the_postings_kept_between_searches_stay_within_their_budget(
    ws, now, monkeypatch, pg_database, tmp_path
):
    from dreamer.store.postgres import search as pg_search

    rng = random.Random(3)
    words = "river stone lamp orchard violin ledger harbor copper meadow lantern".split()
    _talk(ws, now, [" ".join(rng.choices(words, k=rng.randint(2, 8))) for _ in range(120)])
    store = ws.store
    counts = store.search.term_frequencies(words)
    budget = max(counts.values()) + min(counts.values())  # one word or two, never all
    monkeypatch.setattr(pg_search, "POSTINGS_KEPT", budget)
    asked = [rng.sample(words, 3) for _ in range(30)]
    answers = [store.search.fts_match(query[:1], query[1:], 50) for query in asked]
    with store.reading():
        kept = store.kept("postings")
        assert kept and sum(len(column[0]) for column in kept.values()) <= budget
        assert len(kept) < len(words)
    # What was kept and what a fresh connection reads, keeping nothing, score to the bit.
    monkeypatch.setattr(pg_search, "POSTINGS_KEPT", 0)
    with Workspace.open(
        tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}, overrides={"embedder": "hashing"}
    ) as other:
        assert [
            other.store.search.fts_match(query[:1], query[1:], 50) for query in asked
        ] == answers
        with other.store.reading():
            assert not other.store.kept("postings")
