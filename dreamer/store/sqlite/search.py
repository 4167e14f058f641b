"""Full-text search in SQLite (FTS5 with BM25), the search log and curiosity gaps."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from dreamer.store.shared import PendingSearch, access_counts
from dreamer.store.sqlite.base import Connected, marks
from dreamer.store.sqlite.schema import FTS_TOKENIZER

if TYPE_CHECKING:
    from dreamer.store.base import HitRow, RankRow


def fts_expression(terms: Sequence[str], joiner: str = " OR ") -> str:
    """An FTS5 MATCH expression of quoted terms (so no query text is FTS syntax)."""
    return joiner.join('"' + term.replace('"', '""') + '"' for term in terms)


def _expression(terms: Sequence[str], also: Sequence[str]) -> str:
    expression = fts_expression(terms)
    if also:
        # Candidates must have one of terms; the others still rank them (terms count twice
        # in BM25, a mild extra weight on what discriminates).
        expression = f"({expression}) OR (({expression}) AND ({fts_expression(also)}))"
    return expression


STEM_CACHE = 10_000  # words whose stem this process remembers (a word's stem never changes)
FREQUENCY_CACHE = 10_000  # stems whose counts a connection keeps while the database is unchanged
RANK_CACHE = 20_000  # crystals whose rank rows a connection keeps while it is unchanged (~4 MB)
_stems: dict[str, str | None] = {}
_UNKNOWN = ""  # no word stems to the empty string: marks a word not looked up yet


def _kind(sessions: bool) -> str:
    return "c.source = 'sessions'" if sessions else "c.source != 'sessions'"


class SearchTables(Connected):
    """``crystals_fts`` and the ``searches`` and ``gaps`` tables."""

    # Set when the temporary tables are made (``_query_tables``): the frequencies counted,
    # when, and how many rows this connection wrote to its temporary tables.
    _counts: dict[str, int]
    _counted_at: tuple[Any, int] | None
    # The rank rows kept (``rank_rows``; None: a crystal forgotten or not there) and when.
    _ranked: dict[int, RankRow | None]
    _ranked_at: tuple[int, int]
    _temp_changes: int
    # What ``kept_value`` keeps, and under which change mark.
    _values: tuple[Any, dict[str, Any]]

    def fts_match(
        self, terms: Sequence[str], also: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """(id, BM25 score, higher is better) of the best matches of any of ``terms``."""
        # FTS5 alone, without a join: a join looks up every match's row before the sort (3x
        # slower at 100k crystals).
        rows = self.db.execute(
            "SELECT rowid, -bm25(crystals_fts) AS score FROM crystals_fts"
            " WHERE crystals_fts MATCH ? ORDER BY score DESC LIMIT ?",
            [_expression(terms, also), limit],
        ).fetchall()
        return [(row[0], row[1]) for row in rows]

    def fts_match_paired(
        self, terms: Sequence[str], also: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """Like ``fts_match``, among the matches holding one of ``terms`` and one of ``also``.

        The expression's words come in the order ``fts_match``'s come (``terms`` twice, then
        ``also``), so FTS5's BM25 adds up the same numbers in the same order: a match gets the
        very score ``fts_match`` gives it. Only these matches are scored: the cost.
        """
        if not also:
            return []
        both = fts_expression(terms)
        rows = self.db.execute(
            "SELECT rowid, -bm25(crystals_fts) AS score FROM crystals_fts"
            " WHERE crystals_fts MATCH ? ORDER BY score DESC LIMIT ?",
            [f"({both}) AND (({both}) AND ({fts_expression(also)}))", limit],
        ).fetchall()
        return [(row[0], row[1]) for row in rows]

    def fts_match_filtered(
        self, terms: Sequence[str], also: Sequence[str], sessions: bool, limit: int
    ) -> list[tuple[int, float]]:
        """Like ``fts_match``, among session transcripts only (or only the rest)."""
        rows = self.db.execute(
            "SELECT c.id, -bm25(crystals_fts) AS score FROM crystals_fts"
            " JOIN crystals c ON c.id = crystals_fts.rowid"
            f" WHERE crystals_fts MATCH ? AND {_kind(sessions)}"
            " ORDER BY score DESC LIMIT ?",
            [_expression(terms, also), limit],
        ).fetchall()
        return [(row[0], row[1]) for row in rows]

    def ids_of_kind(self, ids: Sequence[int], sessions: bool) -> set[int]:
        """Those of ``ids`` that are session transcripts (or, with sessions False, the rest)."""
        if not ids:
            return set()
        return {
            row[0]
            for row in self.db.execute(
                f"SELECT c.id FROM crystals c WHERE c.id IN ({marks(ids)}) AND {_kind(sessions)}",
                list(ids),
            )
        }

    def term_frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        """In how many crystals each word's indexed stem occurs (FTS5's own vocabulary).

        Counting a common word's crystals reads its whole list in the index, so the counts are
        kept while the database is unchanged (``change_mark``), never those read inside a
        write transaction, which may roll back (the mark does not move back with it).
        """
        # A vocabulary cursor is aborted if this connection writes the index meanwhile.
        with self._write_lock:
            self._query_tables()
            stems = self._stems(list(terms))
            wanted = sorted({stem for stem in stems.values() if stem is not None})
            if not wanted:
                return {term: 0 for term in terms}
            if self.db.conn.in_transaction:
                counts: dict[str, int] = {}
            else:
                version = self.change_mark()
                if version != self._counted_at or len(self._counts) > FREQUENCY_CACHE:
                    self._counts, self._counted_at = {}, version
                counts = self._counts
            missing = [stem for stem in wanted if stem not in counts]
            if missing:
                found = dict(
                    self.db.execute(
                        "SELECT term, doc FROM temp.dreamer_fts_terms"
                        f" WHERE term IN ({marks(missing)})",
                        missing,
                    ).fetchall()
                )
                counts.update((stem, found.get(stem, 0)) for stem in missing)
        return {term: counts.get(stems[term] or "", 0) if stems[term] else 0 for term in terms}

    def change_mark(self) -> tuple[int, int]:
        """A mark that moves whenever what a search reads may have changed: a commit by another
        connection (SQLite's ``data_version``) or a change by this one (``total_changes``,
        less its temporary tables' rows and its own search log's, access counts included).

        Inside ``reading`` another connection's commit is seen when the next stretch begins
        (``data_version`` is read once a search); a change by this one moves it at once.
        """
        conn = self.db.conn
        changes = conn.total_changes - self._log_changes - getattr(self, "_temp_changes", 0)
        pins: threading.local | None = self.__dict__.get("_pins")
        pinned: tuple[int, int] | None = getattr(pins, "mark", None)
        if pinned is not None and pinned[1] == changes and not conn.in_transaction:
            return pinned
        mark = (self._one("PRAGMA data_version"), changes)
        if pins is not None and pinned is not None:
            pins.mark = mark  # this connection changed something: the stretch goes on from here
        return mark

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A stretch of reads (a search) on this thread that reads ``data_version`` once: the
        store as it was when the stretch began, as far as other connections' commits go (a
        search's half dozen reads of the mark cost a statement each otherwise)."""
        pins = self.__dict__.setdefault("_pins", threading.local())
        if getattr(pins, "mark", None) is not None:
            yield  # nested
            return
        pins.mark = self.change_mark()
        try:
            yield
        finally:
            pins.mark = None

    def kept_value(self, name: str, read: Callable[[], Any]) -> Any:
        """``read()``, kept under ``name`` while the database is unchanged (``change_mark``;
        never what a write transaction reads, which may roll back)."""
        if self.db.conn.in_transaction:
            return read()
        mark = self.change_mark()  # before the read: a change after it moves the mark
        kept: tuple[Any, dict[str, Any]] | None = getattr(self, "_values", None)
        if kept is None or kept[0] != mark:
            kept = (mark, {})
            self._values = kept
        values = kept[1]
        if name not in values:
            values[name] = read()
        return values[name]

    def _stems(self, terms: list[str]) -> dict[str, str | None]:
        """The stem FTS5 indexes each word under (None: the tokenizer keeps nothing of it).

        A word is tokenized once per process, through a temporary FTS5 table with the index's
        tokenizer; the answer is remembered (``STEM_CACHE`` words), as it never changes.
        """
        found: dict[str, str | None] = {}
        missing = []
        for term in dict.fromkeys(terms):
            stem = _stems.get(term, _UNKNOWN)
            if stem is _UNKNOWN:
                missing.append(term)
            else:
                found[term] = stem
        if missing:
            tokens = self._tokenize(missing)
            fresh = {term: tokens.get(term) for term in missing}
            if len(_stems) + len(fresh) > STEM_CACHE:
                _stems.clear()
            _stems.update(fresh)
            found.update(fresh)
        return found

    def _query_tables(self) -> None:
        """Make the temporary tables the stems and frequencies are read from (once)."""
        if getattr(self, "_query_tables_made", False):
            return
        if not hasattr(self, "_temp_changes"):
            self._counts = {}
            self._counted_at = None
            self._temp_changes = 0
        db = self.db
        before = db.conn.total_changes
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.dreamer_query USING fts5(t,"
            f" tokenize='{FTS_TOKENIZER}')"
        )
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.dreamer_query_terms"
            " USING fts5vocab(temp, 'dreamer_query', 'instance')"
        )
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.dreamer_fts_terms"
            " USING fts5vocab(main, 'crystals_fts', 'row')"
        )
        self._temp_changes += db.conn.total_changes - before
        # Made inside a write transaction, they go if it rolls back: made again next time.
        self._query_tables_made = not db.conn.in_transaction

    def _tokenize(self, terms: list[str]) -> dict[str, str]:
        """Stem words with the index's tokenizer (the temporary tables made once a connection)."""
        # Writes to temp tables: they take turns with this connection's transactions, or one
        # thread's statement lands inside (and is aborted with) another thread's transaction.
        with self._write_lock:
            self._query_tables()
            db = self.db
            before = db.conn.total_changes
            db.execute("DELETE FROM temp.dreamer_query")
            db.conn.executemany(
                "INSERT INTO temp.dreamer_query (rowid, t) VALUES (?, ?)",
                list(enumerate(terms, start=1)),
            )
            self._temp_changes += db.conn.total_changes - before
            rows = db.execute("SELECT doc, term FROM temp.dreamer_query_terms").fetchall()
        return {terms[doc - 1]: term for doc, term in rows}

    def last_mention(self, words: Sequence[str]) -> str | None:
        """When the newest crystal holding all ``words`` (full-text) was created."""
        if not words:
            return None
        return self._one(
            "SELECT max(c.created_at) FROM crystals_fts JOIN crystals c"
            " ON c.id = crystals_fts.rowid WHERE crystals_fts MATCH ?",
            [fts_expression(words, " AND ")],
        )

    def texts_holding(
        self, groups: Sequence[Sequence[Sequence[str]]], limit: int
    ) -> list[list[str]]:
        """For each group of word sets, in one query: the texts of up to ``limit`` crystals
        (not forgotten) holding every word (full-text) of one of the group's sets."""
        out: list[list[str]] = [[] for _ in groups]
        asked = [
            (n, " OR ".join(f"({fts_expression(words, ' AND ')})" for words in sets if words))
            for n, sets in enumerate(groups)
        ]
        asked = [(n, expression) for n, expression in asked if expression]
        for start in range(0, len(asked), 100):  # well within SQLite's compound-select limit
            part = asked[start : start + 100]
            sql = " UNION ALL ".join(
                f"SELECT {n}, text FROM (SELECT c.text FROM crystals_fts JOIN crystals c"
                " ON c.id = crystals_fts.rowid WHERE crystals_fts MATCH ?"
                " AND c.lifecycle != 'forgotten' LIMIT ?)"
                for n, _ in part
            )
            params = [value for _, expression in part for value in (expression, int(limit))]
            for n, text in self.db.execute(sql, params).fetchall():
                out[n].append(text)
        return out

    def rank_rows(self, ids: Sequence[int]) -> list[RankRow]:
        """(id, source, julian day of creation, importance, archived 0/1) of the crystals, by id.

        A search reads hundreds of these, mostly the same ones again in a small store: the
        rows read are kept while the database is unchanged (``change_mark``; never those read
        inside a write transaction, which may roll back), up to ``RANK_CACHE`` of them.
        """
        if not ids:
            return []
        wanted = sorted(set(ids))
        if self.db.conn.in_transaction:
            return self._read_rank_rows(wanted)
        mark = self.change_mark()  # before the read: a change after it moves the mark
        kept: dict[int, RankRow | None] | None = getattr(self, "_ranked", None)
        if kept is None or self._ranked_at != mark or len(kept) > RANK_CACHE:
            kept = {}
            self._ranked, self._ranked_at = kept, mark
        missing = sorted(set(wanted).difference(kept))
        if missing:
            read: dict[int, RankRow | None] = dict.fromkeys(missing)  # None: forgotten, or none
            read.update((row[0], row) for row in self._read_rank_rows(missing))
            kept.update(read)  # in one update: another thread never sees an unread id as None
        return list(filter(None, map(kept.__getitem__, wanted)))

    def _read_rank_rows(self, ids: list[int]) -> list[RankRow]:
        # fetchall: plain tuples, no Python call per row (a search reads hundreds). The narrow
        # index holds every column asked (migration m070); SQLite would read the rows.
        return self.db.execute(
            "SELECT id, source, julianday(created_at), importance, lifecycle = 'archived'"
            " FROM crystals INDEXED BY crystals_rank"
            f" WHERE id IN ({marks(ids)}) AND lifecycle != 'forgotten'",
            ids,
        ).fetchall()

    def hit_rows(self, ids: Sequence[int]) -> list[HitRow]:
        """(id, text, source, semantic type, importance, lifecycle, created at) of the crystals."""
        if not ids:
            return []
        # Not through crystals_by_id: that read writes pending searches first (it shows access
        # counts), and a search must not write the log it is batching.
        return self.db.execute(
            "SELECT id, text, source, semantic_type, importance, lifecycle, created_at"
            f" FROM crystals WHERE id IN ({marks(ids)}) AND lifecycle != 'forgotten'",
            list(ids),
        ).fetchall()

    def newest_day(self) -> float | None:
        """The julian day of the newest crystal's creation (kept while the store is unchanged)."""
        return self.kept_value(
            "newest_day", lambda: self._one("SELECT julianday(max(created_at)) FROM crystals")
        )

    def _insert_searches(self, batch: list[PendingSearch]) -> None:
        conn = self.db.conn
        conn.executemany(
            "INSERT INTO searches (at, query, search_type, result_ids, top_score)"
            " VALUES (?, ?, ?, ?, ?)",
            [(at, query, kind, _id_list(ids), top) for at, query, kind, ids, top, _ in batch],
        )
        gaps = [(at, query, top) for at, query, _, _, top, gap in batch if gap]
        if gaps:
            conn.executemany("INSERT INTO gaps (at, query, top_score) VALUES (?, ?, ?)", gaps)
        counts = access_counts(batch)
        if counts:
            conn.executemany(
                "UPDATE crystals SET access_count = access_count + ?, last_accessed_at = ?"
                " WHERE id = ?",
                [(count, at, crystal_id) for crystal_id, (count, at) in counts.items()],
            )

    def drop_searches(self, names: Callable[[str], bool]) -> int:
        """Delete the searches and gaps whose query ``names`` accepts; count the rows."""
        with self._write_lock:
            # A pending search is dropped before it is ever written: forgotten means gone.
            kept = [entry for entry in self._pending if not names(entry[1])]
            dropped = sum(1 + entry[5] for entry in self._pending if names(entry[1]))
            self._pending = kept
            with self.transaction():
                for table in ("searches", "gaps"):
                    ids = [
                        (row[0],)
                        for row in self.db.execute(f"SELECT id, query FROM {table}").fetchall()
                        if names(row[1])
                    ]
                    self.db.conn.executemany(f"DELETE FROM {table} WHERE id = ?", ids)
                    dropped += len(ids)
        return dropped

    def open_gaps(self, since: str, limit: int) -> list[tuple[str, str]]:
        """(query, last asked) of searches that found nothing and were not answered since."""
        self.settle()
        # A gap stays open until a later search for the same words found something (a search
        # that finds nothing writes a gap row at the same moment).
        rows = self.db.execute(
            "SELECT g.query, max(g.at) FROM gaps g WHERE g.resolved_at IS NULL AND g.at >= ?"
            " AND NOT EXISTS (SELECT 1 FROM searches s WHERE lower(s.query) = lower(g.query)"
            "   AND s.at > g.at AND NOT EXISTS (SELECT 1 FROM gaps g2"
            "     WHERE g2.query = s.query AND g2.at = s.at))"
            " GROUP BY lower(g.query) ORDER BY max(g.at) DESC, g.query LIMIT ?",
            [since, limit],
        ).fetchall()
        return [(row[0], row[1]) for row in rows]


def _id_list(ids: Sequence[int]) -> str:
    """The JSON list of ids the searches table keeps (as ``json.dumps`` writes it)."""
    return "[" + ", ".join(str(int(i)) for i in ids) + "]"
