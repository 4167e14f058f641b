"""The test PostgreSQL (`pg.py`): it starts by itself, has what the PostgreSQL store needs
(pgvector, full-text search, row locks that workers can skip), and leaves nothing behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from pg import PgServer, PostgresUnavailable, start_postgres, unavailable

try:
    import psutil
    import psycopg
except ImportError as exc:  # both come with the test extra (psutil with pgserver)
    unavailable(f"{exc.name} is not installed", allow_module_level=True)

pytest_plugins = ["pg_fixture"]  # postgres_server, postgres_url, pg_database
pytestmark = pytest.mark.postgres  # every test here starts or uses a PostgreSQL server


def test_the_server_is_postgres_16_with_pgvector(postgres_server: PgServer) -> None:
    assert postgres_server.version.startswith("16.")
    with psycopg.connect(postgres_server.url) as conn:
        row = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
    assert row is not None, "pgvector is not shipped with this PostgreSQL"


def test_the_server_never_runs_as_root(postgres_server: PgServer) -> None:
    postmaster = psutil.Process(postgres_server.pid)
    for process in [postmaster, *postmaster.children(recursive=True)]:
        assert process.uids().effective != 0


def test_each_test_gets_an_empty_database_of_its_own(pg_database: str, postgres_url: str) -> None:
    with psycopg.connect(pg_database) as conn:
        (name,) = conn.execute("SELECT current_database()").fetchone() or ("",)
        tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
        assert tables.fetchone() == (0,)
    assert name.startswith("test_")
    with psycopg.connect(postgres_url) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        assert exists.fetchone() == (1,)


def _vector(values: list[float]) -> str:
    return "[" + ",".join(map(str, values)) + "]"


def test_vectors_are_stored_and_ranked_by_cosine_distance(pg_database: str) -> None:
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE TABLE crystals (id int PRIMARY KEY, embedding vector(3) NOT NULL)")
        conn.execute("CREATE INDEX ON crystals USING hnsw (embedding vector_cosine_ops)")
        rows = [(1, [1.0, 0.0, 0.0]), (2, [0.0, 1.0, 0.0]), (3, [0.9, 0.1, 0.0])]
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO crystals VALUES (%s, %s::vector)",
                [(id_, _vector(v)) for id_, v in rows],
            )
        query = _vector([1.0, 0.05, 0.0])
        found = conn.execute(
            "SELECT id, embedding <=> %(q)s::vector FROM crystals"
            " ORDER BY embedding <=> %(q)s::vector LIMIT 2",
            {"q": query},
        ).fetchall()
    assert [id_ for id_, _ in found] == [1, 3]
    # cosine distance between [1, 0.05, 0] and [1, 0, 0]
    assert found[0][1] == pytest.approx(1 - 1 / (1 + 0.05**2) ** 0.5, abs=1e-6)


def test_full_text_search_stems_and_ranks(pg_database: str) -> None:
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL,"
            " tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED)"
        )
        conn.execute("CREATE INDEX ON notes USING gin (tsv)")
        bodies = [
            (1, "The user dreams of sailing to Lisbon"),
            (2, "Deploy the worker on Tuesday"),
            (3, "Dreamed again about sailing boats, sailing all night"),
            (4, "Coffee at the café in Zürich"),
        ]
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO notes (id, body) VALUES (%s, %s)", bodies)

        def search(text: str) -> list[int]:
            rows = conn.execute(
                "SELECT id FROM notes, websearch_to_tsquery('english', %s) AS q"
                " WHERE tsv @@ q ORDER BY ts_rank(tsv, q) DESC, id",
                (text,),
            )
            return [id_ for (id_,) in rows]

        assert search("sail dream") == [3, 1]  # stems match; more hits rank higher
        assert search("deploying") == [2]
        assert search("zürich café") == [4]
        assert search("lisbon -sailing") == []


def test_skip_locked_gives_a_second_worker_the_next_row(pg_database: str) -> None:
    with psycopg.connect(pg_database, autocommit=True) as setup:
        setup.execute("CREATE TABLE jobs (id int PRIMARY KEY, claimed_by text)")
        setup.execute("INSERT INTO jobs (id) VALUES (1), (2), (3)")
    claim = (
        "SELECT id FROM jobs WHERE claimed_by IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED"
    )
    # lock_timeout: if SKIP LOCKED ever waited, the test fails in 2 s instead of hanging.
    options = "-c lock_timeout=2s"
    with (
        psycopg.connect(pg_database, options=options) as first,
        psycopg.connect(pg_database, options=options) as second,
    ):
        assert first.execute(claim).fetchone() == (1,)  # row 1 locked until `first` ends
        assert second.execute(claim).fetchone() == (2,)  # skipped it, without waiting
        second.rollback()
        with pytest.raises(psycopg.errors.LockNotAvailable):  # row 1 really is locked
            second.execute("SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT")
        second.rollback()
        first.commit()  # releases the lock (row 1 was not claimed)
        assert second.execute(claim).fetchone() == (1,)


def test_stop_ends_every_process_and_removes_the_files(tmp_path: Path) -> None:
    server = _start(tmp_path)
    client = psycopg.connect(server.url)  # stop must not wait for clients
    client.execute("SELECT 1")
    postmaster = psutil.Process(server.pid)
    family = [postmaster, *postmaster.children(recursive=True)]
    assert len(family) > 1  # the postmaster, its background workers and our backend

    server.stop()

    _, alive = psutil.wait_procs(family, timeout=5)
    assert alive == []
    assert not server.root.exists()
    assert not server.socket_dir.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.url, connect_timeout=2)
    server.stop()  # a second stop is harmless
    client.close()


def test_start_up_is_bounded_and_leaves_nothing_behind(tmp_path: Path) -> None:
    _start(tmp_path).stop()  # skips here if PostgreSQL cannot start at all
    folders = [tmp_path, Path(tempfile.gettempdir()), Path("/tmp")]
    before = _postgres_processes(), _server_folders(folders)
    with pytest.raises(PostgresUnavailable, match=r"start-up timeout of 0\.05s"):
        start_postgres(tmp_path, timeout=0.05)
    assert (_postgres_processes(), _server_folders(folders)) == before


@pytest.mark.skipif(getattr(os, "geteuid", lambda: 1)() != 0, reason="only root needs an account")
def test_as_root_a_missing_account_is_a_clear_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DREAMER_PG_USER", "dreamer-no-such-user")
    with pytest.raises(PostgresUnavailable, match="no account 'dreamer-no-such-user'"):
        start_postgres(tmp_path)


def _start(tmp_path: Path) -> PgServer:
    try:
        return start_postgres(tmp_path)
    except PostgresUnavailable as exc:
        unavailable(exc.reason)


def _postgres_processes() -> set[int]:
    names = {"postgres", "initdb"}
    return {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] in names}


def _server_folders(folders: list[Path]) -> set[Path]:
    return {found for folder in folders for found in folder.glob("dreamer-pg-*")}
