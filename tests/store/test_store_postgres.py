"""The PostgreSQL store beyond the shared contract: one database for many workspaces, chosen by
one setting, psycopg loaded only when it is, and errors that name the fix."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest

from dreamer import Workspace, run_dream
from dreamer.cli import main
from dreamer.config import load_settings
from dreamer.dream import journal
from dreamer.errors import InvalidSetting, LeaseLost, LockHeld, StoreUnavailable, UsageError
from dreamer.store import NewCrystal, open_store
from dreamer.store.postgres import search
from dreamer.support.times import iso, utc_now

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL


def add(store, text, at):
    return store.crystals.add_crystal(
        NewCrystal(
            text,
            source="scratch",
            semantic_type="experience",
            importance=0.5,
            at=at,
            embedding=None,
        )
    )[0]


def test_workspaces_share_a_database_but_never_rows(pg_database, tmp_path, now):
    one = open_store(tmp_path / "a.db", url=pg_database, key="/srv/agents/a")
    two = open_store(tmp_path / "b.db", url=pg_database, key="/srv/agents/b")
    try:
        # Ids count per workspace, so a transcript turn's neighbours are its own workspace's.
        assert [add(one, f"alpha note {i}", now) for i in range(3)] == [1, 2, 3]
        assert [add(two, "alpha note 0", now), add(two, "beta", now)] == [1, 2]
        assert (one.max_crystal_id(), two.max_crystal_id()) == (3, 2)
        assert [i for i, _ in two.fts_match(["alpha"], [], 10)] == [1]
        assert two.term_frequencies(["alpha"]) == {"alpha": 1}
        one.set_meta("k", "one")
        assert two.get_meta("k") is None
        two.record_dream({"started_at": "2026-01-01T00:00:00Z", "outcome": "skipped"})
        assert one.dream_entries() == [] and len(two.dream_entries()) == 1
    finally:
        one.close()
        two.close()


def test_writers_on_two_connections_get_every_id_once(pg_database, tmp_path, now):
    stores = [open_store(tmp_path / "x.db", url=pg_database, key="shared") for _ in range(2)]
    ids: list[int] = []

    def write(store, label):
        for i in range(40):
            ids.append(add(store, f"{label} {i}", now + timedelta(seconds=i)))

    threads = [
        threading.Thread(target=write, args=(s, n)) for n, s in zip("ab", stores, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert sorted(ids) == list(range(1, 81))
        assert stores[0].crystal_count() == 80
    finally:
        for store in stores:
            store.close()


def test_a_workspace_on_postgres_keeps_no_crystal_file(pg_database, tmp_path, now):
    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}) as ws:
        ws.init()
        crystal_id = ws.note("The deploy key rotates every Tuesday", at=now)
        hits = ws.search("when does the deploy key rotate", now=now)
        assert [hit.id for hit in hits][:1] == [crystal_id]
        assert not ws.db_path.exists()


def test_the_store_url_setting_is_checked_and_its_password_hidden(tmp_path):
    with pytest.raises(InvalidSetting, match="postgresql://"):
        load_settings(None, environ={"DREAM_STORE_URL": "mysql://db/x"})
    (tmp_path / "dreamer.toml").write_text('[memory.store]\nurl = "postgresql://u:pw@db/x"\n')
    settings = load_settings(tmp_path / "dreamer.toml", environ={})
    assert settings.store_url == "postgresql://u:pw@db/x"
    assert "pw" not in repr(settings)


def test_dream_config_masks_the_password(runner, tmp_path):
    (tmp_path / "ws" / "memory").mkdir(parents=True)
    result = runner.invoke(
        main,
        ["config", "-w", str(tmp_path / "ws")],
        env={"DREAM_STORE_URL": "postgresql://agent:s3cret@db.example/dreamer"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "postgresql://agent:***@db.example/dreamer" in result.output
    assert "s3cret" not in result.output


def test_an_unreachable_server_is_one_error_line(runner, tmp_path):
    url = f"postgresql://nobody@/x?host={tmp_path}&port=1&connect_timeout=2"
    with pytest.raises(StoreUnavailable, match="cannot connect"):
        open_store(tmp_path / "c.db", url=url, key="k")
    result = runner.invoke(
        main, ["note", "hello", "-w", str(tmp_path / "ws")], env={"DREAM_STORE_URL": url}
    )
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and errors[0].startswith("Error: cannot connect to the PostgreSQL")


def test_a_postgres_url_without_psycopg_names_the_extra(runner, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed
    result = runner.invoke(
        main,
        ["note", "hello", "-w", str(tmp_path / "ws")],
        env={"DREAM_STORE_URL": "postgresql://u@db/x"},
    )
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "pip install 'dreamer-memory[postgres]'" in errors[0]
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_the_cli_and_the_sqlite_path_never_import_psycopg():
    code = (
        "import sys, dreamer.cli, dreamer.memory.workspace, dreamer.store;"
        "import dreamer.service.consolidation, dreamer.service.schedule;"
        "assert 'psycopg' not in sys.modules, 'psycopg was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the workspace lease and the fenced state ---------------------------------------------------

TTL = timedelta(seconds=60)


def test_a_lease_passes_on_only_when_it_expires_and_its_token_grows(pg_database, tmp_path, now):
    store = open_store(tmp_path / "l.db", url=pg_database, key="leased")
    try:
        first = store.acquire_lease("a", now, TTL)
        assert first == 1
        assert store.acquire_lease("a", now + timedelta(seconds=5), TTL) == 1  # ours: same
        assert store.acquire_lease("b", now + timedelta(seconds=30), TTL) is None
        assert store.renew_lease("a", 1, now + timedelta(seconds=50), TTL)
        assert store.acquire_lease("b", now + timedelta(seconds=100), TTL) is None  # renewed
        second = store.acquire_lease("b", now + timedelta(seconds=111), TTL)
        assert second == 2
        assert not store.renew_lease("a", 1, now + timedelta(seconds=112), TTL)
        assert store.lease_holder()[0::2] == ("b", 2)
        store.release_lease("b", 2)
        assert store.acquire_lease("c", now + timedelta(seconds=113), TTL) == 3
    finally:
        store.close()


def test_only_the_current_token_writes_the_state(pg_database, tmp_path, now):
    store = open_store(tmp_path / "s.db", url=pg_database, key="fenced")
    try:
        assert store.read_state() is None
        old = store.acquire_lease("a", now, TTL)
        new = store.acquire_lease("b", now + TTL, TTL)  # a's lease expired: b took over
        assert store.write_state("# newer state", new, now + TTL)
        assert not store.write_state("# stale state", old, now + TTL + TTL)
        assert store.read_state() == ("# newer state", new, iso(now + TTL))
    finally:
        store.close()


def _pg_workspace(tmp_path, url, now, notes=6):
    ws = Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": url})
    ws.init()
    for number in range(notes):
        ws.note(f"Project Juniper milestone {number} shipped to staging", at=now)
    return ws


def test_a_dream_on_postgres_commits_the_state_row_and_the_file(pg_database, tmp_path, now):
    with _pg_workspace(tmp_path, pg_database, now) as ws:
        result = run_dream(ws, now=now + timedelta(hours=1))
        assert result.outcome == "committed"
        text, token, _ = ws.store.read_state()
        assert ws.memory_md.read_text(encoding="utf-8") == text
        assert ws.store.lease_holder()[0] is None  # released after the dream
        # A machine without the file gets it back from the state row.
        ws.memory_md.unlink()
        path, source = journal.export(ws)
        assert path.read_text(encoding="utf-8") == text and source.startswith("state row")


def test_a_dream_whose_lease_was_taken_over_cannot_overwrite_the_newer_state(
    pg_database, tmp_path, now
):
    with _pg_workspace(tmp_path, pg_database, now) as ws:
        before = ws.memory_md.read_text(encoding="utf-8") if ws.memory_md.exists() else None
        other = open_store(tmp_path / "o.db", url=pg_database, key=str(ws.root.resolve()))

        def stall_then_lose_the_lease(step: str) -> None:
            if step == "write":  # this worker stalled past its lease; another took over
                token = other.acquire_lease("other", utc_now() + timedelta(hours=1), TTL)
                assert other.write_state("# the other worker's newer state", token, now)

        try:
            with pytest.raises(LeaseLost, match="another worker"):
                run_dream(ws, now=now + timedelta(hours=1), step=stall_then_lose_the_lease)
            assert other.read_state()[0] == "# the other worker's newer state"
        finally:
            other.close()
        after = ws.memory_md.read_text(encoding="utf-8") if ws.memory_md.exists() else None
        assert after == before  # the stale dream wrote nothing
        assert ws.store.journal.dream_entries(1)[0]["outcome"] == "failed"
        assert "Juniper milestone 0" in ws.scratch.text()  # back among the pending notes


def test_dream_export_writes_the_newest_committed_state(runner, tmp_path, now):
    with Workspace.open(tmp_path / "ws") as ws:
        ws.init()
        for number in range(6):
            ws.note(f"Project Juniper milestone {number} shipped", at=now)
        run_dream(ws, now=now + timedelta(hours=1))
        committed = ws.memory_md.read_text(encoding="utf-8")
    result = runner.invoke(
        main,
        ["export", "--to", str(tmp_path / "copy.md"), "-w", str(tmp_path / "ws")],
        catch_exceptions=False,
    )
    assert result.exit_code == 0 and "journal (dream" in result.output
    assert (tmp_path / "copy.md").read_text(encoding="utf-8") == committed
    empty = runner.invoke(main, ["export", "-w", str(tmp_path / "fresh")])
    assert empty.exit_code == 1 and "no dreamer workspace" in empty.output


def test_a_forget_reaches_the_state_row_so_export_cannot_bring_it_back(pg_database, tmp_path, now):
    with _pg_workspace(tmp_path, pg_database, now) as ws:
        secret = ws.note("Ada's home address is 12 Rue des Lilas", importance=0.9, at=now)
        run_dream(ws, now=now + timedelta(hours=1))
        assert "Lilas" in ws.store.read_state()[0]
        ws.forget([secret], now=now + timedelta(hours=2))
        assert "Lilas" not in ws.store.read_state()[0]
        assert ws.store.read_state()[0] == ws.memory_md.read_text(encoding="utf-8")
        path, _ = journal.export(ws, tmp_path / "exported.md")
        assert "Lilas" not in path.read_text(encoding="utf-8")


def test_a_lease_left_by_a_dead_process_of_this_machine_is_free(pg_database, tmp_path, now):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with _pg_workspace(tmp_path, pg_database, now, notes=0) as ws:
        ws.store.acquire_lease(f"{socket.gethostname()}:{gone.pid}:x", utc_now(), TTL)
        with ws.lock():  # taken at once, not in a minute
            assert ws.store.lease_holder()[2] == 2
        ws.store.acquire_lease("elsewhere:1:x", utc_now(), TTL)
        with pytest.raises(LockHeld, match="lease held by elsewhere:1:x"), ws.lock():
            pass


def test_a_lost_connection_and_a_value_postgres_cannot_hold_are_one_line_each(
    pg_database, tmp_path, now
):
    import psycopg

    store = open_store(tmp_path / "e.db", url=pg_database, key="errors")
    try:
        with pytest.raises(UsageError, match="NUL"):
            add(store, "a note with a \x00 inside", now)
        assert store.crystals.crystal_count() == 0  # the transaction was rolled back
        with psycopg.connect(pg_database, autocommit=True) as admin:
            pid = store.conn.info.backend_pid
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])
        assert store.crystals.crystal_count() == 0  # a lost connection is replaced...
        database = pg_database.split("/")[-1].split("?")[0]
        with psycopg.connect(pg_database.replace(database, "postgres"), autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
            pid = store.conn.info.backend_pid
            admin.execute("SELECT pg_terminate_backend(%s)", [pid])
            while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
                time.sleep(0.01)  # terminating is asynchronous: wait until it is gone
        # ... and when it cannot be, the error is one line that names the setting to check.
        with pytest.raises(StoreUnavailable, match="PostgreSQL store .*DREAM_STORE_URL") as e:
            store.crystals.crystal_count()
        assert "\n" not in str(e.value)
    finally:
        store.close()


def test_term_counts_follow_forgets_and_rewrites(pg_database, tmp_path, now):
    store = open_store(tmp_path / "t.db", url=pg_database, key="terms")
    try:
        first = add(store, "alpha beta", now)
        second = add(store, "alpha gamma", now)
        add(store, "alpha", now)
        assert store.search.term_frequencies(["alpha", "beta", "gamma"]) == {
            "alpha": 3,
            "beta": 1,
            "gamma": 1,
        }
        store.forgetting.forget_crystal(first, reason="test", at=now)
        store.forgetting.replace_text(
            second, "delta", embedding=None, embedder=None, action="redacted", detail={}, at=now
        )
        assert store.search.term_frequencies(["alpha", "beta", "gamma", "delta"]) == {
            "alpha": 1,
            "beta": 0,
            "gamma": 0,
            "delta": 1,
        }
        assert [i for i, _ in store.search.fts_match(["delta"], [], 5)] == [second]
    finally:
        store.close()


def _derived(db, key):
    """What a workspace's full text consists of: every row derived from its crystals' text."""
    (ws,) = db.execute("SELECT id FROM workspaces WHERE key = %s", [key]).fetchone()
    return [
        db.execute(sql, [ws]).fetchall()
        for sql in (
            "SELECT crystal_seq, token_total FROM workspaces WHERE id = %s",
            "SELECT id, text, tsv::text, doc_len, source, lifecycle, created_at, content_hash"
            " FROM crystals WHERE workspace = %s ORDER BY id",
            "SELECT lexeme, crystal_id, tf, doc_len FROM postings WHERE workspace = %s"
            " ORDER BY lexeme, crystal_id",
            "SELECT lexeme, docs FROM terms WHERE workspace = %s ORDER BY lexeme",
            "SELECT crystal_id, at, action, detail FROM audit WHERE workspace = %s ORDER BY id",
        )
    ]


def test_a_bulk_load_indexes_and_counts_as_single_inserts_do(pg_database, tmp_path, now):
    import psycopg

    texts = [
        "Ada's deploy key rotates on Tuesday",
        "The rotating deploy keys: Tuesday, then Friday",
        "Crème brûlée for Ada's birthday",
        "Ada's deploy key rotates on Tuesday",  # a repeat: one crystal
        "well-known state-of-the-art words, split at hyphens",
    ]
    rows = [
        {"text": text, "source": "scratch", "semantic_type": "experience", "importance": 0.5}
        | {"at": now + timedelta(minutes=n), "embedding": None}
        for n, text in enumerate(texts)
    ]
    single = open_store(tmp_path / "s.db", url=pg_database, key="single")
    bulk = open_store(tmp_path / "b.db", url=pg_database, key="bulk")
    try:
        added = [single.crystals.add_crystal(NewCrystal(**row)) for row in rows]
        assert bulk.crystals.add_crystals([NewCrystal(**row) for row in rows]) == added
        with psycopg.connect(pg_database) as db:
            assert _derived(db, "bulk") == _derived(db, "single")
            # The load was the table's first rows: statistics follow it, not autovacuum.
            (rows_seen,) = db.execute(
                "SELECT reltuples FROM pg_class WHERE oid = 'crystals'::regclass"
            ).fetchone()
        assert rows_seen == 8
        words = ["rotating", "tuesday", "ada", "creme", "known"]
        assert bulk.fts_match(words, [], 10) == single.fts_match(words, [], 10)
        assert bulk.term_frequencies(words) == single.term_frequencies(words)
    finally:
        single.close()
        bulk.close()


@pytest.mark.parametrize("probe_cost", [0, 10**9], ids=["look-ups", "joins"])
def test_the_inverted_index_ranks_as_the_tsvector_scan_did(
    pg_database, tmp_path, now, monkeypatch, probe_cost
):
    """BM25 from the postings (one statement) gives the scores of the scan over every
    match's tsvector, which still ranks words the parser splits: it is the reference here.
    Both ways of reading the other words' rows are checked (per match, or whole)."""
    import random

    monkeypatch.setattr(search, "PROBE_COST", probe_cost)

    import synthetic

    from dreamer.retrieval.search import query_terms

    store = open_store(tmp_path / "r.db", url=pg_database, key="ranks")
    rng = random.Random(4)
    rows = [
        {"text": synthetic.synthetic_text(rng), "source": rng.choice(["sessions", "scratch"])}
        | {"semantic_type": "experience", "importance": 0.5, "at": now, "embedding": None}
        for _ in range(600)
    ]
    try:
        store.crystals.add_crystals([NewCrystal(**row) for row in rows])
        # Counts and postings kept through a forget and a rewrite, one by one.
        store.forgetting.forget_crystal(3, reason="test", at=now)
        store.forgetting.replace_text(
            5,
            "the dashboard fails",
            embedding=None,
            embedder=None,
            action="redacted",
            detail={},
            at=now,
        )
        add(store, "Ada asked why the dashboard fails on Friday", now)
        checked = 0
        for _ in range(40):
            words = query_terms(synthetic.synthetic_query(rng))
            stems = store._stemmed(words)
            single = [stems[word][0] for word in words if len(stems[word]) == 1]
            for wanted, extra in ((single, []), (single[:1], single[1:])):
                for sessions in (None, True, False):
                    fast = store._bm25_postings(wanted, extra, sessions, 10_000)
                    kind = "" if sessions is None else f" AND {search._kind(sessions)}"
                    slow = store._bm25_matches(
                        [(w,) for w in wanted], [(w,) for w in extra], kind, 10_000
                    )
                    assert [i for i, _ in fast] == [i for i, _ in slow]
                    assert [s for _, s in fast] == pytest.approx([s for _, s in slow], rel=1e-12)
                    checked += len(fast)
        assert checked > 1000
    finally:
        store.close()


def test_postings_read_whole_rank_as_the_statement_does_to_the_last_bit(
    pg_database, tmp_path, now, monkeypatch
):
    """A search of one-stem words reads their postings whole and scores them in Python
    (``_bm25_read``): the same ids in the same order with the same floats, bit for bit, as
    the statement gives, whichever way it reads the other words' rows."""
    import random

    import synthetic

    from dreamer.retrieval.search import query_terms

    store = open_store(tmp_path / "r.db", url=pg_database, key="read")
    rng = random.Random(9)
    rows = [
        {"text": synthetic.synthetic_text(rng), "source": rng.choice(["sessions", "scratch"])}
        | {"semantic_type": "experience", "importance": 0.5, "at": now, "embedding": None}
        for _ in range(600)
    ]
    try:
        store.crystals.add_crystals([NewCrystal(**row) for row in rows])
        store.forgetting.forget_crystal(7, reason="test", at=now)
        checked = 0
        for _ in range(40):
            words = query_terms(synthetic.synthetic_query(rng))
            stems = store._stemmed(words)
            single = [stems[word][0] for word in words if len(stems[word]) == 1]
            store._document_counts([(lexeme,) for lexeme in single])
            # A word asked twice counts twice, as in the statement.
            for wanted, extra in ((single, []), (single[:1], single[1:]), (single * 2, single)):
                for limit in (80, 10_000):
                    monkeypatch.setattr(search, "PROBE_COST", 10**9)  # never probe: read
                    read = store._bm25_read(wanted, extra, limit)
                    assert read is not None
                    for cost in (0, 10**9):  # the statement probes, or joins
                        monkeypatch.setattr(search, "PROBE_COST", cost)
                        assert read == store._bm25_postings(wanted, extra, None, limit)
                    checked += len(read)
        assert checked > 1000
    finally:
        store.close()
