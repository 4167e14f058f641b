"""The PostgreSQL schema, changed only through these numbered migrations.

One database holds many workspaces: every table is keyed by ``workspace`` (the id of a row of
``workspaces``, whose ``key`` is what a Workspace names itself by). Crystal ids are counted per
workspace (``workspaces.crystal_seq``), so within one workspace they are 1, 2, 3 ... as in
SQLite: search reads a transcript turn's neighbours by id, and the highest id is the store's
size in BM25. Other tables use one global identity: their ids only need to grow.

Full text: ``tsv`` is ``to_tsvector('dreamer', text)`` with the diacritics folded away first
(in Python: the server may have no ``unaccent``), under a GIN index; ``doc_len`` is the number
of tokens, which BM25 needs; ``postings`` (a row per stem of a crystal) and ``terms`` (per
stem, how many crystals hold it) are derived from ``tsv`` and kept with it. The ``dreamer``
configuration stems English (Snowball) but, like SQLite's FTS5 index, drops no stop word, and
indexes a hyphenated word as its parts only.
Vectors are pgvector ``vector`` columns; search scans them exactly, one workspace at a time.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, tuple[str, ...]]] = [
    (
        "m001_initial",
        (
            "CREATE EXTENSION IF NOT EXISTS vector",
            # A Snowball stemmer without a stop-word list: every word is indexed, as in FTS5.
            "CREATE TEXT SEARCH DICTIONARY dreamer_stem (TEMPLATE = snowball, Language = english)",
            "CREATE TEXT SEARCH CONFIGURATION dreamer (COPY = pg_catalog.english)",
            "ALTER TEXT SEARCH CONFIGURATION dreamer ALTER MAPPING FOR asciiword, word,"
            " hword_asciipart, hword_part WITH dreamer_stem",
            "ALTER TEXT SEARCH CONFIGURATION dreamer DROP MAPPING FOR asciihword, hword",
            """
            CREATE TABLE workspaces (
                id SERIAL PRIMARY KEY,
                key TEXT NOT NULL UNIQUE,
                crystal_seq BIGINT NOT NULL DEFAULT 0,
                token_total BIGINT NOT NULL DEFAULT 0
            )
            """,
            """
            CREATE TABLE crystals (
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                id BIGINT NOT NULL,
                text TEXT NOT NULL,
                source TEXT NOT NULL,
                semantic_type TEXT NOT NULL,
                importance DOUBLE PRECISION NOT NULL,
                lifecycle TEXT NOT NULL DEFAULT 'generated',
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                last_accessed_at TEXT,
                access_count INTEGER NOT NULL DEFAULT 0,
                dopamine DOUBLE PRECISION,
                cortisol DOUBLE PRECISION,
                oxytocin DOUBLE PRECISION,
                content_hash TEXT NOT NULL,
                parent_id BIGINT,
                origin TEXT,
                consolidated_at TEXT,
                embedding vector,
                embedder TEXT,
                tsv TSVECTOR NOT NULL,
                doc_len INTEGER NOT NULL,
                PRIMARY KEY (workspace, id),
                UNIQUE (workspace, content_hash)
            )
            """,
            "CREATE INDEX crystals_tsv ON crystals USING GIN (tsv)",
            "CREATE INDEX crystals_created ON crystals (workspace, created_at)",
            "CREATE INDEX crystals_lifecycle ON crystals (workspace, lifecycle)",
            """
            CREATE TABLE tombstones (
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                crystal_id BIGINT NOT NULL,
                content_hash TEXT NOT NULL,
                source TEXT NOT NULL,
                created_at TEXT NOT NULL,
                forgotten_at TEXT NOT NULL,
                reason TEXT NOT NULL,
                PRIMARY KEY (workspace, crystal_id)
            )
            """,
            """
            CREATE TABLE meta (
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                key TEXT NOT NULL,
                value TEXT,
                PRIMARY KEY (workspace, key)
            )
            """,
            """
            CREATE TABLE dreams (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                started_at TEXT NOT NULL,
                finished_at TEXT,
                outcome TEXT NOT NULL,
                reason TEXT,
                synthesizer TEXT,
                model TEXT,
                inputs TEXT,
                old_state TEXT,
                new_state TEXT,
                draft TEXT,
                critiques TEXT,
                revisions TEXT,
                consumed TEXT,
                input_tokens BIGINT,
                output_tokens BIGINT,
                cache_read_tokens BIGINT,
                cache_write_tokens BIGINT,
                cost_usd DOUBLE PRECISION,
                error TEXT,
                raw TEXT
            )
            """,
            "CREATE INDEX dreams_workspace ON dreams (workspace, id)",
            """
            CREATE TABLE audit (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                at TEXT NOT NULL,
                crystal_id BIGINT,
                action TEXT NOT NULL,
                detail TEXT
            )
            """,
            "CREATE INDEX audit_crystal ON audit (workspace, crystal_id)",
            """
            CREATE TABLE hormones (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                at TEXT NOT NULL,
                dopamine DOUBLE PRECISION NOT NULL,
                cortisol DOUBLE PRECISION NOT NULL,
                oxytocin DOUBLE PRECISION NOT NULL,
                hormone TEXT,
                delta DOUBLE PRECISION,
                reason TEXT,
                source TEXT
            )
            """,
            "CREATE INDEX hormones_at ON hormones (workspace, at)",
            """
            CREATE TABLE searches (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                at TEXT NOT NULL,
                query TEXT NOT NULL,
                search_type TEXT NOT NULL,
                result_ids TEXT NOT NULL,
                top_score DOUBLE PRECISION
            )
            """,
            "CREATE INDEX searches_at ON searches (workspace, at)",
            """
            CREATE TABLE gaps (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                at TEXT NOT NULL,
                query TEXT NOT NULL,
                top_score DOUBLE PRECISION,
                resolved_at TEXT
            )
            """,
            "CREATE INDEX gaps_at ON gaps (workspace, at)",
            """
            CREATE TABLE runs (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                job TEXT NOT NULL,
                started_at TEXT NOT NULL,
                finished_at TEXT,
                outcome TEXT NOT NULL,
                detail TEXT
            )
            """,
            "CREATE INDEX runs_job ON runs (workspace, job, started_at)",
        ),
    ),
    (
        # The workspace lock as a lease (it can expire: a machine can vanish) and MEMORY.md's
        # state as a row whose writes are fenced by the lease's token.
        "m002_leases_and_state",
        (
            """
            CREATE TABLE leases (
                workspace INTEGER PRIMARY KEY REFERENCES workspaces(id),
                holder TEXT,
                token BIGINT NOT NULL DEFAULT 0,
                expires_at TIMESTAMPTZ
            )
            """,
            """
            CREATE TABLE states (
                workspace INTEGER PRIMARY KEY REFERENCES workspaces(id),
                text TEXT NOT NULL,
                token BIGINT NOT NULL,
                written_at TEXT NOT NULL
            )
            """,
        ),
    ),
    (
        # How many crystals each stem is in, per workspace (FTS5 keeps the same numbers in its
        # vocabulary): BM25's document frequencies without counting index matches each time.
        "m003_term_counts",
        (
            """
            CREATE TABLE terms (
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                lexeme TEXT NOT NULL,
                docs BIGINT NOT NULL,
                PRIMARY KEY (workspace, lexeme)
            )
            """,
            "INSERT INTO terms (workspace, lexeme, docs) SELECT c.workspace, u.lexeme, count(*)"
            " FROM crystals c, unnest(c.tsv) u GROUP BY c.workspace, u.lexeme",
        ),
    ),
    (
        # The scratch write-ahead log as rows, so a fleet's machines need no shared folder:
        # pending while rotated_by is NULL, else taken by the dream holding that lease token.
        "m004_scratch",
        (
            """
            CREATE TABLE scratch (
                workspace INTEGER NOT NULL REFERENCES workspaces(id),
                seq BIGINT GENERATED ALWAYS AS IDENTITY,
                at TEXT NOT NULL,
                importance DOUBLE PRECISION NOT NULL,
                text TEXT NOT NULL,
                rotated_by BIGINT,
                PRIMARY KEY (workspace, seq)
            )
            """,
        ),
    ),
    (
        # What a note is about and what it replaces, as its writer gave them, on the crystal
        # and on its scratch row (the write-ahead log keeps every field of a note).
        "m005_note_fields",
        (
            "ALTER TABLE crystals ADD COLUMN about TEXT",
            "ALTER TABLE crystals ADD COLUMN replaces TEXT",
            "CREATE INDEX crystals_about ON crystals (workspace, lower(about))"
            " WHERE about IS NOT NULL",
            "ALTER TABLE scratch ADD COLUMN about TEXT",
            "ALTER TABLE scratch ADD COLUMN replaces TEXT",
        ),
    ),
    (
        # BM25 read from an inverted index instead of every match's tsvector: one row per stem
        # of a crystal, with its term frequency and the crystal's length, in the order a search
        # reads them (a stem's rows of one workspace together). Derived from ``tsv`` like
        # ``terms``, and kept with it: a forget or a rewrite deletes a crystal's rows. No
        # foreign key: a bulk load writes tens of rows a crystal. Crystals waiting for a vector
        # are found by an index, not a scan of every row at each search.
        "m006_postings",
        (
            """
            CREATE TABLE postings (
                workspace INTEGER NOT NULL,
                lexeme TEXT NOT NULL,
                crystal_id BIGINT NOT NULL,
                tf INTEGER NOT NULL,
                doc_len INTEGER NOT NULL,
                PRIMARY KEY (workspace, lexeme, crystal_id) INCLUDE (tf, doc_len)
            )
            """,
            "INSERT INTO postings (workspace, lexeme, crystal_id, tf, doc_len) SELECT c.workspace,"
            " u.lexeme, c.id, array_length(u.positions, 1), c.doc_len FROM crystals c,"
            " unnest(c.tsv) u",
            "CREATE INDEX crystals_unembedded ON crystals (workspace, id)"
            " WHERE embedding IS NULL AND lifecycle != 'forgotten'",
            "ANALYZE crystals",
            "ANALYZE postings",
            "ANALYZE terms",
        ),
    ),
    (
        # The change mark (``change_mark``): ``workspaces.changes`` moves in the transaction of
        # every write a search could see (a crystal added, changed or deleted, a tombstone, a
        # meta value such as the vector generation), whoever writes it, so a reader may keep
        # what it read while the mark stays. Bumped once a transaction and workspace (a bulk
        # load of 100k rows adds one row version, not 100k). An update that only counts an
        # access (the search log's, which sets ``dreamer.access_only`` for its transaction)
        # changes nothing a search reads and leaves the mark.
        "m007_change_mark",
        (
            "ALTER TABLE workspaces ADD COLUMN changes BIGINT NOT NULL DEFAULT 0",
            """
            CREATE FUNCTION dreamer_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE
                ws INTEGER := CASE WHEN TG_OP = 'DELETE' THEN OLD.workspace ELSE NEW.workspace END;
                flag TEXT := 'dreamer.changed_' || ws;
            BEGIN
                IF TG_OP = 'UPDATE' AND TG_TABLE_NAME = 'crystals'
                        AND current_setting('dreamer.access_only', true) = 'on' THEN
                    RETURN NULL;
                END IF;
                IF current_setting(flag, true) IS DISTINCT FROM 'on' THEN
                    UPDATE workspaces SET changes = changes + 1 WHERE id = ws;
                    PERFORM set_config(flag, 'on', true);
                END IF;
                RETURN NULL;
            END
            $$
            """,
            "CREATE TRIGGER crystals_changed AFTER INSERT OR UPDATE OR DELETE ON crystals"
            " FOR EACH ROW EXECUTE FUNCTION dreamer_changed()",
            "CREATE TRIGGER tombstones_changed AFTER INSERT OR UPDATE OR DELETE ON tombstones"
            " FOR EACH ROW EXECUTE FUNCTION dreamer_changed()",
            "CREATE TRIGGER meta_changed AFTER INSERT OR UPDATE OR DELETE ON meta"
            " FOR EACH ROW EXECUTE FUNCTION dreamer_changed()",
            # TRUNCATE names no workspace: every one's mark moves.
            "CREATE FUNCTION dreamer_truncated() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN UPDATE workspaces SET changes = changes + 1; RETURN NULL; END $$",
            *(
                f"CREATE TRIGGER {table}_truncated AFTER TRUNCATE ON {table}"
                " FOR EACH STATEMENT EXECUTE FUNCTION dreamer_truncated()"
                for table in ("crystals", "tombstones", "meta")
            ),
        ),
    ),
    (
        # Who said a crystal's words (the user, the agent, a tool ...): only some speakers may
        # set a rule (DESIGN.md, "Who said what"). Older crystals keep NULL: not recorded.
        "m008_speaker",
        ("ALTER TABLE crystals ADD COLUMN speaker TEXT",),
    ),
]
