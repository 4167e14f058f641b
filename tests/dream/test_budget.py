"""The spending cap: a day's and a month's spend, read from the journal, stops the next dream."""

from __future__ import annotations

import io
import json
import shutil
from datetime import UTC, datetime, timedelta

import pytest
from fake_anthropic import FakeAnthropic
from freezegun import freeze_time
from test_dream_claude import COLLAPSED, GOOD

from dreamer import Workspace
from dreamer.agents import hooks
from dreamer.cli import main
from dreamer.config import load_settings
from dreamer.dream import budget
from dreamer.dream.cycle import run
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.errors import DreamError, DreamRejected, InvalidSetting

pytest_plugins = ["pg_fixture"]  # pg_database: a fresh database on the suite's PostgreSQL

MORNING = datetime(2026, 3, 12, 9, 0, tzinfo=UTC)
DOLLARS_003 = {"input_tokens": 5000, "output_tokens": 1000}  # $0.03 at Sonnet's price
HALF = {"input_tokens": 2500, "output_tokens": 500}  # $0.015


def _open(tmp_path, settings: str) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    (root / "dreamer.toml").write_text(
        f"[memory.dream]\nminChunksForDream = 1\nmaxRevisions = 1\n{settings}", encoding="utf-8"
    )
    return Workspace.open(root)


def _notes(ws, at, tag):
    for i in range(3):
        ws.note(f"Acme report {tag}: finished part {i} of the quarterly review", at=at)


def _session_start(ws, at) -> str:
    payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(ws.root)})
    out = io.StringIO()
    hooks.run("session-start", io.StringIO(payload), out, at, {"DREAM_WORKSPACE": str(ws.root)})
    return json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]


def _dream(ws, fake, at):
    return run(ws, now=at, synthesizer=ClaudeSynthesizer(ws.settings, client=fake.client()))


def test_a_daily_cap_skips_the_second_dream_and_the_next_day_dreams(tmp_path, runner):
    fake = FakeAnthropic()
    with _open(tmp_path, "maxUsdPerDay = 0.05\n") as ws:
        _notes(ws, MORNING, "one")
        fake.tool_use(TOOL_NAME, GOOD, usage=DOLLARS_003)
        first = _dream(ws, fake, MORNING)
        assert first.committed and first.usage.cost_usd == pytest.approx(0.03)
        memory = ws.memory_md.read_bytes()
        _notes(ws, MORNING + timedelta(hours=3), "two")
        fake.tool_use(TOOL_NAME, GOOD, usage=DOLLARS_003)
        second = _dream(ws, fake, MORNING + timedelta(hours=4))
        assert second.outcome == "skipped" and second.reason.startswith("spending cap: $0.0300")
        assert "dreams resume after 2026-03-13T00:00:00Z" in second.reason
        assert len(fake.requests) == 1  # nothing was sent, nothing paid
        assert ws.memory_md.read_bytes() == memory
        assert ws.store.crystals.count_new() == 3  # the notes wait for the next dream
        log = runner.invoke(main, ["log", "-w", str(ws.root)], catch_exceptions=False).output
        assert "skipped" in log and "spending cap: $0.0300 spent this day of the $0.05 cap" in log
        block = _session_start(ws, MORNING + timedelta(hours=5))
        assert "dreamer health: The last dream was skipped: spending cap: $0.0300" in block
        third = _dream(ws, fake, datetime(2026, 3, 13, 0, 5, tzinfo=UTC))
        assert third.committed and len(fake.requests) == 2


def test_the_cap_is_read_from_the_journal_by_every_process(tmp_path):
    fake = FakeAnthropic()
    with _open(tmp_path, "maxUsdPerDay = 0.05\n") as ws:
        _notes(ws, MORNING, "one")
        fake.tool_use(TOOL_NAME, GOOD, usage=DOLLARS_003)
        assert _dream(ws, fake, MORNING).committed
        with Workspace.open(ws.root) as other:  # another process: its own connection
            why = budget.blocked(other, MORNING + timedelta(hours=1), lambda: "claude")
        assert why is not None and why.startswith("spending cap")
        # The deterministic offline synthesizer spends nothing: never capped.
        assert budget.blocked(ws, MORNING, lambda: "offline") is None


def test_every_revision_and_a_rejected_dream_count(tmp_path):
    fake = FakeAnthropic()
    with _open(tmp_path, "maxUsdPerDay = 0.05\n") as ws:
        _notes(ws, MORNING, "one")
        fake.tool_use(TOOL_NAME, COLLAPSED, usage=HALF)
        fake.tool_use(TOOL_NAME, COLLAPSED, usage=HALF)
        with pytest.raises(DreamRejected):
            _dream(ws, fake, MORNING)
        spend = budget.spent(ws, MORNING + timedelta(minutes=1), "day")
        assert spend.usd == pytest.approx(0.03) and spend.tokens == 6000
        fake.tool_use(TOOL_NAME, GOOD, usage=DOLLARS_003)
        skipped = _dream(ws, fake, MORNING + timedelta(hours=1))
        assert skipped.outcome == "skipped" and "spending cap" in skipped.reason


def test_a_token_cap_for_local_models_and_a_monthly_cap(tmp_path):
    fake = FakeAnthropic()
    with _open(tmp_path, "maxTokensPerDay = 10000\nmaxUsdPerMonth = 0.07\n") as ws:
        _notes(ws, MORNING, "one")
        fake.tool_use(TOOL_NAME, GOOD, usage=DOLLARS_003)
        assert _dream(ws, fake, MORNING).committed
        _notes(ws, MORNING, "two")
        skipped = _dream(ws, fake, MORNING + timedelta(hours=2))
        assert "6000 tokens used this day of the 10000 cap" in skipped.reason
        fake.tool_use(TOOL_NAME, GOOD, usage=DOLLARS_003)
        assert _dream(ws, fake, MORNING + timedelta(days=1)).committed  # $0.06 this month
        _notes(ws, MORNING, "three")
        month = _dream(ws, fake, MORNING + timedelta(days=2))
        assert "this month of the $0.07 cap" in month.reason
        assert "2026-04-01T00:00:00Z" in month.reason


def test_status_shows_the_spend_against_the_cap(tmp_path, runner):
    fake = FakeAnthropic()
    with _open(tmp_path, "maxUsdPerDay = 0.05\n") as ws:
        _notes(ws, MORNING, "one")
        fake.tool_use(TOOL_NAME, GOOD, usage=DOLLARS_003)
        assert _dream(ws, fake, MORNING).committed
        root = ws.root
    with freeze_time(MORNING + timedelta(hours=1)):
        out = runner.invoke(main, ["status", "-w", str(root)], catch_exceptions=False).output
    assert "Spending this day: $0.0300, 6000 tokens; cap $0.05" in out


def test_a_bad_cap_is_one_clear_error():
    with pytest.raises(InvalidSetting, match="DREAM_MAX_USD_PER_DAY must be an amount in USD"):
        load_settings(None, environ={"DREAM_MAX_USD_PER_DAY": "five"})


def test_a_backend_that_cannot_start_still_fails_on_the_journal_under_a_cap(tmp_path):
    with _open(tmp_path, 'maxUsdPerDay = 0.05\nsynthesizer = "claude"\n') as ws:  # no key
        _notes(ws, MORNING, "one")
        with pytest.raises(DreamError):
            run(ws, now=MORNING)
        newest = ws.store.journal.dream_entries(1)[0]
        assert newest["outcome"] == "failed"  # seen by dream log and the health line
        assert ws.store.crystals.count_new() == 3


@pytest.mark.postgres
def test_the_cap_holds_for_two_machines_sharing_a_postgresql_store(tmp_path, request):
    """A fleet worker on another machine (the workspace's folder is not there) sees what the
    first machine's dream spent: the spend is in the shared journal, not in local files."""
    pytest.importorskip("pgserver")
    url = request.getfixturevalue("pg_database")
    env = {
        "DREAM_STORE_URL": url,
        "DREAM_MAX_USD_PER_DAY": "0.05",
        "DREAM_MIN_CHUNKS_FOR_DREAM": "1",
    }
    root = tmp_path / "srv" / "ada"
    fake = FakeAnthropic()
    with Workspace.open(root, environ=env) as first:
        _notes(first, MORNING, "one")
        fake.tool_use(TOOL_NAME, GOOD, usage=DOLLARS_003)
        assert _dream(first, fake, MORNING).committed
    shutil.rmtree(root)  # the other machine has no folder at that path
    with Workspace.open(root, environ=env) as second:
        _notes(second, MORNING + timedelta(hours=1), "two")
        skipped = _dream(second, fake, MORNING + timedelta(hours=2))
    assert skipped.outcome == "skipped" and skipped.reason.startswith("spending cap: $0.0300")
    assert len(fake.requests) == 1
