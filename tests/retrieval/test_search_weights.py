"""Each weight of the search decides a ranking or a score here: change one and a test fails.

The search's weights (dreamer/retrieval/search.py) are written out in these tests as numbers,
not imported, so a changed weight cannot pass unnoticed. An embedder of this file places every
text at a chosen cosine to the query (`Placed`), so the meaning side of a score is known
exactly; the word side is FTS5's BM25 over notes of equal length, whose best score is the
query's attainable score divided by (k1 + 1).

What each test pins (the search's names):
- IMPORTANCE_BOOST, RECENCY_BOOST, RECENCY_HALF_LIFE_DAYS, ARCHIVED_FACTOR: the boost.
- Fusion.vector_weight (notes, sessions), margin_weight and margin_rank, vector_floor, of the
  default fusion and of the sentence model's (FUSIONS["minilm"]).
- BM25_K1 and Fusion.absent_weight: the attainable score the word side is divided by.
- Fusion.scan_below: when weak word matches make the search scan every vector.
- LEXICAL_DEPTH, VECTOR_DEPTH: how many word and vector matches become candidates.
- vectors.MIN_SIMILARITY: below it a vector match is no candidate.
- GAP_SIMILARITY: a search nothing answers is logged as a curiosity gap.
- CONTEXT_WEIGHTS, EPISODE_WEIGHT, EPISODE_SECONDS: what a session turn shares with its
  neighbours and its episode (tests/retrieval/test_search_context.py's reference writes them
  out too).
- COMMON_MIN_CRYSTALS, COMMON_SHARE, COMMON_MAX: when a word is too common to find.
FILTER_WIDTH is not here: it decides how much a filtered search reads, not what it finds (a
filtered search that the wider list leaves short ranks the filtered matches exactly).
Each was checked by changing it by a fifth either way: a test here fails.
"""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pytest

from dreamer import Workspace
from dreamer.retrieval.search import FUSIONS, search
from dreamer.store import NewCrystal

QUERY_AXIS = 0
DIM = 8


class Placed:
    """An embedder that puts each known text at a chosen cosine to any query it is asked."""

    name = "placed-1"  # not a tuned embedder's name: the search uses its default fusion
    dim = DIM

    def __init__(self, cosines: dict[str, float], queries: set[str]) -> None:
        self.cosines = cosines
        self.queries = queries

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            if text in self.queries:
                out[row, QUERY_AXIS] = 1.0
            else:
                cosine = self.cosines.get(text, 0.0)  # others: at right angles to every query
                out[row, QUERY_AXIS] = cosine
                out[row, 1 + row % (DIM - 1)] = math.sqrt(1.0 - cosine * cosine)
        return out


def boost(importance: float, recency: float = 1.0, archived: bool = False) -> float:
    """The search's boost, with its weights written out: 0.3 importance, 0.1 recency, 0.85."""
    return (1.0 + 0.3 * importance + 0.1 * recency) * (0.85 if archived else 1.0)


def open_ws(tmp_path, cosines: dict[str, float], *queries: str) -> Workspace:
    return Workspace.open(tmp_path / "ws", embedder=Placed(cosines, set(queries)))


def scores(ws: Workspace, query: str, now, **kwargs) -> dict[str, float]:
    """Each hit's text and score, best first."""
    if "fusion" in kwargs:
        found = search(ws.store, ws.embedder, ws.settings, query, now=now, record=False, **kwargs)
    else:
        found = ws.search(query, now=now, **kwargs)
    return {hit.text: hit.score for hit in found}


def test_importance_lifts_a_crystal_by_a_third_of_its_importance(tmp_path, now):
    texts = {"kiln firing alpha": 0.5, "kiln firing bravo": 0.5}
    with open_ws(tmp_path, texts, "kiln firing") as ws:
        ws.note("kiln firing alpha", importance=0.9, at=now)
        ws.note("kiln firing bravo", importance=0.1, at=now)
        found = scores(ws, "kiln firing", now)
    assert list(found) == ["kiln firing alpha", "kiln firing bravo"]
    ratio = found["kiln firing alpha"] / found["kiln firing bravo"]
    assert ratio == pytest.approx(boost(0.9) / boost(0.1), rel=1e-5)


def test_recency_halves_every_thirty_days_and_weighs_a_tenth(tmp_path, now):
    texts = {"kiln firing alpha": 0.5, "kiln firing bravo": 0.5, "kiln firing delta": 0.5}
    with open_ws(tmp_path, texts, "kiln firing") as ws:
        ws.note("kiln firing alpha", importance=0.5, at=now)
        ws.note("kiln firing bravo", importance=0.5, at=now - timedelta(days=30))
        ws.note("kiln firing delta", importance=0.5, at=now - timedelta(days=60))
        found = scores(ws, "kiln firing", now)
    assert list(found) == ["kiln firing alpha", "kiln firing bravo", "kiln firing delta"]
    newest = found["kiln firing alpha"]
    assert newest / found["kiln firing bravo"] == pytest.approx(
        boost(0.5, 1.0) / boost(0.5, 0.5), rel=1e-5
    )
    assert newest / found["kiln firing delta"] == pytest.approx(
        boost(0.5, 1.0) / boost(0.5, 0.25), rel=1e-5
    )


def test_an_archived_crystal_keeps_85_percent_of_its_score(tmp_path, now):
    texts = {"kiln firing alpha": 0.5, "kiln firing bravo": 0.5}
    with open_ws(tmp_path, texts, "kiln firing") as ws:
        ws.note("kiln firing alpha", importance=0.5, at=now)
        archived = ws.note("kiln firing bravo", importance=0.5, at=now)
        ws.store.db.execute("UPDATE crystals SET lifecycle = 'archived' WHERE id = ?", [archived])
        ws.store.db.conn.commit()
        found = scores(ws, "kiln firing", now)
    ratio = found["kiln firing bravo"] / found["kiln firing alpha"]
    assert ratio == pytest.approx(0.85, rel=1e-5)


def _vector_only(tmp_path, now, cosines: dict[str, float], **kwargs) -> dict[str, float]:
    """Scores of a search whose words no note holds: the meaning side alone."""
    with open_ws(tmp_path, cosines, "zzqx wibble") as ws:
        for text in cosines:
            ws.note(text, importance=0.5, at=now)
        return scores(ws, "zzqx wibble", now, **kwargs)


def test_a_note_s_cosine_weighs_four_tenths_and_a_session_turn_s_a_quarter(tmp_path, now):
    cosines = {"the blue drawer holds the keys": 0.6, "the red drawer holds the tape": 0.6}
    with open_ws(tmp_path, cosines, "zzqx wibble") as ws:
        ws.note("the blue drawer holds the keys", importance=0.5, at=now)
        _session(ws, "the red drawer holds the tape", now)
        found = scores(ws, "zzqx wibble", now)
        sentence_model = scores(ws, "zzqx wibble", now, fusion=FUSIONS["minilm"])
    # Too few matches to tell a winner from the pack: no margin, the weighed cosine alone.
    assert found == {
        "the blue drawer holds the keys": pytest.approx(0.4 * 0.6 * boost(0.5), abs=1e-3),
        "the red drawer holds the tape": pytest.approx(0.25 * 0.6 * boost(0.5), abs=1e-3),
    }
    assert sentence_model == {
        "the blue drawer holds the keys": pytest.approx(0.8 * 0.6 * boost(0.5), abs=1e-3),
        "the red drawer holds the tape": pytest.approx(0.4 * 0.6 * boost(0.5), abs=1e-3),
    }


PACK = {
    "winner": 0.9,
    "second": 0.7,
    "third": 0.6,
    "fourth": 0.5,
    "fifth": 0.4,
    "sixth": 0.3,
}


def test_a_match_above_the_fifth_best_gains_its_lead_once_more(tmp_path, now):
    found = _vector_only(tmp_path, now, PACK)
    pack = 0.4  # the fifth best cosine
    expected = {
        text: pytest.approx((0.4 * cosine + 1.0 * max(cosine - pack, 0.0)) * boost(0.5), abs=2e-3)
        for text, cosine in PACK.items()
    }
    assert found == expected
    assert list(found) == list(PACK)


def test_the_sentence_model_s_margin_counts_twice(tmp_path, now):
    found = _vector_only(tmp_path, now, PACK, fusion=FUSIONS["minilm"])
    pack = 0.4
    expected = {
        text: pytest.approx((0.8 * cosine + 2.0 * max(cosine - pack, 0.0)) * boost(0.5), abs=2e-3)
        for text, cosine in PACK.items()
    }
    assert found == expected


def test_a_vector_alone_is_a_candidate_only_above_its_floor(tmp_path, now):
    cosines = {"just under": 0.13, "just over": 0.17, "far over": 0.9}
    default = _vector_only(tmp_path / "default", now, cosines)
    sentence_model = _vector_only(tmp_path / "minilm", now, cosines, fusion=FUSIONS["minilm"])
    assert set(default) == {"just under", "just over", "far over"}  # no floor but noise's
    assert set(sentence_model) == {"just over", "far over"}  # the floor is 0.15


def test_a_cosine_under_eight_hundredths_is_noise(tmp_path, now):
    cosines = {"noise": 0.07, "faint": 0.09, "clear": 0.9}
    assert set(_vector_only(tmp_path, now, cosines)) == {"faint", "clear"}


def test_a_scan_takes_the_sixty_nearest_vectors_as_candidates(tmp_path, now):
    """The 55th nearest crystal, important, ranks first; the 65th could too, but is beyond
    the 60 candidates a scan takes."""
    cosines = {f"crystal number {rank}": 0.7 - 0.001 * rank for rank in range(1, 73)}
    with open_ws(tmp_path, cosines, "zzqx wibble") as ws:
        for rank, text in enumerate(cosines, start=1):
            ws.note(text, importance=1.0 if rank in (55, 65) else 0.0, at=now)
        found = list(scores(ws, "zzqx wibble", now))
    assert found[0] == "crystal number 55"
    assert "crystal number 65" not in found


# Nine notes of four words that no query here holds: every note is four words long, so BM25's
# length term is 1 and a lone word's best score is its attainable score over (k1 + 1).
FILLER = [
    "alpha bravo charlie delta",
    "echo foxtrot golf hotel",
    "india juliet kilo lima",
    "mike november oscar papa",
    "quebec romeo sierra tango",
    "uniform victor whiskey xray",
    "yankee zulu amber basil",
    "cedar dune ember fjord",
    "grove heath inlet jetty",
]


def _words_only(tmp_path, now, target: str, query: str, **kwargs) -> tuple[float, bool]:
    """The target's word score (its score over its boost) and whether the search scanned
    every vector; no vector is near the query, so the meaning side adds nothing."""
    from dreamer.retrieval import vectors

    with open_ws(tmp_path, {}, query) as ws:
        for text in FILLER:
            ws.note(text, importance=0.5, at=now)
        ws.note(target, importance=0.5, at=now)
        scans = vectors.scans
        found = scores(ws, query, now, **kwargs)
        scanned = vectors.scans > scans
    return found[target] / boost(0.5), scanned


def test_a_lone_word_match_scores_its_share_of_what_the_query_could_attain(tmp_path, now):
    score, _ = _words_only(tmp_path, now, "kiln word0 word1 word2", "kiln", limit=1)
    assert score == pytest.approx(1 / (1.2 + 1.0), abs=1e-5)  # BM25's k1 = 1.2


@pytest.mark.parametrize(("fusion", "weight"), [("default", 0.5), ("minilm", 1.0)])
def test_a_query_word_no_crystal_holds_counts_as_part_of_a_rare_word(tmp_path, now, fusion, weight):
    """Half a rare word's weight in the default fusion, a whole one in the sentence model's."""
    chosen = {"fusion": FUSIONS["minilm"]} if fusion == "minilm" else {}
    score, _ = _words_only(tmp_path, now, "kiln word0 word1 word2", "kiln zzqx", limit=1, **chosen)
    crystals = len(FILLER) + 1
    kiln = math.log((crystals - 1 + 0.5) / (1 + 0.5))  # FTS5's idf of a word in one crystal
    absent = math.log((crystals + 0.5) / 0.5)  # ... and of a word in none
    assert score == pytest.approx(kiln / ((1.2 + 1.0) * (kiln + weight * absent)), abs=1e-5)


def test_word_matches_under_four_tenths_of_the_attainable_scan_every_vector(tmp_path, now):
    # Four words: 0.45 of the attainable score, enough; seven: 0.36, too weak.
    enough, scanned = _words_only(tmp_path / "4", now, "kiln word0 word1 word2", "kiln", limit=1)
    assert 0.4 < enough < 0.48 and not scanned
    weak, scanned = _words_only(
        tmp_path / "7", now, "kiln word0 word1 word2 word3 word4 word5", "kiln", limit=1
    )
    assert 0.32 < weak < 0.4 and scanned


@pytest.mark.parametrize(("cosine", "gap"), [(0.22, True), (0.28, False)])
def test_a_search_whose_best_vector_is_under_a_quarter_is_a_curiosity_gap(
    tmp_path, now, cosine, gap
):
    with open_ws(tmp_path, {"a faint match": cosine}, "zzqx wibble") as ws:
        ws.note("a faint match", importance=0.5, at=now)
        assert list(scores(ws, "zzqx wibble", now)) == ["a faint match"]
        assert bool(ws.store.search.open_gaps("2000-01-01", 10)) is gap


def _session(ws: Workspace, text: str, at) -> int:
    crystal_id, _ = ws.store.crystals.add_crystal(
        NewCrystal(
            text,
            source="sessions",
            semantic_type="experience",
            importance=0.5,
            at=at,
        )
    )
    return crystal_id


def test_a_turn_shares_half_its_score_one_turn_away_a_quarter_two_and_a_fifth_in_its_session(
    tmp_path, now
):
    turns = ["first turn said hello", "second turn asked why", "kiln turn answered it"]
    turns += ["fourth turn said thanks", "fifth turn said goodbye"]
    with open_ws(tmp_path, {}, "kiln") as ws:
        for minute, text in enumerate(turns):
            _session(ws, text, now + timedelta(minutes=minute))
        found = scores(ws, "kiln", now + timedelta(minutes=5))
    own = found["kiln turn answered it"] / (1.0 + 0.2)  # its own score and its episode's best
    expected = {
        "first turn said hello": 0.25 * own + 0.2 * own,
        "second turn asked why": 0.5 * own + 0.2 * own,
        "fourth turn said thanks": 0.5 * own + 0.2 * own,
        "fifth turn said goodbye": 0.25 * own + 0.2 * own,
    }
    for text, score in expected.items():
        assert found[text] == pytest.approx(score, rel=1e-4), text


def test_a_turn_is_a_neighbour_only_within_half_an_hour(tmp_path, now):
    with open_ws(tmp_path, {}, "kiln") as ws:
        _session(ws, "the question came first", now - timedelta(minutes=27))
        _session(ws, "kiln turn answered it", now)
        _session(ws, "the next topic came later", now + timedelta(minutes=33))
        found = scores(ws, "kiln", now + timedelta(hours=1))
    assert set(found) == {"the question came first", "kiln turn answered it"}


@pytest.mark.slow
def test_the_words_take_the_sixty_best_matches_as_candidates(tmp_path, now):
    """Ranked by BM25, longer notes lower: the 55th match, important, ranks first; the 65th
    could too, but is beyond the 60 candidates the word step takes."""
    padding = [f"pad{i}" for i in range(200)]
    with open_ws(tmp_path, {}, "kiln") as ws:
        for rank in range(1, 73):  # note r holds "kiln" and 100 + r other words
            text = " ".join(["kiln", f"rank{rank}", *padding[: 99 + rank]])
            ws.note(text, importance=1.0 if rank in (55, 65) else 0.0, at=now)
        for i in range(80):  # "kiln" in fewer than half the crystals, so it weighs something
            ws.note(" ".join([f"other{i}", *padding[:136]]), importance=0.0, at=now)
        found = [text.split()[1] for text in scores(ws, "kiln", now)]
    assert found[0] == "rank55"
    assert "rank65" not in found


def _ids_reach(ws: Workspace, highest: int) -> None:
    """Give the placeholder crystal this id: the store's size, for the search, is its highest
    id (a store that wrote that many crystals; forgotten ones keep their ids used)."""
    ws.store.db.execute(
        "UPDATE crystals SET id = ? WHERE text = 'a placeholder of the early ids'", [highest]
    )
    ws.store.db.execute("INSERT INTO crystals_fts(crystals_fts) VALUES ('rebuild')")
    ws.store.db.conn.commit()


@pytest.mark.slow
def test_in_a_store_of_twenty_thousand_a_word_in_two_percent_only_ranks(tmp_path, now):
    """With 20,000 crystals or more, a query word found in over 2% of them finds none itself:
    only the crystals its rarer words find are ranked."""
    with open_ws(tmp_path, {}, "kiln pottery", "kiln glaze") as ws:
        ws.note("a placeholder of the early ids", importance=0.0, at=now)
        for i in range(450):  # "pottery" in 451 crystals, "glaze" in 351
            ws.note(f"pottery class {i}" + (" glaze" if i < 350 else ""), importance=0.0, at=now)
        ws.note("kiln pottery glaze", importance=0.0, at=now)

        def found(query: str) -> set[str]:
            return set(scores(ws, query, now))

        _ids_reach(ws, 17_999)  # under 20,000: every word finds
        assert len(found("kiln pottery")) == 6
        _ids_reach(ws, 21_000)  # a large store: the common line is 2% of 21,451, 429
        assert found("kiln pottery") == {"kiln pottery glaze"}  # 451 crystals: common
        assert len(found("kiln glaze")) == 6  # 351 crystals: rare, it finds


@pytest.mark.slow
def test_in_a_very_large_store_a_word_in_five_thousand_crystals_only_ranks(tmp_path, now):
    """Past 250,000 crystals the common line stops growing: 5,000 crystals."""
    with open_ws(tmp_path, {}, "kiln clay", "kiln wheel") as ws:
        ws.note("a placeholder of the early ids", importance=0.0, at=now)
        for i in range(5500):  # "clay" in 5,501 crystals, "wheel" in 4,501
            text = f"clay pot {i}" + (" wheel" if i < 4500 else "")
            ws.store.crystals.add_crystal(
                NewCrystal(
                    text,
                    source="scratch",
                    semantic_type="experience",
                    importance=0.0,
                    at=now,
                )
            )
        ws.note("kiln clay wheel", importance=0.0, at=now)
        _ids_reach(ws, 300_000)
        assert set(scores(ws, "kiln clay", now)) == {"kiln clay wheel"}
        assert len(scores(ws, "kiln wheel", now)) == 6
