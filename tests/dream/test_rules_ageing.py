"""Ageing: a carried line with a date still ahead keeps its place at the top of Active Context,
whatever label it carries."""

from __future__ import annotations

from datetime import timedelta

from dreams import offline_dream


def test_a_labelled_carried_line_finds_its_date_and_stays_on_top(ws, now):
    ws.note("The billing API deadline moved from March 20 to March 27.", importance=0.9, at=now)
    first = offline_dream(ws, now + timedelta(hours=1))
    assert first.body("active_context").startswith(("- Deadline:", "- Friction:", "- Task:"))
    for i, text in enumerate(
        [
            "Reviewed the ledger migration plan with the team and agreed on batches.",
            "The staging database was upgraded to PostgreSQL 16 without downtime.",
            "Wrote the runbook for the payout queue failover.",
        ]
    ):
        ws.note(text, importance=0.8, at=now + timedelta(days=1, hours=i))
    later = offline_dream(ws, now + timedelta(days=1, hours=5))
    top = later.body("active_context").split("\n")[0]
    assert "March 27" in top, later.body("active_context")
