"""Full-text search in PostgreSQL, the search log and curiosity gaps.

The ranking is FTS5's BM25 (k1 1.2, b 0.75, FTS5's idf floor), so a search ranks on Postgres
as on SQLite. It is computed from ``postings`` (one row per stem of a crystal: its term
frequency and the crystal's length) and ``terms`` (in how many crystals each stem is): each
word's postings read whole as packed columns and scored with numpy (``_bm25_read``), or, for a
rare word beside common ones or a search of one kind, in one statement that returns only the
best rows; both give the same floats. A word the parser splits into several lexemes is
matched as a phrase through the GIN index over ``tsv`` and scored over each match's tsvector
instead. Every word is quoted into the tsquery as a lexeme: no query text is tsquery syntax.

What a search reads again and again (rank and hit rows, word counts, common words' postings,
the newest day) is kept while the workspace's change mark stays (``Connected.kept``;
migration m007).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from dreamer.store.base import HitRow, RankRow
from dreamer.store.postgres.base import HIT_LIMIT, Connected, fold

K1, B = 1.2, 0.75
READ_AHEAD = 2  # rank rows read along either side of those asked (see rank_rows)
# An index probe per (match, other word) costs about this many rows of a word read in order.
PROBE_COST = 4
# Postings kept between searches while the change mark stays (24 bytes each: 24 MB at most).
POSTINGS_KEPT = 1_000_000
# A stem's postings: crystal ids, idf, term frequencies, BM25 denominators.
Postings = tuple[np.ndarray, float, np.ndarray, np.ndarray]
# In float8 from the start, as SQLite's julianday() and Python compute it (extract gives a
# numeric, which psycopg reads as a slow Decimal).
JULIAN = "extract(epoch FROM {}::timestamptz)::float8 / 86400.0 + 2440587.5"


def _lexeme(stem: str) -> str:
    return "'" + stem.replace("\\", "\\\\").replace("'", "''") + "'"


def _phrase(stems: tuple[str, ...]) -> str:
    """A tsquery for one word (several lexemes when the parser splits it: a phrase)."""
    return "(" + " <-> ".join(_lexeme(stem) for stem in stems) + ")"


def _kind(sessions: bool) -> str:
    return "source = 'sessions'" if sessions else "source != 'sessions'"


class SearchTables(Connected):
    """Full-text matching and BM25, and the ``searches`` and ``gaps`` tables."""

    def _stemmed(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The lexemes the index holds each word under (cached: a search asks several times).

        A one-lexeme word's document count comes along (kept under the change mark, as
        ``_document_counts`` keeps it): a search asks for it next, so one round trip, not two.
        """
        missing = [word for word in dict.fromkeys(words) if word not in self._stems]
        if missing:
            kept = self.kept("counts")
            rows = self._all(
                "SELECT x.n, s.lexemes, (SELECT t.docs FROM terms t WHERE t.workspace = %s"
                " AND t.lexeme = s.lexemes[1] AND cardinality(s.lexemes) = 1)"
                " FROM unnest(%s::text[]) WITH ORDINALITY AS x(f, n), LATERAL (SELECT"
                " ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('dreamer', x.f)) u"
                " ORDER BY u.positions[1]) AS lexemes) s",
                [self.ws, [fold(word) for word in missing]],
            )
            if len(self._stems) > 10_000:
                self._stems.clear()
            for number, stems, docs in rows:
                self._stems[missing[int(number) - 1]] = tuple(stems)
                if kept is not None and len(stems) == 1:
                    kept[stems[0]] = int(docs or 0)
        return {word: self._stems[word] for word in words}

    def _bm25(
        self,
        terms: Sequence[str],
        also: Sequence[str],
        sessions: bool | None,
        limit: int,
        *,
        paired: bool = False,
    ) -> list[tuple[int, float]]:
        """BM25 (id, score) of the best ``limit`` crystals holding one of ``terms`` (of one
        kind when ``sessions`` is not None), ``also`` only ranking them; with ``paired``, only
        those holding one of ``also`` too, each with the score it has without ``paired``."""
        stems = self._stemmed([*terms, *also])
        wanted = [stems[t] for t in terms if stems[t]]
        extra = [stems[t] for t in also if stems[t]]
        if not wanted:
            return []
        if all(len(phrase) == 1 for phrase in wanted + extra):
            own, more = [phrase[0] for phrase in wanted], [phrase[0] for phrase in extra]
            read = self._bm25_read(own, more, limit, paired) if sessions is None else None
            if read is not None:
                return read
            return self._bm25_postings(own, more, sessions, limit, paired)
        filter_sql = "" if sessions is None else f" AND {_kind(sessions)}"
        return self._bm25_matches(wanted, extra, filter_sql, limit, paired)

    def _bm25_read(
        self, wanted: list[str], extra: list[str], limit: int, paired: bool = False
    ) -> list[tuple[int, float]] | None:
        """BM25 of one-stem words (no kind filter) from each word's postings read whole, as
        three packed columns a word, scored here: the same formula as ``_bm25_postings`` in
        the same order of operations, so the same floats to the last bit (the idf and the
        average length come from the server, as the statement computes them). None when the
        statement does better: a few matches beside many rows of the other words (it looks
        those up match by match), or words the term counts do not know yet. With ``paired``
        only the matches holding one of ``extra`` too are scored (the postings of the words
        that find, intersected with those of the others): the same sums, fewer of them."""
        lexemes = list(dict.fromkeys(wanted + extra))
        own = [wanted.count(lexeme) for lexeme in lexemes]
        more = [extra.count(lexeme) for lexeme in lexemes]
        docs = self.kept("counts")
        if docs is None or any(lexeme not in docs for lexeme in lexemes):
            return None
        matches = sum(docs[lexeme] for lexeme, n in zip(lexemes, own, strict=True) if n)
        if not matches:
            return []  # no crystal holds a word that finds
        others = [docs[lexeme] for lexeme, n in zip(lexemes, more, strict=True) if n]
        if matches * len(others) * PROBE_COST < sum(others):
            return None
        columns = self._postings(lexemes)
        finding = [column[0] for column, n in zip(columns, own, strict=True) if n]
        hit_ids = np.unique(np.concatenate(finding)) if finding else np.zeros(0, np.int64)
        if paired:
            holding = [column[0] for column, n in zip(columns, more, strict=True) if n]
            others_ids = np.concatenate(holding) if holding else np.zeros(0, np.int64)
            hit_ids = hit_ids[np.isin(hit_ids, others_ids)]
        if not len(hit_ids):
            return []

        def summed(counts: list[int]) -> tuple[np.ndarray, np.ndarray]:
            total = np.zeros(len(hit_ids))
            seen = np.zeros(len(hit_ids), dtype=bool)
            for (found, idf, tf, denominator), count in zip(columns, counts, strict=True):
                if not count:
                    continue
                at = np.searchsorted(hit_ids, found)
                inside = at < len(hit_ids)
                inside[inside] = hit_ids[at[inside]] == found[inside]
                place = at[inside]
                weight = count * idf * tf[inside] * (K1 + 1) / denominator[inside]
                # A sum starts with its first term, then adds each in the words' order.
                total[place] = np.where(seen[place], total[place] + weight, weight)
                seen[place] = True
            return total, seen

        own_score, _ = summed(own)
        more_score, extras = summed(more)
        held = extras & (more_score > 0)
        score = np.where(held, 2 * own_score + more_score, own_score)
        order = np.lexsort((hit_ids, -score))
        if paired:
            order = order[held[order]]
        order = order[:limit]
        return [(int(hit_ids[n]), float(score[n])) for n in order]

    def _postings(self, lexemes: list[str]) -> list[Postings]:
        """Each stem's postings as columns (ids, idf, tf, the BM25 denominator), in the order
        asked. A common word comes back search after search, so what was read is kept while
        the change mark stays, up to ``POSTINGS_KEPT`` postings in all (then dropped)."""
        kept: dict[str, Postings] | None = self.kept("postings")
        # (Another thread may drop what is kept meanwhile: get, never test then index.)
        held_now = {} if kept is None else {x: kept.get(x) for x in lexemes}
        found = {lexeme: column for lexeme, column in held_now.items() if column is not None}
        missing = [lexeme for lexeme in lexemes if lexeme not in found]
        if missing:
            rows = self._all(
                "WITH s AS (SELECT greatest(crystal_seq, 1)::float8 AS n,"
                " greatest(token_total, 1)::float8 AS tokens FROM workspaces WHERE id = %(ws)s),"
                " q AS (SELECT q.lexeme, coalesce(t.docs, 0)::float8 AS docs"
                " FROM unnest(%(lexemes)s::text[]) q(lexeme)"
                " LEFT JOIN terms t ON t.workspace = %(ws)s AND t.lexeme = q.lexeme),"
                " w AS (SELECT q.*, s.tokens / s.n AS average, CASE WHEN (s.n - q.docs + 0.5)"
                " / (q.docs + 0.5) > 1 THEN ln((s.n - q.docs + 0.5) / (q.docs + 0.5)) ELSE 1e-6"
                " END AS idf FROM q, s)"
                " SELECT w.lexeme, w.idf, w.average, x.ids, x.tfs, x.lengths FROM w, LATERAL"
                " (SELECT string_agg(int8send(p.crystal_id), '') AS ids,"
                " string_agg(int4send(p.tf), '') AS tfs,"
                " string_agg(int4send(p.doc_len), '') AS lengths"
                " FROM postings p WHERE p.workspace = %(ws)s AND p.lexeme = w.lexeme) x",
                {"ws": self.ws, "lexemes": missing},
                binary=True,
            )
            for lexeme, idf, average, ids, tfs, lengths in rows:
                ids_of = np.frombuffer(ids or b"", dtype=">i8").astype(np.int64)
                tf = np.frombuffer(tfs or b"", dtype=">i4").astype(np.float64)
                length = np.frombuffer(lengths or b"", dtype=">i4").astype(np.float64)
                # As the statement: idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg)).
                denominator = tf + K1 * ((1 - B) + (B * length) / average)
                found[lexeme] = (ids_of, idf, tf, denominator)
            if kept is not None:
                held = sum(len(column[0]) for column in list(kept.values()))
                for lexeme in missing:
                    size = len(found[lexeme][0])
                    if held + size > POSTINGS_KEPT:
                        kept.clear()  # the oldest go with the rest: simple, and bounded
                        held = 0
                    if size <= POSTINGS_KEPT:
                        kept[lexeme] = found[lexeme]
                        held += size
        return [found[lexeme] for lexeme in lexemes]

    def _bm25_postings(
        self,
        wanted: list[str],
        extra: list[str],
        sessions: bool | None,
        limit: int,
        paired: bool = False,
    ) -> list[tuple[int, float]]:
        """BM25 of one-stem words in one statement, from the postings (the inverted index):
        the rows of the wanted stems find the matches, the other words' rows are looked up
        for those matches only, and only the best ``limit`` come back (with ``paired``, of
        the matches holding one of ``extra`` too)."""
        lexemes = list(dict.fromkeys(wanted + extra))
        # A word asked twice (two words of one stem) counts twice, as the scan below counts it.
        own = [wanted.count(lexeme) for lexeme in lexemes]
        more = [extra.count(lexeme) for lexeme in lexemes]
        kind = "" if sessions is None else f" AND c.{_kind(sessions)}"
        join = " JOIN crystals c ON c.workspace = %(ws)s AND c.id = h.crystal_id" if kind else ""
        weight = (
            "w.idf * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.doc_len"
            " / (w.tokens / w.n)))"
        )
        summed = "sum(w.{} * " + weight + " ORDER BY w.ord)"
        # The other words' rows of the matches: looked up match by match when the matches are
        # few beside those rows (a rare word and common ones), else read whole and joined.
        extras = (
            ", probe AS (SELECT coalesce(sum(docs) FILTER (WHERE own > 0), 0)"
            " * count(*) FILTER (WHERE more > 0) * %(probe)s"
            " < coalesce(sum(docs) FILTER (WHERE more > 0), 0) AS yes FROM w),"
            f" extras AS (SELECT h.crystal_id, x.more FROM hits h, LATERAL (SELECT"
            f" {summed.format('more')} AS more FROM w JOIN postings p ON p.workspace = %(ws)s"
            " AND p.lexeme = w.lexeme AND p.crystal_id = h.crystal_id WHERE w.more > 0) x"
            " WHERE (SELECT yes FROM probe)"
            f" UNION ALL SELECT h.crystal_id, {summed.format('more')} FROM hits h CROSS JOIN w"
            " JOIN postings p ON p.workspace = %(ws)s AND p.lexeme = w.lexeme"
            " AND p.crystal_id = h.crystal_id WHERE w.more > 0 AND NOT (SELECT yes FROM probe)"
            " GROUP BY h.crystal_id)"
            if extra
            else ""
        )
        # As FTS5 scores "(terms) OR ((terms) AND (also))": the terms count twice in a
        # crystal that also holds one of the other words, which count once.
        score = "CASE WHEN e.more > 0 THEN 2 * h.own + e.more ELSE h.own END" if extra else "h.own"
        if extra:
            join = " LEFT JOIN extras e USING (crystal_id)" + join
            if paired:
                kind += " AND e.more > 0"  # as the score's own test: holds one of ``extra``
        elif paired:
            return []
        rows = self._all(
            "WITH s AS (SELECT greatest(crystal_seq, 1)::float8 AS n,"
            " greatest(token_total, 1)::float8 AS tokens FROM workspaces WHERE id = %(ws)s),"
            " q AS (SELECT q.*, coalesce(t.docs, 0)::float8 AS docs"
            " FROM unnest(%(lexemes)s::text[], %(own)s::int[], %(more)s::int[])"
            " WITH ORDINALITY q(lexeme, own, more, ord)"
            " LEFT JOIN terms t ON t.workspace = %(ws)s AND t.lexeme = q.lexeme),"
            # FTS5's idf, floored: a word in half the crystals or more weighs 1e-6.
            " w AS (SELECT q.*, s.n, s.tokens, CASE WHEN (s.n - q.docs + 0.5) / (q.docs + 0.5)"
            " > 1 THEN ln((s.n - q.docs + 0.5) / (q.docs + 0.5)) ELSE 1e-6 END AS idf FROM q, s),"
            # Summed in the words' order, so equal scores are equal to the last bit (and the
            # id breaks the tie), as the sum over the tf matrix's columns makes them.
            f" hits AS (SELECT p.crystal_id, {summed.format('own')} AS own FROM w JOIN postings p"
            " ON p.workspace = %(ws)s AND p.lexeme = w.lexeme WHERE w.own > 0"
            f" GROUP BY p.crystal_id){extras}"
            f" SELECT h.crystal_id, {score} AS score FROM hits h{join}"
            f" WHERE true{kind} ORDER BY score DESC, h.crystal_id LIMIT %(limit)s",
            {
                "ws": self.ws,
                "lexemes": lexemes,
                "own": own,
                "more": more,
                "k1": K1,
                "b": B,
                "probe": PROBE_COST,
                "limit": limit,
            },
        )
        return [(int(row[0]), float(row[1])) for row in rows]

    def _bm25_matches(
        self,
        wanted: list[tuple[str, ...]],
        extra: list[tuple[str, ...]],
        filter_sql: str,
        limit: int,
        paired: bool = False,
    ) -> list[tuple[int, float]]:
        """BM25 when a word is several lexemes (a phrase): scored over each match's tsvector
        (with ``paired``, only the matches holding one of ``extra`` come back)."""
        phrases = list(dict.fromkeys(wanted + extra))
        lexemes = sorted({lexeme for phrase in phrases for lexeme in phrase})
        query = " | ".join(_phrase(phrase) for phrase in wanted)
        # When every match is a candidate and each word one lexeme, the candidates' own term
        # frequencies give the document frequencies: no second scan of the index.
        count_apart = bool(extra or filter_sql) or any(len(phrase) > 1 for phrase in phrases)
        with self._lock:
            total, tokens = self._all(
                "SELECT crystal_seq, token_total FROM workspaces WHERE id = %s", [self.ws]
            )[0]
            hits = self._document_counts(phrases) if count_apart else None
            rows = self._all(
                "SELECT c.id, c.doc_len, t.lexemes, t.counts FROM crystals c, LATERAL (SELECT"
                " array_agg(u.lexeme) AS lexemes, array_agg(array_length(u.positions, 1))"
                " AS counts FROM unnest(c.tsv) u WHERE u.lexeme = ANY(%s)) t"
                f" WHERE c.workspace = %s AND c.tsv @@ %s::tsquery{filter_sql}",
                [lexemes, self.ws, query],
                binary=True,
            )
        if not rows:
            return []
        column = {lexeme: n for n, lexeme in enumerate(lexemes)}
        found = np.zeros((len(rows), len(lexemes)))
        for n, row in enumerate(rows):
            for lexeme, count in zip(row[2] or (), row[3] or (), strict=True):
                found[n, column[lexeme]] = count
        # A word split into several lexemes counts as often as its rarest part.
        tf = np.stack(
            [found[:, [column[lexeme] for lexeme in phrase]].min(axis=1) for phrase in phrases],
            axis=1,
        )
        total = max(int(total), 1)
        counts = np.array(hits if hits is not None else (tf > 0).sum(axis=0), dtype=np.float64)
        idf = np.log((total - counts + 0.5) / (counts + 0.5))
        idf = np.where(idf > 0, idf, 1e-6)
        length = np.array([row[1] for row in rows], dtype=np.float64)
        norm = K1 * (1 - B + B * length / (max(int(tokens), 1) / total))
        weight = idf * tf * (K1 + 1) / (tf + norm[:, None])
        at = {phrase: n for n, phrase in enumerate(phrases)}
        own = weight[:, [at[phrase] for phrase in wanted]].sum(axis=1)
        extras = weight[:, [at[phrase] for phrase in extra]].sum(axis=1)
        # As FTS5 scores "(terms) OR ((terms) AND (also))": the terms count twice in a
        # crystal that also holds one of the other words, which count once.
        score = np.where(extras > 0, 2.0, 1.0) * own + extras
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        order = np.lexsort((ids, -score))
        if paired:
            order = order[extras[order] > 0]
        order = order[:limit]
        return [(int(ids[n]), float(score[n])) for n in order]

    def _document_counts(self, phrases: list[tuple[str, ...]]) -> list[int]:
        """In how many crystals each phrase occurs: a one-stem word from the term counts, a
        word the parser splits by counting its matches. Kept while the change mark stays."""
        kept = self.kept("counts")
        known: dict[Any, int] = {} if kept is None else kept
        single = [p[0] for p in phrases if len(p) == 1 and p[0] not in known]
        if single:
            found = dict(
                self._all(
                    "SELECT lexeme, docs FROM terms WHERE workspace = %s AND lexeme = ANY(%s)",
                    [self.ws, single],
                )
            )
            known.update((lexeme, int(found.get(lexeme, 0))) for lexeme in single)
        split = [phrase for phrase in phrases if len(phrase) > 1 and phrase not in known]
        if split:
            known.update(zip(split, self._match_counts(split), strict=True))
        # A one-stem word is kept by its stem, a split word by its phrase.
        return [int(known[phrase[0] if len(phrase) == 1 else phrase]) for phrase in phrases]

    def _match_counts(self, phrases: list[tuple[str, ...]]) -> list[int]:
        """In how many crystals each phrase matches (a scan of the index's matches)."""
        counts = ", ".join("count(*) FILTER (WHERE tsv @@ %s::tsquery)" for _ in phrases)
        row = self._all(
            f"SELECT {counts} FROM crystals WHERE workspace = %s AND tsv @@ %s::tsquery",
            [*(_phrase(p) for p in phrases), self.ws, " | ".join(map(_phrase, phrases))],
        )[0]
        return [int(count) for count in row]

    def fts_match(
        self, terms: Sequence[str], also: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """(id, BM25 score, higher is better) of the best matches of any of ``terms``."""
        return self._bm25(terms, also, None, limit)

    def fts_match_paired(
        self, terms: Sequence[str], also: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """Like ``fts_match``, among the matches holding one of ``terms`` and one of ``also``,
        each with the score ``fts_match`` gives it (the same sums in the same order)."""
        if not also:
            return []
        return self._bm25(terms, also, None, limit, paired=True)

    def fts_match_filtered(
        self, terms: Sequence[str], also: Sequence[str], sessions: bool, limit: int
    ) -> list[tuple[int, float]]:
        """Like ``fts_match``, among session transcripts only (or only the rest)."""
        return self._bm25(terms, also, sessions, limit)

    def ids_of_kind(self, ids: Sequence[int], sessions: bool) -> set[int]:
        """Those of ``ids`` that are session transcripts (or, with sessions False, the rest)."""
        if not ids:
            return set()
        rows = self._all(
            f"SELECT id FROM crystals WHERE workspace = %s AND id = ANY(%s) AND {_kind(sessions)}",
            [self.ws, [int(i) for i in ids]],
        )
        return {row[0] for row in rows}

    def term_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """In how many crystals each word's indexed stem occurs."""
        stems = self._stemmed(terms)
        phrases = list(dict.fromkeys(stems[t] for t in terms if stems[t]))
        if not phrases:
            return {term: 0 for term in terms}
        found = dict(zip(phrases, self._document_counts(phrases), strict=True))
        return {term: int(found.get(stems[term], 0)) for term in terms}

    def last_mention(self, words: Sequence[str]) -> str | None:
        """When the newest crystal holding all ``words`` (full-text) was created."""
        stems = self._stemmed(words)
        if not words or not all(stems.values()):
            return None
        return self._one(
            "SELECT max(created_at) FROM crystals WHERE workspace = %s AND tsv @@ %s::tsquery",
            [self.ws, " & ".join(_phrase(stems[word]) for word in words)],
        )

    def texts_holding(
        self, groups: Sequence[Sequence[Sequence[str]]], limit: int
    ) -> list[list[str]]:
        """For each group of word sets, in one query: the texts of up to ``limit`` crystals
        (not forgotten) holding every word (full-text) of one of the group's sets."""
        out: list[list[str]] = [[] for _ in groups]
        stems = self._stemmed([word for sets in groups for words in sets for word in words])
        asked = []
        for n, sets in enumerate(groups):
            queries = [
                "(" + " & ".join(_phrase(stems[word]) for word in words) + ")"
                for words in sets
                if words and all(stems[word] for word in words)
            ]
            if queries:
                asked.append((n, " | ".join(queries)))
        if not asked:
            return out
        sql = " UNION ALL ".join(
            f"(SELECT {n}, text FROM crystals WHERE workspace = %s AND tsv @@ %s::tsquery"
            " AND lifecycle != 'forgotten' LIMIT %s)"
            for n, _ in asked
        )
        params = [value for _, query in asked for value in (self.ws, query, int(limit))]
        for n, text in self._all(sql, params):
            out[int(n)].append(text)
        return out

    def rank_rows(self, ids: Sequence[int]) -> list[RankRow]:
        """(id, source, julian day of creation, importance, archived 0/1) of the crystals, by
        id. A search reads hundreds, mostly the same ones again: they are kept while the
        change mark stays (``kept``)."""
        wanted = sorted({int(i) for i in ids if 0 < int(i) < 2**63})
        if not wanted:
            return []
        kept: dict[int, RankRow | None] | None = self.kept("rank")
        if kept is None:
            return self._read_rank_rows(wanted)
        missing = [i for i in wanted if i not in kept]
        if missing:
            # The rows READ_AHEAD ids either side come along (a transcript turn's neighbours,
            # which a search asks for next): one round trip, not two.
            near = {i + step for i in missing for step in range(-READ_AHEAD, READ_AHEAD + 1)}
            read = sorted(i for i in near if i > 0 and i not in kept)
            # In one update (another thread may read the same table): None is forgotten, or
            # no such id.
            found = {row[0]: row for row in self._read_rank_rows(read)}
            kept.update((i, found.get(i)) for i in read)
        return list(filter(None, map(kept.__getitem__, wanted)))

    def _read_rank_rows(self, ids: list[int]) -> list[RankRow]:
        # The rows as psycopg makes them (tuples, the day already a float8): no Python call
        # per row, and binary, so no number is parsed from text (a search reads hundreds).
        return cast(
            list[RankRow],
            self._all(
                f"SELECT id, source, {JULIAN.format('created_at')}, importance,"
                " (lifecycle = 'archived')::int FROM crystals WHERE workspace = %s"
                " AND id = ANY(%s) AND lifecycle != 'forgotten'",
                [self.ws, ids],
                binary=True,
            ),
        )

    def hit_rows(self, ids: Sequence[int]) -> list[HitRow]:
        """(id, text, source, semantic type, importance, lifecycle, created at) of the crystals,
        in the order asked (kept while the change mark stays, as rank rows are)."""
        wanted = list(dict.fromkeys(int(i) for i in ids if 0 < int(i) < 2**63))
        if not wanted:
            return []
        kept: dict[int, HitRow | None] | None = self.kept("hits", HIT_LIMIT)
        if kept is None:
            kept = {}
        missing = [i for i in wanted if i not in kept]
        if missing:
            rows = self._all(
                "SELECT id, text, source, semantic_type, importance, lifecycle, created_at"
                " FROM crystals WHERE workspace = %s AND id = ANY(%s)"
                " AND lifecycle != 'forgotten'",
                [self.ws, missing],
            )
            found = {row[0]: tuple(row) for row in rows}
            kept.update((i, found.get(i)) for i in missing)  # None: forgotten, or no such id
        return list(filter(None, map(kept.__getitem__, wanted)))

    def newest_day(self) -> float | None:
        """The julian day of the newest crystal's creation (kept while the mark stays)."""
        kept = self.kept("newest")
        if kept is not None and "day" in kept:
            return cast(float | None, kept["day"])
        day = self._one(
            f"SELECT {JULIAN.format('max(created_at)')} FROM crystals WHERE workspace = %s",
            [self.ws],
        )
        day = None if day is None else float(day)
        if kept is not None:
            kept["day"] = day
        return day

    def drop_searches(self, names: Callable[[str], bool]) -> int:
        """Delete the searches and gaps whose query ``names`` accepts; count the rows."""
        with self._lock:
            # A pending search is dropped before it is ever written: forgotten means gone.
            dropped = sum(1 + entry[5] for entry in self._pending if names(entry[1]))
            self._pending = [entry for entry in self._pending if not names(entry[1])]
            return dropped + self._drop_written(names)

    def _drop_written(self, names: Callable[[str], bool]) -> int:
        dropped = 0
        with self.transaction():
            for table in ("searches", "gaps"):
                ids = [
                    row[0]
                    for row in self._all(
                        f"SELECT id, query FROM {table} WHERE workspace = %s", [self.ws]
                    )
                    if names(row[1])
                ]
                if ids:
                    self._run(
                        f"DELETE FROM {table} WHERE workspace = %s AND id = ANY(%s)",
                        [self.ws, ids],
                    )
                dropped += len(ids)
        return dropped

    def open_gaps(self, since: str, limit: int) -> list[tuple[str, str]]:
        """(query, last asked) of searches that found nothing and were not answered since."""
        self.settle()
        # As on SQLite: a gap stays open until a later search for the same words found
        # something (a search that finds nothing writes a gap row at the same moment).
        rows: list[Any] = self._all(
            "SELECT query, at FROM (SELECT DISTINCT ON (lower(g.query)) g.query, g.at"
            " FROM gaps g WHERE g.workspace = %s AND g.resolved_at IS NULL AND g.at >= %s"
            " AND NOT EXISTS (SELECT 1 FROM searches s WHERE s.workspace = g.workspace"
            "   AND lower(s.query) = lower(g.query) AND s.at > g.at AND NOT EXISTS (SELECT 1"
            "     FROM gaps g2 WHERE g2.workspace = g.workspace AND g2.query = s.query"
            "     AND g2.at = s.at))"
            " ORDER BY lower(g.query), g.at DESC) open ORDER BY at DESC, query LIMIT %s",
            [self.ws, since, limit],
        )
        return [(row[0], row[1]) for row in rows]
