"""Write month.toml: a month of a coding agent's notes about Dana's work, with routine noise.

The storyline notes are hand-written with their times; the routine notes (a third of the
month) are hand-written too but scattered over the working days by a seeded random generator,
so the output is the same on every run. Edit this script, then run it from the repository:

    python benchmarks/scenarios/make_month.py
"""

from __future__ import annotations

import json
import random
from datetime import date, timedelta
from pathlib import Path

SEED = 20260302
YEAR, MONTH = 2026, 3

# (day of March, "HH:MM", importance, semantic type or None, text)
# Data tables: one entry per line reads better than one field per line.
# fmt: off
STORY: list[tuple[int, str, float, str | None, str]] = [
    (2, "09:05", 0.6, "world_fact",
     "Dana Okafor is a backend engineer on Ledgerly's billing team; she works mostly in the "
     "ledgerly-core monorepo (Python 3.12, FastAPI, Postgres)."),
    (2, "09:20", 0.9, None,
     "Deadline: the invoice export v2 for Northwind (CSV + PDF, per-customer templates) is due "
     "Friday March 13."),
    (2, "11:40", 0.7, "directive",
     "Dana wants status updates in Slack #billing-dev, never by email."),
    (2, "14:10", 0.5, None,
     "Set up the local stack for ledgerly-core: docker compose up, seeded the invoices fixture, "
     "412 tests pass."),
    (2, "14:30", 0.7, "directive",
     "Dana likes short answers: the command or the diff first, the explanation after."),
    (3, "09:15", 0.8, None,
     "Dana: \"Priya Raman, my manager, wants a written status in #billing-dev every Friday "
     "before 16:00.\""),
    (3, "13:30", 0.6, None,
     "Started the invoice export v2 branch (feat/invoice-export-v2); the CSV writer is done, the "
     "PDF renderer is next."),
    (3, "16:45", 0.5, "world_fact",
     "Northwind's account contact is Tomas Weber; he reviews the export samples."),
    (4, "10:00", 0.7, "directive", "Dana prefers squash merges for feature branches."),
    (4, "11:30", 0.7, None,
     "Open question: should the payout queue keep Postgres advisory locks or move to SELECT ... "
     "FOR UPDATE SKIP LOCKED? Dana wants a recommendation by next week."),
    (4, "15:20", 0.6, None,
     "The invoice PDF renderer on WeasyPrint is too slow: a 2,000-line invoice takes 38 s. "
     "Trying ReportLab."),
    (5, "09:40", 0.7, "world_fact",
     "Staging runs Postgres 14, so the migration scripts must stay compatible with it."),
    (5, "14:00", 0.6, None,
     "Switched the invoice PDF renderer to ReportLab: the 2,000-line invoice renders in 2.1 s."),
    (5, "17:10", 0.6, None,
     "Benchmarked advisory locks against SKIP LOCKED on a copy of the payout queue: SKIP LOCKED "
     "handles three times the throughput with 8 workers."),
    (6, "10:20", 0.7, None,
     "CI times out on the PDF snapshot tests (20 minute limit); Dana is frustrated, every push "
     "waits for it."),
    (6, "15:30", 0.5, None,
     "Posted the Friday status in #billing-dev: CSV export done, PDF renderer moved to "
     "ReportLab, customer templates next."),
    (9, "09:10", 0.9, None,
     "Northwind asked for more time to review the templates: the invoice export deadline moved "
     "to March 20."),
    (9, "11:00", 0.6, None,
     "Refactored the invoice module: split InvoiceBuilder into a builder and a renderer and "
     "removed the circular import with tax."),
    (9, "14:30", 0.6, None,
     "Fixed the CI timeout: the PDF snapshot tests run in 4 parallel shards now (6 minutes)."),
    (10, "10:05", 0.5, None,
     "Dana pasted the staging database password while we debugged a migration: "
     "stg-Ledg3rly!pw-4471 (user ledger_app)."),
    (10, "10:40", 0.9, "directive",
     "Dana: \"Please forget the staging password I pasted earlier; it has been rotated.\""),
    (10, "13:15", 0.6, None,
     "Refactored the payments module: moved the retry logic into PaymentRetryPolicy; tests "
     "green."),
    (10, "16:00", 0.7, None,
     "Per-customer invoice templates are Jinja2 files in the S3 bucket "
     "ledgerly-invoice-templates; Northwind's has a custom VAT footer."),
    (11, "09:30", 0.8, None,
     "Correction: staging runs Postgres 16, not 14 (the RDS upgrade happened in February), so "
     "the migration scripts can use MERGE."),
    (11, "11:20", 0.7, None,
     "Correction: Northwind's contact is Tomasz Wójcik; Tomas Weber left Northwind in February."),
    (11, "14:45", 0.6, None,
     "Refactored the ledger module: replaced the hand-rolled double-entry checks with "
     "LedgerInvariant and updated 14 call sites."),
    (12, "10:00", 0.8, None,
     "Decided with Dana: the payout queue moves to SELECT ... FOR UPDATE SKIP LOCKED; the "
     "advisory locks go away in PR #2291."),
    (12, "15:30", 0.6, None,
     "Refactored the refunds module: RefundService uses the payments retry policy now; deleted "
     "300 lines."),
    (13, "09:50", 0.7, None,
     "Merged PR #2291: the payout queue runs on SKIP LOCKED in staging, and a 2-hour soak test "
     "paid nothing twice."),
    (13, "11:00", 0.7, None,
     "Dana: \"my manager said we should stop taking ad-hoc requests from the sales team; send "
     "them to her instead.\""),
    (13, "15:40", 0.5, None,
     "Posted the Friday status in #billing-dev: templates in review with Northwind, SKIP LOCKED "
     "merged."),
    (16, "09:20", 0.9, None,
     "The invoice export deadline moved again, now April 3: QA found rounding errors in the PDF "
     "totals of multi-currency invoices."),
    (16, "11:10", 0.6, None,
     "Refactored the payouts module: PayoutScheduler is split from PayoutExecutor, with clearer "
     "transaction boundaries."),
    (16, "14:30", 0.7, None,
     "Multi-currency PDF totals are off by one cent on 3% of Northwind's invoices: the Decimal "
     "quantize happens before the FX conversion."),
    (17, "09:45", 0.8, None,
     "The SOC 2 auditors (Kessler & Lowe) are on site on Tuesday March 24; Dana must have the "
     "quarterly access-review export ready by then."),
    (17, "13:00", 0.6, None,
     "Refactored the notifications module: webhooks and emails share one OutboundMessage queue "
     "now."),
    (17, "16:20", 0.7, None,
     "Fixed the multi-currency rounding: quantize after the FX conversion; all 1,204 Northwind "
     "sample invoices match to the cent."),
    (18, "10:30", 0.7, None,
     "Dana: \"my manager said the ledger schema migration waits until after the audit; no schema "
     "changes before March 25.\""),
    (18, "14:00", 0.6, None,
     "Wrote the runbook for the payout queue (docs/runbooks/payout-queue.md): how to drain it "
     "and re-run stuck payouts."),
    (19, "09:30", 0.8, "directive",
     "Dana no longer wants squash merges; she prefers rebase merges now, so the per-commit "
     "history survives git bisect."),
    (19, "15:00", 0.6, None,
     "Tomasz approved Northwind's CSV format; the PDF templates still need their legal footer "
     "text."),
    (20, "11:00", 0.5, None,
     "Posted the Friday status in #billing-dev: rounding bug fixed, CSV approved, waiting for "
     "Northwind's legal footer."),
    (23, "10:00", 0.7, None,
     "Generated the quarterly access-review export for the SOC 2 auditors: 212 users and 19 "
     "service accounts; Dana signed it off."),
    (23, "15:00", 0.6, None,
     "Northwind sent the legal footer text; added it to their invoice template."),
    (24, "17:30", 0.7, None,
     "The SOC 2 audit went fine: the auditors sampled 25 access reviews and found one stale "
     "service account (svc-reporting) to remove by March 31."),
    (25, "10:15", 0.6, None,
     "Removed the stale service account svc-reporting and closed the audit finding."),
    (25, "14:00", 0.7, None,
     "Started the ledger schema migration now that the audit is over: adding "
     "ledger_entries.currency_scale."),
    (26, "11:30", 0.7, None,
     "Open question: do we backfill currency_scale for the 41M historic ledger entries online, "
     "or in a maintenance window?"),
    (26, "16:00", 0.7, None,
     "The invoice export v2 is feature-complete; Northwind's UAT starts Monday March 30."),
    (27, "10:00", 0.7, None,
     "The currency_scale migration locks ledger_entries for 9 minutes on the staging copy; far "
     "too long for production."),
    (27, "15:30", 0.5, None,
     "Posted the Friday status in #billing-dev: export feature-complete, UAT on Monday, ledger "
     "migration started."),
    (30, "10:00", 0.7, None,
     "Northwind's UAT started; Tomasz reported one issue: the CSV header should say 'Net "
     "amount', not 'Amount (net)'."),
    (30, "14:45", 0.6, None,
     "Fixed the CSV header for Northwind ('Net amount') and redeployed the UAT environment."),
    (31, "09:30", 0.8, None,
     "Decided with Dana: the currency_scale backfill runs online in batches of 50k rows with a "
     "200 ms pause; no maintenance window."),
    (31, "11:00", 0.8, None,
     "Northwind's UAT is going well; Tomasz expects to sign it off on April 1."),
]

NOISE = [
    "Reformatted a SQL query for readability.",
    "Ran ruff format on the payments package.",
    "Fixed a typo in the README (recieve → receive).",
    "Renamed a local variable in tax.py from tmp to subtotal.",
    "Re-ran a flaky CI job; it passed the second time.",
    "Cleared old docker volumes to free 6 GB of disk.",
    "Looked up the jq syntax for filtering arrays.",
    "Answered a question about git stash pop versus apply.",
    "Updated the pinned version of pytest-xdist to 3.6.1.",
    "Sorted the imports in ledger/api.py.",
    "Added a docstring to InvoiceLine.total().",
    "Explained the difference between Decimal.quantize and round.",
    "Restarted the local Postgres container.",
    "Bumped the pre-commit hooks to their latest versions.",
    "Converted a Unix timestamp to a date for Dana.",
    "Deleted merged local branches.",
    "Regenerated the OpenAPI client after a schema change.",
    "Looked up how to tail CloudWatch logs from the CLI.",
    "Cleaned up print statements left in a test.",
    "Shortened a long test name in test_refunds.py.",
    "Checked the spelling of 'idempotency' for a PR title.",
    "Ran the full test suite locally: all green.",
    "Rebased the feature branch on main, no conflicts.",
    "Wrote a shell alias for docker compose logs -f.",
    "Reformatted the CHANGELOG entries for consistency.",
    "Explained what HTTP 422 means in FastAPI validation errors.",
    "Fixed trailing whitespace flagged by the linter.",
    "Added .pytest_cache to the .gitignore.",
    "Looked up the Python 3.12 syntax for type aliases.",
    "Measured the test suite runtime: 4 min 12 s.",
]

ROUTINE = [
    "Reformatted a SQL query", "ruff format", "typo", "docker volumes", "flaky CI job", "jq syntax",
    "git stash", "trailing whitespace", "pre-commit hooks",
]

CHECKS: list[dict[str, object]] = [
    {"id": "dreams-ok", "kind": "dreams_ok",
     "description": "Every scheduled dream commits (none rejected or failed)"},
    {"id": "deadline-current", "kind": "must_contain", "section": "active_context",
     "any": ["April 3", "3 April", "Apr 3"],
     "description": "The current export deadline (April 3, moved twice) is in Active Context"},
    {"id": "deadline-old-not-current", "kind": "must_not_be_current",
     "any": ["March 13", "March 20"],
     "description": "The superseded deadlines are not stated as current"},
    {"id": "deadline-bootstrap", "kind": "must_contain", "section": "bootstrap",
     "any": ["April 3", "3 April", "Apr 3"],
     "description": "The current deadline survives the 32k bootstrap block"},
    {"id": "manager-named", "kind": "must_contain", "section": "bond", "phrase": "Priya",
     "description": "The manager named once (Priya) and later called 'my manager' is in The Bond"},
    {"id": "manager-bootstrap", "kind": "must_contain", "section": "bootstrap", "phrase": "Priya",
     "description": "The manager's name survives the 32k bootstrap block"},
    {"id": "bond-about-dana", "kind": "must_not_contain", "section": "bond",
     "any": ["UAT", "open question", "auditors", "payout queue"],
     "description": "The Bond says who Dana is, not project events or open questions"},
    {"id": "locks-question-closed", "kind": "must_not_contain", "section": "curiosity_gaps",
     "any": ["advisory lock", "advisory locks", "SKIP LOCKED"],
     "description": "The advisory-lock question, decided on March 12, is not an open gap"},
    {"id": "locks-decision-kept", "kind": "must_contain", "phrase": "SKIP LOCKED",
     "description": "The payout-queue decision (SKIP LOCKED) is somewhere in MEMORY.md"},
    {"id": "backfill-question-closed", "kind": "must_not_contain", "section": "curiosity_gaps",
     "any": ["maintenance window", "backfill"],
     "description": "The backfill question, decided on March 31, is not an open gap"},
    {"id": "forget-memory", "kind": "must_not_contain", "phrase": "stg-Ledg3rly!pw-4471",
     "description": "The staging password the user asked to forget is not in MEMORY.md"},
    {"id": "forget-same-day", "kind": "must_not_contain", "at": "2026-03-10T23:00:00Z",
     "phrase": "stg-Ledg3rly!pw-4471",
     "description": "The first dream after the forget request does not write the password"},
    {"id": "forget-bootstrap", "kind": "must_not_contain", "section": "bootstrap",
     "phrase": "stg-Ledg3rly!pw-4471",
     "description": "The staging password is not in the bootstrap block"},
    {"id": "forget-request-not-kept", "kind": "must_not_contain",
     "any": ["forget the staging password"],
     "description": "The forget request itself is not kept as a line (of The Bond or elsewhere)"},
    {"id": "forget-search", "kind": "not_searchable", "query": "staging database password",
     "phrase": "stg-Ledg3rly!pw-4471",
     "description": "Searching for the staging password does not find it"},
    {"id": "noise-not-active", "kind": "must_not_contain", "section": "active_context",
     "any": ROUTINE,
     "description": "Routine low-importance notes are not in Active Context"},
    {"id": "noise-not-bootstrap", "kind": "must_not_contain", "section": "bootstrap",
     "any": ROUTINE,
     "description": "Routine notes do not take room in the bootstrap block"},
    {"id": "preference-newest", "kind": "must_contain", "section": "bond",
     "any": ["rebase merge", "rebase merges"],
     "description": "The newest merge preference (rebase merges) is in The Bond"},
    {"id": "preference-old-not-current", "kind": "must_not_be_current",
     "any": ["squash merge", "squash merges"],
     "description": "The old preference (squash merges) is not stated as current"},
    {"id": "preference-stable", "kind": "must_contain", "section": "bond",
     "any": ["short answers", "command or the diff first"],
     "description": "A preference stated once and never changed (short answers) stays in The "
     "Bond"},
    {"id": "correction-postgres", "kind": "must_not_be_current", "phrase": "Postgres 14",
     "description": "The corrected fact (staging on Postgres 14) is not stated as current"},
    {"id": "correction-contact", "kind": "must_not_be_current", "phrase": "Tomas Weber",
     "description": "The corrected contact (Tomas Weber) is not stated as current"},
    {"id": "contact-current", "kind": "must_contain", "any": ["Tomasz Wójcik", "Tomasz"],
     "description": "Northwind's current contact (Tomasz) is in MEMORY.md"},
    {"id": "audit-upcoming", "kind": "must_contain", "section": "active_context",
     "at": "2026-03-22T23:00:00Z", "any": ["SOC 2", "audit", "auditors"],
     "description": "Two days before it, the SOC 2 audit (noted March 17) is in Active Context"},
    {"id": "audit-upcoming-bootstrap", "kind": "must_contain", "section": "bootstrap",
     "at": "2026-03-22T23:00:00Z", "any": ["SOC 2", "audit", "auditors"],
     "description": "Two days before it, the SOC 2 audit is in the bootstrap block"},
    {"id": "current-work", "kind": "must_contain", "section": "active_context",
     "any": ["backfill", "currency_scale"],
     "description": "The work of the last days (the currency_scale backfill) is in Active "
     "Context"},
    {"id": "uat-current", "kind": "must_contain", "section": "active_context", "any": ["UAT"],
     "description": "Northwind's running UAT is in Active Context"},
    {"id": "refactors-one-pointer", "kind": "pointer_group", "name": "module refactors",
     "at": "2026-03-20T23:00:00Z", "any": ["refactor", "refactored", "refactoring", "refactors"],
     "max": 1,
     "description": "Three days after the last one, six module refactors are at most one pointer"},
    {"id": "pointers-not-truncated", "kind": "pointers_not_truncated",
     "description": "No pointer topic is cut mid-sentence (ends in … or ...)"},
    {"id": "pointers-descriptive", "kind": "pointers_descriptive",
     "description": "Every pointer topic has 3+ words and is not a bare label or date"},
    {"id": "pointers-retrieve", "kind": "pointers_retrieve",
     "description": "Every pointer's keywords find at least one matching crystal"},
]
# fmt: on


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _table(header: str, fields: dict[str, object]) -> str:
    return header + "\n" + "".join(f"{key} = {_value(value)}\n" for key, value in fields.items())


def events(rng: random.Random) -> list[dict[str, object]]:
    """The storyline and the scattered routine notes, in time order."""
    out = []
    for day, hhmm, importance, kind, text in STORY:
        event: dict[str, object] = {
            "at": f"{YEAR}-{MONTH:02d}-{day:02d}T{hhmm}:00Z",
            "note": text,
            "importance": importance,
        }
        if kind:
            event["type"] = kind
        out.append(event)
    workdays = [d for d in range(2, 32) if date(YEAR, MONTH, d).weekday() < 5]
    taken = {e["at"] for e in out}
    for text in NOISE:
        while True:
            day = rng.choice(workdays)
            hour, minute = rng.randint(9, 17), rng.choice((5, 25, 50))
            at = f"{YEAR}-{MONTH:02d}-{day:02d}T{hour:02d}:{minute:02d}:00Z"
            if at not in taken:
                break
        taken.add(at)
        out.append({"at": at, "note": text, "importance": round(rng.uniform(0.15, 0.35), 2)})
    return sorted(out, key=lambda e: str(e["at"]))


def render() -> str:
    """The whole month.toml."""
    rng = random.Random(SEED)
    start = date(YEAR, MONTH, 2)
    head = (
        "# Generated by make_month.py (seeded, deterministic): edit the script and rerun it.\n"
        'name = "month"\n'
        "description = \"A month of a coding agent's notes on Dana's billing work: a deadline "
        "moved twice, a manager named once, a question decided, an audit ahead, a forget "
        'request, six module refactors and a third routine noise."\n'
        f'start = "{start.isoformat()}T00:00:00Z"\n'
        f'end = "{(start + timedelta(days=29)).isoformat()}T23:30:00Z"\n\n'
        + _table(
            "[schedule]", {"dream_times": ["23:00"], "force": True, "consolidate_every_minutes": 30}
        )
    )
    parts = [head]
    parts += [_table("[[events]]", event) for event in events(rng)]
    parts += [_table("[[checks]]", check) for check in CHECKS]
    return "\n".join(parts)


if __name__ == "__main__":
    target = Path(__file__).with_name("month.toml")
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
