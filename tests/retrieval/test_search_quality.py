"""Search behaviour that makes recall good: conversational context, relative recency, vectors,
and the shortcuts that keep it fast at size (see the dreamer.search module doc)."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from dreamer.retrieval import search as search_module
from dreamer.retrieval import vectors
from dreamer.retrieval.embed import HashingEmbedder
from dreamer.retrieval.reindex import embed_waiting
from dreamer.store import NewCrystal


def _talk(ws, now, turns, *, source="sessions", minutes_apart=0):
    ids = []
    for number, text in enumerate(turns):
        ids.append(
            ws.index(
                NewCrystal(
                    text,
                    importance=0.5,
                    semantic_type="experience",
                    at=now + timedelta(minutes=number * minutes_apart),
                    source=source,
                )
            )
        )
    return ids


def test_a_reply_is_found_through_the_question_before_it(ws, now):
    ids = _talk(
        ws,
        now,
        [
            "Ben: How was the pottery workshop on Saturday?",
            "Ana: Wonderful, I finally made a vase that did not crack.",
            "Ben: I spent the weekend fixing the garden fence.",
            "Ana: Did you paint it too?",
        ],
    )
    hits = ws.search("pottery workshop", now=now)
    found = [hit.id for hit in hits]
    assert found[0] == ids[0]
    # The answer has no word of the query; the turn before it has them all.
    assert ids[1] in found
    assert found.index(ids[1]) < found.index(ids[2]) if ids[2] in found else True


def test_notes_stand_on_their_own(ws, now):
    ids = _talk(
        ws,
        now,
        [
            "The pottery workshop moved to Saturday.",
            "Quarterly invoices are due on the 5th.",
        ],
        source="scratch",
    )
    lexical = search_module._in_context(ws.store, {ids[0]: 3.0})
    assert lexical == {ids[0]: 3.0}


def test_context_does_not_cross_sessions_far_apart_in_time(ws, now):
    first = _talk(ws, now, ["Ben: How was the pottery workshop?"])
    later = _talk(ws, now + timedelta(days=3), ["Ana: The train was late again."])
    scores = search_module._in_context(ws.store, {first[0]: 2.0})
    assert later[0] not in scores
    near = _talk(ws, now + timedelta(days=3, minutes=1), ["Ana: Yes, it was great fun."])
    scores = search_module._in_context(ws.store, {later[0]: 2.0})
    # The turn right after, same session: half its neighbour's score, plus the episode's share.
    assert scores[near[0]] == 0.5 * 2.0 + search_module.EPISODE_WEIGHT * 2.0


def test_an_episode_lifts_its_other_matching_turns(ws, now):
    ids = _talk(
        ws,
        now,
        [
            "Ana: I signed up for the Berlin marathon.",
            "Ben: Cool.",
            "Ben: Really cool.",
            "Ben: Nice weather today.",
            "Ben: Anyway.",
            "Ben: So.",
            "Ana: Marathon training starts in May.",
        ],
    )
    scores = search_module._in_context(ws.store, {ids[0]: 4.0, ids[6]: 1.0})
    # Its own 1.0 plus a fifth of the best score in its session (4.0).
    assert scores[ids[6]] == 1.0 + search_module.EPISODE_WEIGHT * 4.0
    assert scores[ids[1]] == 0.5 * 4.0 + search_module.EPISODE_WEIGHT * 4.0
    assert ids[3] not in scores  # no word matched and no matching neighbour: not a hit


def test_recency_is_measured_from_the_newest_memory_not_the_clock(ws, now):
    # The same stems and length (the older even a little closer in meaning): recency decides.
    older = _talk(ws, now - timedelta(days=400), ["Painted the garden shed."])[0]
    newer = _talk(ws, now, ["Painting the garden shed."])[0]
    soon = ws.search("garden shed", now=now + timedelta(days=1))
    years_later = ws.search("garden shed", now=now + timedelta(days=3 * 365))
    assert [(h.id, h.score) for h in soon] == [(h.id, h.score) for h in years_later]
    assert [h.id for h in soon] == [newer, older]  # the newer one, mildly
    assert soon[0].score > soon[1].score


def test_a_misspelt_query_still_finds_the_note_by_its_word_pieces(ws, now):
    ws.note("Grandmother's birthday dinner is at the Lisbon restaurant", at=now)
    ws.note("Renew the car insurance before April", at=now)
    hits = ws.search("grandmothr birthdya", now=now)
    assert hits and hits[0].text.startswith("Grandmother's birthday")


@pytest.mark.slow
def test_vector_scores_are_exact_cosines_and_new_notes_join_the_index(ws, now):
    embedder = ws.embedder
    first = ws.note("Prefers oat milk in coffee", at=now)
    ws.search("oat milk", now=now)  # loads the index
    second = ws.note("Allergic to peanuts and cashews", at=now)
    embed_waiting(ws.store, embedder)  # as a search does first (a deferred embedder's note)
    index = vectors.index_for(ws.store, embedder)
    query = embedder.embed(["peanut allergy"])[0]
    found, best = vectors.nearest(index, query, True, True, 5)
    cosines = dict(found)
    assert second in cosines and first in index.ids[: index.size]
    exact = float(embedder.embed(["Allergic to peanuts and cashews"])[0] @ query)
    assert abs(cosines[second] - exact) < 1e-2  # float16 storage, no sketch error
    assert best == max(cosines.values())


def test_a_vector_of_another_size_is_skipped_not_fatal(ws, now):
    ws.note("Standup moved to 9:30", at=now)
    other = HashingEmbedder(dim=64)
    ws.store.crystals.add_crystal(
        NewCrystal(
            "Written by another embedder",
            source="memory",
            semantic_type="world_fact",
            importance=0.5,
            at=now,
            embedding=other.embed(["x"])[0].astype(np.float16).tobytes(),
        )
    )
    hits = ws.search("standup", now=now)
    assert hits[0].text == "Standup moved to 9:30"


@pytest.mark.slow
def test_in_a_large_store_common_words_only_rank_what_rarer_words_find(ws, now, monkeypatch):
    # The threshold is a size constant; lowering it lets a small store show the large-store
    # behaviour without loading 20,000 crystals.
    monkeypatch.setattr(search_module, "COMMON_MIN_CRYSTALS", 10)
    _talk(
        ws,
        now,
        [f"Project update {number}: the project is on track" for number in range(60)]
        + ["Project kickoff with the Zanzibar client"],
        source="scratch",
    )
    store = ws.store
    split = search_module._split_common
    assert split(store, ["project", "zanzibar"]) == (["zanzibar"], ["project"])
    # All common: the least common word must be there, the others rank.
    assert split(store, ["project", "track"]) == (["track"], ["project"])
    assert split(store, ["qwxz", "zzyq"]) == (["qwxz", "zzyq"], [])  # nothing known: as asked
    # Looked up by FTS5's own stem ("clients" is indexed as "client"); absent words drop out.
    assert split(store, ["projects", "clients", "qwxz"]) == (["clients"], ["projects"])
    assert store._stems(["Clients", "running"]) == {"Clients": "client", "running": "run"}
    hits = ws.search("project zanzibar client", now=now)
    assert hits[0].text == "Project kickoff with the Zanzibar client"
    # A crystal with only the common word is no candidate: the rare word must be there.
    assert all("zanzibar" in hit.text.lower() for hit in hits if hit.score > 0.5)


def test_when_every_word_is_common_the_crystals_holding_two_are_ranked_first(ws, now, monkeypatch):
    monkeypatch.setattr(search_module, "COMMON_MIN_CRYSTALS", 10)  # a large store's rules
    filler = "and then the weekly review went on for quite a while longer than planned"
    both = _talk(ws, now, [f"alpha beta note {n}: {filler}" for n in range(30)], source="scratch")
    _talk(ws, now, [f"gamma beta note {n}: {filler}" for n in range(30)], source="scratch")
    _talk(ws, now, [f"delta entry {n}" for n in range(200)], source="scratch")
    (short,) = _talk(ws, now, ["alpha"], source="scratch")  # the best match of alpha alone
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


def test_matches_holding_two_words_keep_the_score_the_wider_query_gives(ws, now):
    import random

    rng = random.Random(5)
    vocabulary = "river stone lamp orchard violin ledger harbor copper meadow lantern".split()
    _talk(
        ws,
        now,
        [" ".join(rng.choices(vocabulary, k=rng.randint(1, 12))) for _ in range(200)],
        source="scratch",
    )
    store = ws.store
    narrower = 0
    for _ in range(40):
        rare, common = rng.sample(vocabulary, 2), rng.sample(vocabulary, 3)
        full = dict(store.search.fts_match(rare, common, 1000))
        paired = store.fts_match_paired(rare, common, 1000)
        scores = [score for _, score in paired]
        assert scores == sorted(scores, reverse=True)
        # The same numbers to the bit: FTS5 sums the same terms in the same order.
        assert all(full[crystal_id] == score for crystal_id, score in paired)
        narrower += len(paired) < len(full)
    assert narrower > 20  # and a narrower set than the wider query's


def test_hashing_embedder_is_deterministic_unit_length_and_shares_word_pieces():
    first, second = HashingEmbedder(), HashingEmbedder()
    texts = ["Grandmother's birthday dinner", "grandmothers birthdays", "Renew car insurance", ""]
    a, b = first.embed(texts), second.embed(list(reversed(texts)))[::-1]
    assert np.array_equal(a, b)  # no salted hash, no order effect, no cache effect
    assert np.allclose(np.linalg.norm(a[:3], axis=1), 1.0) and not a[3].any()
    assert a[0] @ a[1] > 0.5 > abs(a[0] @ a[2])
    # Fixed points: vectors stored by an earlier version stay comparable with new ones.
    assert round(float(a[0] @ a[1]), 4) == 0.7385
    assert list(np.flatnonzero(a[0])[:5]) == [26, 28, 47, 48, 59]
    assert round(float(a[0][26]), 4) == 0.1362 and round(float(a[0][47]), 4) == -0.1362


@pytest.mark.slow
def test_a_filtered_search_ranks_within_its_own_kind(ws, now):
    sessions = _talk(ws, now, [f"User: the invoice export failed again ({n})" for n in range(12)])
    fact = ws.index(
        NewCrystal("Invoice exports run nightly at 02:00", importance=0.5, at=now, source="memory")
    )
    facts = ws.search("invoice export failed", search_type="facts", limit=3, now=now)
    assert [hit.id for hit in facts] == [fact]
    talk = ws.search("invoice export failed", search_type="conversations", limit=3, now=now)
    assert len(talk) == 3 and {hit.id for hit in talk} <= set(sessions)
    # Exactly the session hits a combined search ranks first, in the same order.
    both = [
        hit.id
        for hit in ws.search("invoice export failed", limit=20, now=now)
        if hit.source == "sessions"
    ]
    assert [hit.id for hit in talk] == both[:3]


def test_a_filtered_search_falls_back_to_an_exact_ranking(ws, now, monkeypatch):
    # Narrow the wider list (a size constant) so that twelve session matches overflow it.
    monkeypatch.setattr(search_module, "FILTER_WIDTH", 1)
    _talk(ws, now, [f"User: the invoice export failed again ({n})" for n in range(12)])
    fact = ws.index(
        NewCrystal("Invoice exports run nightly at 02:00", importance=0.5, at=now, source="memory")
    )
    lexical = search_module._lexical(ws.store, ["invoice", "export", "failed"], False, True, 2)
    assert list(lexical) == [fact]


class _Table:
    """An embedder whose cosines to the query (the first axis) are set by the test."""

    name = "table"
    dim = 32

    def __init__(self, query: str, cosines: dict[str, float]):
        self.rows = {query: 1.0, **cosines}

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            cosine = self.rows[text]
            out[row, 0] = cosine
            # Each text its own other axis, so texts are unrelated to each other.
            out[row, 1 + list(self.rows).index(text)] = np.sqrt(1 - cosine**2)
        return out


FILLER = {f"Filler note number {word}": 0.15 for word in "one two three four five six".split()}


def test_a_clear_vector_winner_beats_a_weak_shared_word(tmp_path, now):
    from dreamer import Workspace

    query = "what colour scheme should the IDE use"
    notes = {
        "Uses a split ergonomic keyboard because of wrist pain": 0.1,  # shares "use" only
        "User prefers dark mode in every editor": 0.6,  # the meaning, no shared word
        **FILLER,
    }
    with Workspace.open(tmp_path / "ws", embedder=_Table(query, notes)) as ws:
        for text in notes:
            ws.note(text, at=now)
        assert ws.search(query, now=now)[0].text == "User prefers dark mode in every editor"
        # The previous fusion (absent words ignored, no margin) put the shared word first.
        old = search_module.Fusion()
        hits = search_module.search(ws.store, ws.embedder, ws.settings, query, now=now, fusion=old)
        assert hits[0].text.startswith("Uses a split")


def test_a_note_holding_the_questions_rare_words_keeps_its_lead(tmp_path, now):
    from dreamer import Workspace

    query = "Priya payments team"
    notes = {
        "Priya manages the payments team": 0.55,
        "The head of billing engineering is on leave": 0.6,  # the closer vector, no word
        **FILLER,
    }
    embedder = _Table(query, notes)
    with Workspace.open(tmp_path / "ws", embedder=embedder) as ws:
        for text in notes:
            ws.note(text, at=now)
        for fusion in (search_module.FUSION, *search_module.FUSIONS.values()):
            hits = search_module.search(
                ws.store, embedder, ws.settings, query, now=now, fusion=fusion, record=False
            )
            assert hits[0].text == "Priya manages the payments team", fusion
