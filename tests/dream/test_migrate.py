"""Seed-crystal migration of a hand-written MEMORY.md, and the conservative first dream."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from dreamer.cli import main
from dreamer.dream.seed import (
    CHUNK_TOKENS,
    FIRST_DREAM_KEY,
    FIRST_DREAM_MARKER,
    OVERLAP_TOKENS,
    ensure_migrated,
    is_hand_written,
    migrate,
)
from dreamer.memory.state import TITLE
from dreamer.retrieval.reindex import embed_waiting
from dreamer.support import tokens

_INTRO = """\
# Ada's memory

Last edited by hand on 2026-02-28. Keep this file short-ish; the agent reads it every session.

## Who I am

- Ada Lindqvist, backend engineer at Nordlys Energy (Oslo office, remote Fridays).
- Time zone Europe/Oslo. Prefers answers in English, but Norwegian is fine for small talk.
- Calls the agent "Bosun". Likes dry humour; hates emoji in commit messages.
- Vegetarian. Coffee: flat white, no sugar. Allergic to hazelnuts (matters for office orders).
- Partner: Jonas (teacher). Daughter: Maja, 7, football on Tuesdays and Thursdays at 17:00.

## How I like to work

- Always run the test suite before proposing a commit; never push to main directly.
- Small pull requests (< 400 lines). Write the *why* in the description, not the what.
- Prefers `uv` over pip, `ruff` over black+flake8, `pytest -x` when iterating.
- Wants citations (file:line) when the agent explains code it read.
- Reviews happen 09:00–10:30; don't schedule anything then.
- Ask before deleting anything outside the repo. Ask before running migrations on staging.

## Projects

### Ferrous (main project)
A Rust rewrite of the meter-reading ingestion service. Raft-based replication (openraft),
RocksDB storage, gRPC ingress. Target: 200k readings/s per node, p99 < 20 ms.
- Milestone M3 (snapshot streaming) due 2026-03-20. Blocking issue: snapshot transfer times
  out on CI when the snapshot exceeds 40 MB — deadline raised from 5 s to 30 s as a stopgap.
- Open question: whether to shard by meter region or by customer id. Ada leans region.
- Staging cluster: 3 nodes in `eu-north-1`, deployed with Nomad; dashboards in Grafana "Ferrous".

### Gridwatch (side project)
A small Python CLI that pulls Nord Pool spot prices and tells the heat pump when to run.
Runs on a Raspberry Pi 4 in the garage. Uses `httpx` + `apscheduler`. Not urgent.

### Hiring
Interviewing for a senior SRE. Ada is on the panel for the systems-design round.
Candidate notes live in Greenhouse, never in this file.

## People

- Priya (tech lead, Ferrous): decisive, wants written RFCs before big changes.
- Tomasz (SRE): owns the Nomad setup; ask him before touching job specs.
- Leila (product): cares about the ingestion SLA; weekly sync Wednesdays 13:00.
- Henrik (CTO): likes one-page summaries with a clear recommendation at the top.

## Decisions log
"""

_DECISIONS = [
    ("2025-09-02", "Chose openraft over a home-grown Raft", "maintenance cost, test coverage"),
    ("2025-09-18", "RocksDB column family per meter region", "compaction isolation"),
    ("2025-10-07", "gRPC ingress with tonic; REST kept for the legacy portal", "clients"),
    ("2025-10-30", "Snapshot format: chunked protobuf, 4 MiB chunks", "resume after failure"),
    ("2025-11-12", "Metrics via OpenTelemetry, exported to Prometheus", "one pipeline"),
    ("2025-12-01", "No async-trait in hot paths", "allocation per call showed up in flamegraphs"),
    ("2026-01-09", "Load tests run nightly against staging with k6", "catch regressions early"),
    ("2026-01-21", "Feature flags through Unleash, not env vars", "rollbacks without deploys"),
    ("2026-02-04", "Raised snapshot deadline to 30 s on CI", "40 MB snapshots on slow runners"),
    ("2026-02-17", "Region sharding prototype behind a flag", "measure before deciding"),
]


def hand_written_memory() -> str:
    """A realistic hand-written MEMORY.md of about 10 KB (a person's notes, some non-ASCII)."""
    lines = [_INTRO]
    for day, decision, why in _DECISIONS:
        lines.append(f"- {day}: {decision} (why: {why}). Owner: Ada; reviewed by Priya.")
    lines.append("\n## Journal\n")
    for week in range(1, 40):
        lines.append(
            f"- Week {week}: paired with Tomasz on Nomad job spec #{100 + week}; "
            f"Maja's match went {'well' if week % 3 else 'badly'} — café afterwards with Jonas. "
            f"Ferrous throughput at {150 + week * 2}k readings/s in the nightly k6 run."
        )
    lines.append("\n## Reminders\n\n- Renew the passport before the Lisbon offsite (May). ✈️\n")
    return "\n".join(lines)


def seed_rows(ws):
    """The seed crystals, with the columns the migration promises."""
    return ws.store.db.execute(
        "SELECT text, importance, lifecycle, source, embedding IS NOT NULL FROM crystals"
        " WHERE source = 'seed' ORDER BY id"
    ).fetchall()


def test_the_fixture_is_a_realistic_ten_kilobyte_file():
    size = len(hand_written_memory().encode())
    assert 9_000 <= size <= 12_000


@pytest.mark.slow
def test_migrate_backs_up_byte_for_byte_and_stores_seed_crystals(ws, now):
    original = hand_written_memory().encode()
    ws.memory_md.write_bytes(original)

    report = migrate(ws, now)

    assert report.migrated
    assert ws.seed_backup.read_bytes() == original
    assert ws.memory_md.read_bytes() == original  # the migration never touches MEMORY.md
    # A deferred embedder (the default sentence model) embeds them at the next search or tick.
    embed_waiting(ws.store, ws.embedder)
    rows = seed_rows(ws)
    assert len(rows) == report.chunks == report.created
    for _text, importance, lifecycle, source, embedded in rows:
        assert (importance, lifecycle, source, embedded) == (0.75, "consolidated", "seed", 1)
    assert ws.store.records.get_meta(FIRST_DREAM_KEY) == "1"
    assert "MEMORY.md.seed-backup" in report.message


def test_seed_chunks_are_400_tokens_with_80_overlapping_checked_with_the_tokenizer(ws, now):
    text = hand_written_memory()
    ws.memory_md.write_text(text)

    migrate(ws, now)

    ids = tokens.encoding().encode(text)
    step = CHUNK_TOKENS - OVERLAP_TOKENS
    assert len(ids) > 2 * CHUNK_TOKENS  # enough text for several windows
    assert len(seed_rows(ws)) == 1 + math.ceil((len(ids) - CHUNK_TOKENS) / step)
    chunks = [row[0] for row in seed_rows(ws)]
    for k, chunk in enumerate(chunks):
        assert chunk == tokens.encoding().decode(ids[k * step : k * step + CHUNK_TOKENS]).strip(
            "\ufffd"
        )
    for k in range(len(chunks) - 1):
        shared = tokens.encoding().decode(ids[(k + 1) * step : k * step + CHUNK_TOKENS])
        assert tokens.count(shared) == OVERLAP_TOKENS
        assert chunks[k].endswith(shared) and chunks[k + 1].startswith(shared)
    assert chunks[0].startswith("# Ada's memory") and chunks[-1].endswith("(May). ✈️\n")


def test_second_migration_is_a_no_op_that_says_so(ws, now, runner):
    ws.memory_md.write_text(hand_written_memory())
    first = runner.invoke(main, ["migrate", "-w", str(ws.root)], catch_exceptions=False)
    count = len(seed_rows(ws))

    second = runner.invoke(main, ["migrate", "-w", str(ws.root)], catch_exceptions=False)

    assert first.exit_code == 0 and first.output.startswith("Migrated MEMORY.md")
    assert second.exit_code == 0
    assert second.output.startswith("Already migrated at") and "nothing to do" in second.output
    assert len(seed_rows(ws)) == count
    assert ensure_migrated(ws, now + timedelta(hours=1)) is None


def test_ensure_migrated_runs_once_and_only_for_a_hand_written_file(ws, now):
    assert ensure_migrated(ws, now) is None  # no MEMORY.md at all
    ws.memory_md.write_text(f"{TITLE}\n\n## The Bond\nCalls the agent Bosun.\n")
    assert not is_hand_written(ws)
    assert ensure_migrated(ws, now) is None
    assert ws.store.records.get_meta(FIRST_DREAM_KEY) is None

    ws.memory_md.write_text(hand_written_memory())
    report = ensure_migrated(ws, now)
    assert report is not None and report.migrated
    assert ensure_migrated(ws, now) is None


def test_a_file_written_after_a_committed_dream_is_not_a_seed(ws, now):
    ws.memory_md.write_text("Just some notes I typed over the state.\n")
    ws.store.db.execute(
        "INSERT INTO dreams (started_at, outcome) VALUES ('2026-03-01T00:00:00Z', 'committed')"
    )
    assert not is_hand_written(ws)
    assert ensure_migrated(ws, now) is None


def test_a_different_existing_backup_is_never_overwritten(ws, now):
    ws.seed_backup.write_bytes(b"an older backup the user kept\n")
    ws.memory_md.write_text(hand_written_memory())

    report = migrate(ws, now)

    assert ws.seed_backup.read_bytes() == b"an older backup the user kept\n"
    second = ws.root / "MEMORY.md.seed-backup.2"
    assert report.backup == str(second)
    assert second.read_bytes() == ws.memory_md.read_bytes()


def test_migrate_json_output(ws, runner):
    ws.memory_md.write_text(hand_written_memory())
    result = runner.invoke(main, ["migrate", "--json", "-w", str(ws.root)], catch_exceptions=False)
    assert result.exit_code == 0
    assert '"migrated": true' in result.output and '"chunks":' in result.output


@pytest.mark.slow
def test_first_dream_keeps_the_original_on_top_and_the_second_replaces_it(ws, now):
    from dreamer.dream.cycle import run

    original = hand_written_memory()
    ws.memory_md.write_text(original)

    run(ws, now=now, force=True)  # migrates first, then the conservative first dream

    first = ws.memory_md.read_text()
    assert ws.seed_backup.read_text() == original
    top, separator, below = first.partition(f"\n\n---\n\n{FIRST_DREAM_MARKER}\n\n")
    assert separator, "the marker comment must follow the original"
    assert top == original.strip("\n")
    assert below.startswith(TITLE)
    assert ws.store.records.get_meta(FIRST_DREAM_KEY) != "1"

    ws.note(
        "Ferrous M3 slipped to 2026-03-27 after the snapshot bug",
        importance=0.8,
        at=now + timedelta(hours=1),
    )
    run(ws, now=now + timedelta(hours=3), force=True)

    second = ws.memory_md.read_text()
    assert second.startswith(TITLE)
    assert FIRST_DREAM_MARKER not in second
    assert original.strip("\n") not in second  # the state took over the whole file
    hits = ws.search("hazelnuts allergy office orders", now=now + timedelta(hours=3))
    assert any(hit.source == "seed" for hit in hits)  # the original stays searchable
