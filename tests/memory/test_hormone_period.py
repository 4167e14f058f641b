"""A nightly dream weighs what the hormones did since the last dream, not their level at night.

Must show: a cortisol spike at 10:00 and a dream at 23:00: the dream's inputs (``dream run
--dry-run --json``) name cortisol as the dominant hormone of the period, with its cause; the
offline dream keeps the friction in Active Context and an oxytocin moment in The Bond.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from click.testing import CliRunner
from freezegun import freeze_time

from dreamer.cli import main
from dreamer.dream.cycle import run
from dreamer.memory import hormone_summary, hormones
from dreamer.memory.state import parse
from dreamer.memory.workspace import Workspace

MORNING = datetime(2026, 3, 10, 10, 0, tzinfo=UTC)
NIGHT = datetime(2026, 3, 10, 23, 0, tzinfo=UTC)
OUTAGE = "SEV1: the checkout API returns 502 for every EU customer; payments are down."


def _day(ws: Workspace) -> None:
    ws.note("Planned the sprint with the team.", importance=0.5, at=MORNING - timedelta(hours=1))
    ws.note(OUTAGE, importance=0.9, at=MORNING)
    hormones.feel(ws, "cortisol", 0.6, "production outage: checkout down", MORNING)
    ws.note(
        "Kenji thanked Kai for running the incident calmly.",
        importance=0.5,
        at=MORNING + timedelta(hours=5),
    )
    for i in range(4):
        ws.note(
            f"Reviewed pull request {i} for the ledger.",
            importance=0.5,
            at=MORNING + timedelta(hours=6, minutes=i),
        )


def test_the_period_names_the_hormone_that_peaked_and_why(ws):
    _day(ws)
    assert hormones.levels(ws, NIGHT)["cortisol"] < 0.05  # decayed back to rest by night
    period = hormone_summary.period(ws, NIGHT - timedelta(days=1), NIGHT)
    assert period["dominant"] == "cortisol"
    peak = period["peaks"]["cortisol"]
    assert peak["lift"] >= 0.5
    assert any("production outage" in cause["reason"] for cause in peak["causes"])


def test_dry_run_json_names_cortisol_and_its_cause(tmp_path):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        _day(ws)
    with freeze_time(NIGHT):
        result = CliRunner().invoke(
            main, ["run", "--dry-run", "--json", "-w", str(root)], catch_exceptions=False
        )
    assert result.exit_code == 0, result.output
    period = json.loads(result.output)["inputs"]["hormones"]
    assert period["dominant"] == "cortisol"
    assert "production outage" in json.dumps(period["peaks"]["cortisol"]["causes"])
    with Workspace.open(root) as ws:
        outage_id = ws.store.crystals.find_by_hash(
            __import__("dreamer.store", fromlist=["x"]).content_hash(OUTAGE)
        )
    assert outage_id in period["cause_notes"]["cortisol"]


def test_the_offline_dream_keeps_the_friction_and_the_warm_moment(ws):
    _day(ws)
    result = run(ws, now=NIGHT, force=True)
    state = parse(result.state_text or "")
    assert "502" in state.body("active_context")
    assert "thanked" in state.body("bond")
