"""A long dream keeps its leases: nobody takes its workspace or its job while it runs.

Both leases are renewed by a heartbeat every third of their length. The dreams here outlast
their lease twice over (the lease is shortened to a second, so the test takes seconds, not
minutes); halfway, a second worker tries to take over, as it would once a lease lapses.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

import pytest

from dreamer import Workspace
from dreamer.dream import cycle as dream
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import LeaseLost
from dreamer.memory import workspace as workspaces
from dreamer.service import worker as workers
from dreamer.store import open_jobs, open_store
from dreamer.support.times import utc_now

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

LEASE = timedelta(seconds=0.9)
NOTES = [f"Project Juniper milestone {n} shipped to staging on day {n}" for n in range(6)]


class Long:
    """The offline synthesizer, made slow: it runs past twice the lease, then lets ``check``
    look at the leases before it answers."""

    def __init__(self, settings, check):
        self.inner, self.check = OfflineSynthesizer(), check
        self.name, self.model = self.inner.name, self.inner.model

    def synthesize(self, inputs, *, critique=None, previous=None):
        started = utc_now()
        while utc_now() < started + 2 * LEASE:
            time.sleep(0.05)  # the dream's own duration: the leases expire in real time
        self.check()
        return self.inner.synthesize(inputs, critique=critique, previous=previous)


def test_a_long_dream_keeps_its_workspace_lease(pg_database, tmp_path, now, monkeypatch):
    monkeypatch.setattr(workspaces, "LEASE_TTL", LEASE)
    taken: list[int | None] = []

    def intrude() -> None:
        other = open_store(tmp_path / "other.db", url=pg_database, key=str(tmp_path / "ws"))
        try:
            taken.append(other.acquire_lease("intruder", utc_now(), LEASE))
        finally:
            other.close()

    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}) as ws:
        ws.init()
        for text in NOTES:
            ws.note(text, at=now)
        result = dream.run(ws, now=now + timedelta(hours=1), synthesizer=Long(ws.settings, intrude))
        assert result.committed
        assert ws.store.lease_holder()[0] is None  # given up at the end
    assert taken == [None]


def test_a_long_dream_keeps_its_job(pg_database, tmp_path, now):
    root = tmp_path / "agent"
    with Workspace.open(root) as ws:
        ws.init()
        for text in NOTES:
            ws.note(text, at=now)
        settings = ws.settings
    with open_jobs(pg_database) as queue, open_jobs(pg_database) as rival:
        workers.add_workspaces(queue, [root], utc_now() - timedelta(hours=1))
        claims = queue.claim("long", utc_now(), LEASE, limit=5)
        (claim,) = [c for c in claims if c.kind == "dream"]
        stolen: list[str] = []

        def intrude() -> None:
            stolen.extend(c.kind for c in rival.claim("rival", utc_now(), LEASE, limit=5))

        outcome = workers.run_claim(queue, claim, lease=LEASE, synthesizer=Long(settings, intrude))
    assert "dream" not in stolen
    assert outcome.outcome == "committed", outcome.detail
    assert outcome.counted


def test_a_lease_never_taken_has_no_holder_and_token_zero(pg_database, tmp_path, now):
    store = open_store(tmp_path / "never.db", url=pg_database, key="never-leased")
    try:
        assert store.lease_holder() == (None, None, 0)
        assert store.acquire_lease("first", now, LEASE) == 1  # the first token of all is 1
    finally:
        store.close()


def test_a_lost_lease_is_named_job_or_workspace(pg_database, tmp_path, now, caplog):
    root = tmp_path / "agent"
    with Workspace.open(root) as ws:
        ws.init()
        for text in NOTES:
            ws.note(text, at=now)
    with open_jobs(pg_database) as queue, open_jobs(pg_database) as rival:
        workers.add_workspaces(queue, [root], utc_now() - timedelta(hours=1))
        # Claimed an hour ago with a 5-minute lease: long expired, and the rival takes it.
        claims = queue.claim("late", utc_now() - timedelta(hours=1), timedelta(minutes=5))
        (claim,) = [c for c in claims if c.kind == "consolidate"]
        assert "consolidate" in [c.kind for c in rival.claim("rival", utc_now(), LEASE, limit=5)]
        with caplog.at_level(logging.WARNING, logger="dreamer.worker"):
            outcome = workers.run_claim(queue, claim, lease=LEASE)
    assert not outcome.counted
    assert "consolidate: job lease lost; this run is not counted" in caplog.text
    with Workspace.open(tmp_path / "ws", environ={"DREAM_STORE_URL": pg_database}) as ws:
        ws.init()  # a write without the lease in hand, as after another worker took it
        with pytest.raises(LeaseLost, match=r"^the workspace lease on .* passed to another"):
            ws.write_memory("# Memory\n", now)
