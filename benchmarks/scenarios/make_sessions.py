"""Write the captured-session months: captured/api.toml, captured/etl.toml, captured/book.toml.

Each month is a person's work as their coding agent's CLI captured it, not notes an agent
wrote: ``session`` events (see README.md) that the bench writes in the real CLI's format and
ingests the way the SessionEnd hook does. Three domains, three people, other words in each:

- ``captured_api`` (captured/api.toml): Claude Code in VS Code on a web service (orderdesk).
- ``captured_etl`` (captured/etl.toml): Codex CLI rollouts on a data pipeline (tidewater, dbt).
- ``captured_book`` (captured/book.toml): Claude Code on a book manuscript (Markdown, pandoc).

Each plants: a convention stated once, a rule stated once, a decision reversed in other words, a
deadline moved twice, a person named then called by role, a fix that ends a problem, an open
question answered later in other words, an indirect forget request, a secret in a tool result,
a topic asked about again weeks later, an exchange repeated on another day, a task repeated over
four objects, an assistant promise, IDE and harness noise (``<ide_opened_file>`` blocks with
absolute paths under the fake home, system reminders, slash and ``!`` commands, tool dumps, an
interrupt, an API error, a compaction, a subagent), and two thirds routine exchanges. The
storyline is hand-written; the routine sessions are scattered over the working days, and the
noise laid on them, by a seeded generator, so the output is the same on every run. Edit this
script, then run it from the repository:

    python benchmarks/scenarios/make_sessions.py

The checks are written for what a good MEMORY.md holds after such a month; many fail on the
code they were written against, on purpose (see README.md).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

SEED = 20260335
Turn = dict[str, Any]

PYTEST_DUMP = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0\n"
    "rootdir: {root}\nconfigfile: pyproject.toml\nplugins: anyio-4.4.0, cov-5.0.0\n"
    "collected 214 items\n\ntests/test_orders.py ........................F.....  [ 14%]\n"
    "tests/test_checkout.py ....................................  [ 31%]\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_orders.py::test_refund_rounding - AssertionError: 10.01 != 10.0\n"
    "======================== 1 failed, 213 passed in 41.27s ========================"
)
NODE_DUMP = (
    " RUN  v1.6.0 {root}\n\n ✓ src/orders/list.spec.ts (12 tests) 311ms\n"
    " ✓ src/orders/refund.spec.ts (9 tests) 204ms\n ❯ src/checkout/checkout.spec.ts (14 tests | 1 "
    "failed) 5032ms\n   × checkout > applies the coupon once 5004ms\n     → Test timed out in "
    "5000ms.\n\n Test Files  1 failed | 23 passed (24)\n      Tests  1 failed | 188 passed (189)\n"
    "   Start at  10:14:03\n   Duration  9.84s (transform 1.21s, setup 0ms, collect 4.10s)"
)
DBT_DUMP = (
    "06:02:11  Running with dbt=1.8.3\n06:02:12  Registered adapter: postgres=1.8.2\n"
    "06:02:13  Found 142 models, 388 data tests, 21 sources, 0 exposures, 712 macros\n"
    "06:02:13  Concurrency: 4 threads (target='prod')\n"
    "06:02:14  1 of 142 START sql incremental model analytics.stg_orders ..... [RUN]\n"
    "06:02:19  1 of 142 OK created sql incremental model analytics.stg_orders  [INSERT 0 "
    "18244 in 5.12s]\n06:04:51  Finished running 142 models in 0 hours 2 minutes and 38.02 "
    "seconds (158.02s).\n06:04:51  Completed successfully\n06:04:51  Done. PASS=142 WARN=0 "
    "ERROR=0 SKIP=0 TOTAL=142"
)
PANDOC_DUMP = (
    "[WARNING] Could not convert image figures/hive-cross-section.svg: check that "
    "rsvg-convert is in path.\n  rsvg-convert: createProcess: exec: does not exist (No such "
    "file or directory)\nError producing PDF.\n! LaTeX Error: File `figures/hive-cross-section"
    ".pdf' not found.\n\nSee the LaTeX manual or LaTeX Companion for explanation.\nType  H "
    "<return>  for immediate help.\n l.412 \\includegraphics{{figures/hive-cross-section.pdf}}"
)
REMINDERS = (
    "The TodoWrite tool hasn't been used recently. If you're working on tasks that would "
    "benefit from tracking progress, consider using the TodoWrite tool.",
    "Note: {root}/README.md was modified, either by the user or by a linter. Don't tell the "
    "user this, since they are already aware.",
    "As you answer the user's questions, you can use the following context:\n# claudeMd\n"
    "Codebase and user instructions are shown below.",
)


@dataclass
class Month:
    """One scenario: who, where, the storyline sessions, the routine, and the checks."""

    name: str
    description: str
    agent: str
    project: str
    first: date
    days: int
    story: list[tuple[int, str, list[Turn]]]
    routine: list[list[Turn]]
    ide_files: list[str] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)


def _bash(command: str, output: str, error: bool = False) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": "Bash", "input": {"command": command}, "output": output}
    if error:
        tool["error"] = True
    return tool


def _exec(command: str, output: str) -> dict[str, Any]:
    return {"name": "exec_command", "input": {"cmd": command}, "output": output}


def _read(path: str, output: str) -> dict[str, Any]:
    return {"name": "Read", "input": {"file_path": path}, "output": output}


def _common(
    dumps: str, secret: str, promise: str, tokens: list[str], commands: list[str]
) -> list[dict[str, Any]]:
    """The checks every captured month shares: noise, secrets, promises, cut tokens."""
    noise = ["<ide_", "<system-reminder>", "{home}/", *commands]
    return [
        {"id": "dreams-ok", "kind": "dreams_ok", "description": "Every dream committed"},
        {
            "id": "no-markup-in-crystals",
            "kind": "crystals_must_not_contain",
            "substring": True,
            "any": noise,
            "description": "No crystal holds IDE blocks, system reminders, the "
            "fake home's absolute paths or command markup",
        },
        {
            "id": "no-markup-in-memory",
            "kind": "must_not_contain",
            "substring": True,
            "any": noise,
            "description": "MEMORY.md holds no IDE or harness markup and no "
            "absolute path under the home",
        },
        {
            "id": "no-tool-dump-in-crystals",
            "kind": "crystals_must_not_contain",
            "substring": True,
            "any": dumps.split("|"),
            "description": "No crystal holds a tool's raw output (a line of the dumps)",
        },
        {
            "id": "secret-never-stored",
            "kind": "crystals_must_not_contain",
            "substring": True,
            "phrase": secret,
            "description": "The secret a tool printed is in no crystal",
        },
        {
            "id": "secret-not-in-memory",
            "kind": "must_not_contain",
            "substring": True,
            "phrase": secret,
            "description": "The secret a tool printed is not in MEMORY.md",
        },
        {
            "id": "no-promise-bond",
            "kind": "must_not_contain",
            "section": "bond",
            "any": ["I'll", "I will", "let me", promise],
            "description": "No assistant promise is a fact in The Bond",
        },
        {
            "id": "no-promise-phenotype",
            "kind": "must_not_contain",
            "section": "phenotype",
            "any": ["I'll", "I will", "let me", promise],
            "description": "No assistant promise is a fact in The Phenotype",
        },
        {
            "id": "tokens-whole",
            "kind": "tokens_whole",
            "tokens": tokens,
            "description": "No line of MEMORY.md is cut inside a code token or file name",
        },
        {
            "id": "tokens-whole-bootstrap",
            "kind": "tokens_whole",
            "tokens": tokens,
            "section": "bootstrap",
            "description": "No line of the bootstrap block is cut inside a code token",
        },
        {
            "id": "pointers-descriptive",
            "kind": "pointers_descriptive",
            "description": "Every pointer topic has 3+ words and is not a bare label or date",
        },
    ]


# --- captured_api: Claude Code on a web service -------------------------------------------------

# fmt: off
API_STORY: list[tuple[int, str, list[Turn]]] = [
    (2, "09:40", [
        {"user": "Quick ground rule for this repo: we use pnpm, never npm or yarn. The "
                 "lockfile is pnpm-lock.yaml and CI fails on any other lockfile.",
         "ide_file": "package.json",
         "assistant": "Understood. I checked package.json: packageManager is pnpm@9.4.0, and "
                      "there is no package-lock.json in the tree."},
        {"user": "The public API v2 launch is due Friday March 13. That's the date Nadia Petrov, "
                 "our tech lead, gave the partners.",
         "assistant": "Noted: API v2 launch on March 13, set by Nadia Petrov (tech lead)."},
    ]),
    (2, "15:10", [
        {"user": "Rule: never push straight to main. Always a PR, and wait for the CI checks "
                 "to go green before merging.",
         "assistant": "Got it. I will keep my changes on branches and open PRs."},
    ]),
    (3, "10:20", [
        {"user": "How do we rotate the JWT signing keys? I always forget.",
         "ide_file": "src/auth/keys.ts",
         "tools": [_read("{root}/src/auth/keys.ts",
                         "export const KEY_SET = loadJwks(process.env.JWKS_PATH)\n// rotation: "
                         "scripts/rotate-jwks.ts adds a new kid, old kid kept 24h")],
         "assistant": "Run `pnpm tsx scripts/rotate-jwks.ts`: it adds a key with a new kid to "
                      "the JWKS, the old kid stays valid for 24 hours, then a cron job drops "
                      "it."},
    ]),
    (4, "11:05", [
        {"user": "Let's settle the session store: we go with Redis for sessions.",
         "assistant": "OK, sessions in Redis. I'll add ioredis and a connect-redis store."},
    ]),
    (4, "16:30", [
        {"user": "Open question I haven't decided: should the /orders list paginate with "
                 "cursors or with offsets? Partners page through 200k orders.",
         "assistant": "Both work; cursors stay fast on deep pages, offsets are simpler for "
                      "the partners. No decision yet."},
    ]),
    (5, "09:55", [
        {"user": "checkout.spec.ts is flaky again, the coupon test times out one run in five.",
         "ide_file": "src/checkout/checkout.spec.ts",
         "tools": [_bash("pnpm vitest run src/checkout", NODE_DUMP, error=True)],
         "assistant": "The coupon test in checkout.spec.ts timed out after 5000 ms; the others "
                      "pass. I'll keep an eye on it and look again tomorrow."},
    ]),
    (6, "14:00", [
        {"user": "Marco told me today he is going through a divorce and may be slow on reviews "
                 "for a while.",
         "assistant": "Thanks for telling me; I will route urgent reviews elsewhere."},
    ]),
    (9, "10:30", [
        {"user": "Partners asked for more time. The API v2 launch moves to March 20.",
         "assistant": "Launch moved: API v2 is now due March 20."},
    ]),
    (10, "11:15", [
        {"user": "Can you check the staging env vars for the payment service?",
         "tools": [_bash("cat .env.staging",
                         "DATABASE_URL=postgres://orderdesk@db.staging:5432/orderdesk\n"
                         "STRIPE_SECRET_KEY=sk_live_51Qm8RkT2vXz9LpA7cYd3EwNf\n"
                         "LOG_LEVEL=debug")],
         "assistant": "The staging env has DATABASE_URL, a Stripe key and LOG_LEVEL=debug; "
                      "LOG_LEVEL should be info on staging."},
    ]),
    (11, "09:20", [
        {"user": "Regenerate the OpenAPI client for the partners SDK.",
         "tools": [_bash("pnpm openapi:gen", "wrote sdk/src/client.ts (3 files changed)")],
         "assistant": "Regenerated the OpenAPI client: sdk/src/client.ts and 2 more files "
                      "changed."},
    ]),
    (12, "15:45", [
        {"user": "Found it: the flaky checkout test leaked a database connection in the coupon "
                 "fixture. I closed it in afterEach and it passed 50 runs in a row.",
         "ide_file": "src/checkout/checkout.spec.ts",
         "assistant": "Good catch. With the connection closed in afterEach the coupon test is "
                      "stable."},
    ]),
    (13, "10:00", [
        {"user": "Marco would rather none of that personal stuff about him stayed in my notes.",
         "assistant": "Understood."},
    ]),
    (16, "09:35", [
        {"user": "Bump zod to 3.23 across the workspace.",
         "tools": [_bash("pnpm up zod@3.23 -r",
                         "Progress: resolved 812, reused 806\nDone in 6.1s")],
         "assistant": "Bumped zod to 3.23 in all packages; the type check passes."},
    ]),
    (17, "10:10", [
        {"user": "The tech lead wants every new endpoint documented in the OpenAPI spec before "
                 "review.",
         "assistant": "OK: new endpoints get their OpenAPI entry before the review."},
        {"user": "Bump fastify to 4.28.",
         "tools": [_bash("pnpm up fastify@4.28 -r", "Done in 4.0s")],
         "assistant": "Bumped fastify to 4.28; the server tests pass."},
    ]),
    (18, "14:25", [
        {"user": "Bump pino to 9.2.",
         "tools": [_bash("pnpm up pino@9.2 -r", "Done in 3.2s")],
         "assistant": "Bumped pino to 9.2."},
    ]),
    (19, "11:50", [
        {"user": "Drop Redis. Sessions will live in Postgres after all; one less service to "
                 "run, and the session table is tiny.",
         "assistant": "Done: removed ioredis and connect-redis; sessions now use the Postgres "
                      "session table."},
    ]),
    (20, "16:05", [
        {"user": "Bump vitest to 1.6.",
         "tools": [_bash("pnpm up vitest@1.6 -r", "Done in 5.5s")],
         "assistant": "Bumped vitest to 1.6; all 189 tests pass."},
    ]),
    (23, "09:45", [
        {"user": "Bad news: the launch slipped again. API v2 now goes out on April 3.",
         "assistant": "Updated: API v2 launch on April 3."},
    ]),
    (24, "10:40", [
        {"user": "We went with keyset pagination for /orders, on (created_at, id). Partners "
                 "get a next token.",
         "ide_file": "src/orders/list.ts",
         "assistant": "Implemented keyset pagination on (created_at, id) with an opaque next "
                      "token for /orders."},
    ]),
    (25, "09:15", [
        {"user": "Regenerate the OpenAPI client for the partners SDK.",
         "tools": [_bash("pnpm openapi:gen", "wrote sdk/src/client.ts (3 files changed)")],
         "assistant": "Regenerated the OpenAPI client: sdk/src/client.ts and 2 more files "
                      "changed."},
    ]),
    (26, "14:30", [
        {"user": "Remind me how we rotate the JWT signing keys? The security review asks.",
         "assistant": "scripts/rotate-jwks.ts adds a new kid; the old one stays valid 24 h."},
    ]),
]
API_HARNESS: list[tuple[int, str, list[Turn]]] = [
    (5, "17:20", [
        {"command": "/review src/checkout",
         "assistant": "Review of src/checkout: the coupon fixture never closes its pool."}]),
    (9, "14:40", [
        {"bash": {"command": "git log --oneline -3",
                  "output": "a41c2e9 orders: refund rounding\n77d0b1f deps"}},
        {"user": "Deploy the refund fix to staging.", "api_error": "API Error: 529 "
         "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"},
    ]),
    (12, "11:00", [
        {"user": "Run the whole test suite.",
         "tools": [_bash("pnpm test", NODE_DUMP, error=True)], "interrupted": True}]),
    (18, "17:05", [
        {"compact": "The user works on orderdesk (TypeScript, Fastify, Postgres). Recent: "
                    "dependency bumps, keyset pagination planned.",
         "user": "Where were we with the refunds rounding bug?",
         "subagent": {"type": "Explore", "task": "Find refund rounding",
                      "prompt": "Find where refunds are rounded in src/orders",
                      "answer": "src/orders/refund.ts rounds with Math.round on cents."},
         "assistant": "The refund rounding happens in src/orders/refund.ts; it rounds cents "
                      "with Math.round."}]),
]
API_ROUTINE: list[list[Turn]] = [
    [{"user": "Run the linter on src/orders.", "tools": [_bash("pnpm eslint src/orders", "")],
      "assistant": "No lint errors in src/orders."}],
    [{"user": "What does this function do?", "assistant": "formatMoney turns integer cents "
      "into a localized string with the currency symbol."}],
    [{"user": "Add a test for the empty cart case.",
      "tools": [_bash("pnpm vitest run src/cart", "Tests  13 passed (13)")],
      "assistant": "Added a test for the empty cart; 13 cart tests pass."}],
    [{"user": "Rename getUsr to getUser everywhere.", "assistant": "Renamed getUsr to getUser "
      "in 6 files."}],
    [{"user": "Why is the type check slow?", "assistant": "The project references rebuild sdk "
      "each time; incremental builds would help."}],
    [{"user": "Format the changed files.", "tools": [_bash("pnpm prettier -w src", "")],
      "assistant": "Formatted 4 files."}],
    [{"user": "Show me the last migration.", "tools": [_read("{root}/migrations/0042_refunds.sql",
      "ALTER TABLE refunds ADD COLUMN reason text;")],
      "assistant": "Migration 0042 adds a reason column to refunds."}],
    [{"user": "Fix the typo in the README.", "assistant": "Fixed 'recieve' in README.md."}],
    [{"user": "Start the dev server.", "tools": [_bash("pnpm dev", "listening on :3000")],
      "assistant": "The dev server listens on port 3000."}],
    [{"user": "Add a log line when a refund is created.", "assistant": "Added an info log "
      "with the refund id and amount."}],
    [{"user": "Which endpoints have no tests?", "assistant": "GET /health and POST /webhooks "
      "have no tests."}],
    [{"user": "Add a test for POST /webhooks.", "assistant": "Added 3 tests for POST "
      "/webhooks; all pass."}],
    [{"user": "Make the error message for a bad coupon friendlier.", "assistant": "The "
      "message now says the coupon has expired or is not valid for this cart."}],
    [{"user": "Check the bundle size of the admin UI.", "tools": [_bash("pnpm build:admin",
      "dist/admin.js  412.3 kB │ gzip: 121.9 kB")], "assistant": "The admin bundle is 412 kB, "
      "122 kB gzipped."}],
    [{"user": "Explain the difference between these two queries.", "assistant": "The second "
      "uses the orders_created_at index; the first scans the table."}],
    [{"user": "Clean up unused imports in src/auth.", "assistant": "Removed 5 unused imports "
      "from src/auth."}],
    [{"user": "Add the missing return type on createOrder.", "assistant": "createOrder now "
      "returns Promise<Order>."}],
    [{"user": "Is the health check returning the version?", "assistant": "Yes, GET /health "
      "returns the version from package.json."}],
    [{"user": "Update the changelog for the refund fix.", "assistant": "Added the refund "
      "rounding fix under Unreleased."}],
    [{"user": "Run the API tests.", "tools": [_bash("pnpm vitest run src/api", "Tests  64 "
      "passed (64)")], "assistant": "All 64 API tests pass."}],
    [{"user": "Split the orders router into two files.", "assistant": "Split it into "
      "orders/read.ts and orders/write.ts."}],
    [{"user": "Look at the slow query log.", "assistant": "The slowest query is the "
      "refunds report, 1.2 s, missing an index on refunds.order_id."}],
    [{"user": "Add that index.", "assistant": "Added migration 0043 with an index on "
      "refunds.order_id."}],
    [{"user": "What's left on the admin UI ticket?", "assistant": "The filters and the CSV "
      "export are left."}],
]
# fmt: on


def api_month() -> Month:
    dumps = "Start at  10:14:03|transform 1.21s, setup 0ms|Progress: resolved 812"
    checks = [
        *_common(
            dumps,
            "sk_live_51Qm8RkT2vXz9LpA7cYd3EwNf",
            "keep an eye on it",
            ["pnpm-lock.yaml", "checkout.spec.ts", "rotate-jwks.ts", "src/orders/refund.ts"],
            ["<command-", "<bash-", "[Request interrupted"],
        ),
        {
            "id": "convention-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["pnpm"],
            "description": "The package-manager convention (pnpm, stated once) is in The Bond",
        },
        {
            "id": "rule-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": [
                "never push straight to main",
                "never push to main",
                "always a PR",
                "PR and wait for CI",
                "wait for the CI",
            ],
            "description": "The rule stated once (never push to main, PR and green CI) is in "
            "The Bond",
        },
        {
            "id": "person-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["Nadia Petrov", "Nadia"],
            "description": "The tech lead, named once (Nadia Petrov), is in The Bond",
        },
        {
            "id": "person-role-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["tech lead"],
            "description": "Nadia's role (tech lead) is in The Bond",
        },
        {
            "id": "deadline-current",
            "kind": "must_contain",
            "section": "active_context",
            "any": ["April 3", "3 April", "Apr 3"],
            "description": "The newest launch date (April 3) is in Active Context",
        },
        {
            "id": "deadline-old-not-current",
            "kind": "must_not_be_current",
            "any": ["March 13", "March 20", "13 March", "20 March"],
            "description": "The launch's old dates are not stated as current",
        },
        {
            "id": "deadline-bootstrap",
            "kind": "must_contain",
            "section": "bootstrap",
            "any": ["April 3", "3 April", "Apr 3"],
            "description": "The newest launch date is in the bootstrap block",
        },
        {
            "id": "decision-current",
            "kind": "must_contain",
            "section": "active_context",
            "at": "2026-03-20T23:00:00Z",
            "any": ["sessions in Postgres", "Postgres session", "sessions will live in Postgres"],
            "description": "The day after, the reversed decision (sessions in Postgres) is in "
            "Active Context",
        },
        {
            "id": "decision-old-not-current",
            "kind": "must_not_be_current",
            "any": ["Redis"],
            "description": "The dropped choice (Redis for sessions) is not stated as current",
        },
        {
            "id": "flaky-open",
            "kind": "must_contain",
            "section": "active_context",
            "at": "2026-03-11T23:00:00Z",
            "any": ["flaky", "checkout.spec.ts", "coupon test"],
            "description": "Before its fix, the flaky checkout test is in Active Context",
        },
        {
            "id": "flaky-fixed",
            "kind": "must_not_be_current",
            "any": ["flaky"],
            "past_markers": ["fixed", "found it", "leaked", "stable", "no longer", "was flaky"],
            "description": "After the fix, the flaky test is not stated as a current problem",
        },
        {
            "id": "question-open",
            "kind": "must_contain",
            "section": "curiosity_gaps",
            "at": "2026-03-16T23:00:00Z",
            "any": ["paginate", "pagination", "cursors or offsets", "cursors", "offsets"],
            "description": "Until answered, the pagination question is in Curiosity Gaps",
        },
        {
            "id": "question-answered",
            "kind": "must_not_contain",
            "section": "curiosity_gaps",
            "any": ["paginate", "pagination", "cursors or offsets"],
            "description": "Once answered (keyset pagination), the question left Curiosity Gaps",
        },
        {
            "id": "answer-kept",
            "kind": "must_contain",
            "any": ["keyset"],
            "description": "The answer (keyset pagination) is in MEMORY.md",
        },
        {
            "id": "forget-memory",
            "kind": "must_not_contain",
            "any": ["divorce"],
            "description": "The forget request was carried out: Marco's divorce is not in "
            "MEMORY.md",
        },
        {
            "id": "forget-search",
            "kind": "not_searchable",
            "query": "Marco divorce reviews",
            "phrase": "divorce",
            "description": "Search no longer finds Marco's divorce",
        },
        {
            "id": "forget-recorded",
            "kind": "forgotten",
            "min": 1,
            "description": "At least one crystal was forgotten (the request was carried out)",
        },
        {
            "id": "repeat-seen-twice",
            "kind": "seen_on_dates",
            "phrase": "Regenerate the OpenAPI client",
            "min": 2,
            "description": "The exchange repeated on March 25 is seen on two dates",
        },
        {
            "id": "topic-weeks-later",
            "kind": "searchable",
            "at": "2026-03-26T14:00:00Z",
            "query": "rotate JWT signing keys",
            "any": ["rotate-jwks", "kid"],
            "description": "Three weeks later, the JWT key rotation answer is found by search",
        },
        {
            "id": "skill-bumps",
            "kind": "must_contain",
            "section": "emerging_skills",
            "any": ["bump", "bumping", "dependency", "dependencies", "upgrade"],
            "description": "Four dependency bumps became a skill",
        },
    ]
    return Month(
        "captured_api",
        "A month of Claude Code sessions in VS Code on orderdesk, a TypeScript web service: "
        "a launch moved twice, a tech lead named once, Redis dropped for Postgres, a flaky "
        "test fixed, a pagination question answered, a forget request, a Stripe key in a tool "
        "result, IDE and harness noise, two thirds routine.",
        "claude-code",
        "orderdesk",
        date(2026, 3, 2),
        30,
        [*API_STORY, *API_HARNESS],
        API_ROUTINE,
        [
            "src/orders/list.ts",
            "src/checkout/checkout.spec.ts",
            "src/auth/keys.ts",
            "package.json",
            "src/orders/refund.ts",
        ],
        checks,
    )


# --- captured_etl: Codex on a data pipeline ------------------------------------------------------

# fmt: off
ETL_STORY: list[tuple[int, str, list[Turn]]] = [
    (1, "08:30", [
        {"user": "House style for this repo: every timestamp column is stored in UTC and named "
                 "with an _utc suffix. No local times in the warehouse.",
         "assistant": "Understood: UTC only, columns end in _utc."},
        {"user": "Ines Duarte manages the data platform; she set the Q2 cutover to the new "
                 "warehouse for April 10.",
         "assistant": "Noted: cutover April 10, set by Ines Duarte, data platform manager."},
    ]),
    (2, "10:15", [
        {"user": "One rule: no backfill runs against prod between 08:00 and 18:00 CET, ever. "
                 "The BI team queries it all day.",
         "assistant": "Got it: prod backfills only outside 08:00-18:00 CET."},
    ]),
    (3, "09:05", [
        {"user": "How do I re-run one dbt model together with everything downstream of it?",
         "tools": [_exec("dbt ls -s stg_orders+ | head -3",
                         "analytics.stg_orders\nanalytics.fct_orders\nanalytics.rpt_revenue")],
         "assistant": "Use the plus selector: `dbt run -s stg_orders+` runs stg_orders and its "
                      "children (fct_orders, rpt_revenue)."},
    ]),
    (6, "11:40", [
        {"user": "We're moving orchestration to Dagster. Start a Dagster project for the "
                 "nightly jobs.",
         "assistant": "Scaffolded orchestration/dagster with a nightly job definition. I'll "
                      "port the cron entries next week."},
    ]),
    (7, "09:50", [
        {"user": "The nightly load duplicates rows in fct_order_lines again, about 1,200 "
                 "extra per night.",
         "tools": [_exec("psql -c 'select count(*) - count(distinct (order_id, line_no)) from "
                         "fct_order_lines'", " ?column? \n----------\n     1204\n(1 row)")],
         "assistant": "1,204 duplicate rows in fct_order_lines from last night's load."},
    ]),
    (8, "14:20", [
        {"user": "Open question for later: should the events table be partitioned by day or "
                 "by customer?",
         "assistant": "Noted as open: partition events by day or by customer."},
    ]),
    (9, "16:00", [
        {"user": "Ravi is on sick leave until the 20th, burnout, so his dashboards wait.",
         "assistant": "Noted; his dashboards wait until he is back."},
    ]),
    (13, "10:30", [
        {"user": "Ines pushed the cutover: the new warehouse goes live April 17 now.",
         "assistant": "Cutover moved to April 17."},
    ]),
    (14, "09:40", [
        {"user": "Check the connection settings for the warehouse user.",
         "tools": [_exec("cat ~/.pgpass",
                         "warehouse.internal:5432:analytics:etl_user:Tq8mZ2vL9pXw4Rb")],
         "assistant": "etl_user connects to warehouse.internal:5432, database analytics."},
    ]),
    (15, "11:10", [
        {"user": "Fixed the duplicates: the load now MERGEs on (order_id, line_no) instead of "
                 "appending. Last night: zero duplicates.",
         "tools": [_exec("psql -c 'select count(*) - count(distinct (order_id, line_no)) from "
                         "fct_order_lines'", " ?column? \n----------\n        0\n(1 row)")],
         "assistant": "Confirmed: 0 duplicate rows after the MERGE load."},
    ]),
    (16, "10:00", [
        {"user": "About Ravi: he'd prefer that the health thing didn't stay in my notes.",
         "assistant": "Understood."},
    ]),
    (16, "15:30", [
        {"user": "Refresh the currency rates table.",
         "tools": [_exec("make rates", "loaded 168 rates for 2026-04-16")],
         "assistant": "Refreshed currency_rates: 168 rates loaded."},
    ]),
    (20, "09:25", [
        {"user": "Backfill the orders table for March.",
         "tools": [_exec("make backfill TABLE=orders MONTH=2026-03", DBT_DUMP)],
         "assistant": "Backfilled orders for March: 142 models passed."},
    ]),
    (21, "19:10", [
        {"user": "Scrap the Dagster move. We stay on cron plus make; the migration isn't "
                 "worth it this quarter.",
         "assistant": "Removed orchestration/dagster; the nightly jobs stay in the crontab."},
        {"user": "Backfill the refunds table for March.",
         "tools": [_exec("make backfill TABLE=refunds MONTH=2026-03", "Done. PASS=12")],
         "assistant": "Backfilled refunds for March."},
    ]),
    (22, "19:30", [
        {"user": "Backfill the payments table for March.",
         "tools": [_exec("make backfill TABLE=payments MONTH=2026-03", "Done. PASS=9")],
         "assistant": "Backfilled payments for March."},
    ]),
    (23, "10:05", [
        {"user": "My manager moved the cutover once more, to April 24. Last slip, she says.",
         "assistant": "Cutover now April 24."},
    ]),
    (23, "19:45", [
        {"user": "Backfill the invoices table for March.",
         "tools": [_exec("make backfill TABLE=invoices MONTH=2026-03", "Done. PASS=7")],
         "assistant": "Backfilled invoices for March."},
    ]),
    (27, "11:20", [
        {"user": "Settled the events question: we split events by day. Per-customer "
                 "partitions would have meant 40k tiny tables.",
         "assistant": "Events will be range-partitioned by day."},
    ]),
    (28, "15:30", [
        {"user": "Refresh the currency rates table.",
         "tools": [_exec("make rates", "loaded 168 rates for 2026-04-16")],
         "assistant": "Refreshed currency_rates: 168 rates loaded."},
    ]),
    (29, "09:30", [
        {"user": "What was the dbt syntax to run a model and its children again?",
         "assistant": "dbt run -s model_name+ runs the model and everything downstream."},
    ]),
]
ETL_HARNESS: list[tuple[int, str, list[Turn]]] = [
    (10, "13:00", [
        {"user": "Run the full dbt build.", "reminder": "<user_instructions>Follow AGENTS.md."
         "</user_instructions>",
         "tools": [_exec("dbt build", DBT_DUMP)], "interrupted": True}]),
    (17, "12:00", [
        {"user": "Run the full dbt build.",
         "tools": [_exec("dbt build --target prod", DBT_DUMP)],
         "assistant": "dbt build passed: 142 models, 388 tests."}]),
]
ETL_ROUTINE: list[list[Turn]] = [
    [{"user": "Run the staging models.", "tools": [_exec("dbt run -s staging", "Done. PASS=31")],
      "assistant": "All 31 staging models ran."}],
    [{"user": "What's the row count of stg_customers?", "assistant": "stg_customers has "
      "48,112 rows."}],
    [{"user": "Add a not_null test on orders.customer_id.", "assistant": "Added the test to "
      "models/staging/orders.yml."}],
    [{"user": "Why did the rpt_revenue model take 4 minutes?", "assistant": "It joins "
      "fct_order_lines without the date filter; adding it brings it to 40 s."}],
    [{"user": "Add that date filter.", "assistant": "Added the date filter to rpt_revenue."}],
    [{"user": "Format the SQL in models/marts.", "tools": [_exec("sqlfluff fix models/marts",
      "==== finding fixable violations ====\n4 files fixed")], "assistant": "sqlfluff fixed 4 "
      "files."}],
    [{"user": "Check yesterday's nightly log.", "tools": [_exec("tail -3 logs/nightly.log",
      "nightly ok 2026-04-09 06:14")], "assistant": "Yesterday's nightly finished OK at 06:14."}],
    [{"user": "List the sources without freshness checks.", "assistant": "stripe.payouts and "
      "zendesk.tickets have no freshness checks."}],
    [{"user": "Add freshness checks for those two.", "assistant": "Added warn after 12 h, "
      "error after 24 h."}],
    [{"user": "Explain this window function.", "assistant": "It numbers each customer's "
      "orders by date, so rn = 1 is the first order."}],
    [{"user": "Rename dim_cust to dim_customers.", "assistant": "Renamed the model and 7 "
      "references."}],
    [{"user": "Show the disk use of the warehouse.", "tools": [_exec("psql -c '\\l+'",
      "analytics | 182 GB")], "assistant": "analytics uses 182 GB."}],
    [{"user": "Vacuum the staging schema.", "tools": [_exec("make vacuum SCHEMA=staging",
      "VACUUM")], "assistant": "Vacuumed staging."}],
    [{"user": "Update the README with the make targets.", "assistant": "Listed the 9 make "
      "targets in the README."}],
    [{"user": "Which models have no description?", "assistant": "11 models have no "
      "description, mostly in marts/finance."}],
    [{"user": "Add descriptions to the finance marts.", "assistant": "Added descriptions to "
      "6 finance models."}],
    [{"user": "Is the crontab still running the rates job at 05:00?", "tools": [_exec(
      "crontab -l | grep rates", "0 5 * * * make -C /srv/tidewater rates")],
      "assistant": "Yes, at 05:00 every day."}],
    [{"user": "Compile the docs site.", "tools": [_exec("dbt docs generate", "Catalog "
      "written")], "assistant": "The dbt docs are generated."}],
    [{"user": "Drop the temp tables from last week.", "assistant": "Dropped 14 tmp_ tables."}],
    [{"user": "How big is the events table now?", "assistant": "events holds 1.9 billion rows, "
      "611 GB."}],
    [{"user": "Run the tests on the marts.", "tools": [_exec("dbt test -s marts",
      "Done. PASS=120")], "assistant": "All 120 mart tests pass."}],
    [{"user": "Bump dbt-postgres to 1.8.2 in requirements.", "assistant": "Pinned "
      "dbt-postgres==1.8.2."}],
]
# fmt: on


def etl_month() -> Month:
    checks = [
        *_common(
            "Registered adapter: postgres=1.8.2|Found 142 models, 388 data tests|"
            "Concurrency: 4 threads",
            "Tq8mZ2vL9pXw4Rb",
            "port the cron entries",
            [
                "orchestration/dagster",
                "models/staging/orders.yml",
                "logs/nightly.log",
                "warehouse.internal",
            ],
            ["<environment_context", "<user_instructions"],
        ),
        {
            "id": "convention-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["UTC", "_utc"],
            "description": "The convention stated once (timestamps in "
            "UTC, _utc suffix) is in The Bond",
        },
        {
            "id": "rule-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["no backfill", "backfills only outside", "08:00 and 18:00", "08:00-18:00"],
            "description": "The rule stated once (no prod backfills 08:00-18:00 CET) is in "
            "The Bond",
        },
        {
            "id": "person-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["Ines Duarte", "Ines"],
            "description": "The manager, named once (Ines Duarte), is in The Bond",
        },
        {
            "id": "person-role-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["manager", "manages the data platform"],
            "description": "Ines's role (data platform manager) is in The Bond",
        },
        {
            "id": "deadline-current",
            "kind": "must_contain",
            "section": "active_context",
            "any": ["April 24", "24 April", "Apr 24"],
            "description": "The newest cutover date (April 24) is in Active Context",
        },
        {
            "id": "deadline-old-not-current",
            "kind": "must_not_be_current",
            "any": ["April 10", "April 17", "10 April", "17 April"],
            "description": "The cutover's old dates are not stated as current",
        },
        {
            "id": "deadline-bootstrap",
            "kind": "must_contain",
            "section": "bootstrap",
            "any": ["April 24", "24 April", "Apr 24"],
            "description": "The newest cutover date is in the bootstrap block",
        },
        {
            "id": "decision-current",
            "kind": "must_contain",
            "section": "active_context",
            "at": "2026-04-22T23:00:00Z",
            "any": ["cron", "crontab"],
            "description": "The day after, the reversed decision (stay on cron plus make) is in "
            "Active Context",
        },
        {
            "id": "decision-old-not-current",
            "kind": "must_not_be_current",
            "any": ["Dagster"],
            "past_markers": [
                "scrap",
                "scrapped",
                "removed",
                "not worth",
                "dropped",
                "no longer",
                "instead of",
            ],
            "description": "The dropped choice (Dagster) is not stated as current",
        },
        {
            "id": "duplicates-open",
            "kind": "must_contain",
            "section": "active_context",
            "at": "2026-04-14T23:00:00Z",
            "any": ["duplicate", "duplicates"],
            "description": "Before its fix, the duplicate rows problem is in Active Context",
        },
        {
            "id": "duplicates-fixed",
            "kind": "must_not_be_current",
            "any": ["duplicates rows", "duplicate rows"],
            "past_markers": ["fixed", "merge", "zero duplicates", "0 duplicate", "no longer"],
            "description": "After the fix, the duplicates are not stated as a current problem",
        },
        {
            "id": "question-open",
            "kind": "must_contain",
            "section": "curiosity_gaps",
            "at": "2026-04-20T23:00:00Z",
            "any": ["partition", "partitioned", "by day or by customer"],
            "description": "Until answered, the partitioning question is in Curiosity Gaps",
        },
        {
            "id": "question-answered",
            "kind": "must_not_contain",
            "section": "curiosity_gaps",
            "any": ["partition", "partitioned", "by day or by customer"],
            "description": "Once answered (split by day), the question left Curiosity Gaps",
        },
        {
            "id": "forget-memory",
            "kind": "must_not_contain",
            "any": ["burnout", "sick leave"],
            "description": "The forget request was carried out: Ravi's sick leave is not in "
            "MEMORY.md",
        },
        {
            "id": "forget-search",
            "kind": "not_searchable",
            "query": "Ravi sick leave burnout",
            "any": ["burnout", "sick leave"],
            "description": "Search no longer finds Ravi's sick leave",
        },
        {
            "id": "forget-recorded",
            "kind": "forgotten",
            "min": 1,
            "description": "At least one crystal was forgotten (the request was carried out)",
        },
        {
            "id": "repeat-seen-twice",
            "kind": "seen_on_dates",
            "phrase": "Refresh the currency rates table",
            "min": 2,
            "description": "The exchange repeated on April 28 is seen on two dates",
        },
        {
            "id": "topic-weeks-later",
            "kind": "searchable",
            "at": "2026-04-29T09:00:00Z",
            "query": "dbt run a model and its children",
            "any": ["stg_orders+", "plus selector"],
            "description": "Weeks later, the dbt plus-selector answer is found by search",
        },
        {
            "id": "skill-backfills",
            "kind": "must_contain",
            "section": "emerging_skills",
            "any": ["backfill", "backfills", "backfilling"],
            "description": "Four table backfills became a skill",
        },
    ]
    return Month(
        "captured_etl",
        "A month of Codex CLI rollouts on tidewater, a dbt and Postgres pipeline: a cutover "
        "moved twice, a manager named once then by role, Dagster started then dropped, "
        "duplicate rows fixed, a partitioning question answered, a forget request, a password "
        "in a tool result, tool dumps, two thirds routine.",
        "codex",
        "tidewater",
        date(2026, 4, 1),
        30,
        [*ETL_STORY, *ETL_HARNESS],
        ETL_ROUTINE,
        [],
        checks,
    )


# --- captured_book: Claude Code on a book manuscript ----------------------------------------

# fmt: off
BOOK_STORY: list[tuple[int, str, list[Turn]]] = [
    (4, "09:30", [
        {"user": "How the manuscript is laid out: one Markdown file per chapter, named "
                 "NN-slug.md, and every figure goes in figures/ as SVG.",
         "ide_file": "manuscript/01-why-bees.md",
         "assistant": "Understood: chapters as NN-slug.md, figures as SVG in figures/."},
        {"user": "Helen Achebe at Fernleaf Press is my editor. She wants the full manuscript "
                 "by May 15.",
         "assistant": "Noted: manuscript due to Helen Achebe (Fernleaf Press) on May 15."},
    ]),
    (5, "10:45", [
        {"user": "A hard rule: quotations are never edited. They stay word for word, with the "
                 "page number of the source.",
         "assistant": "Understood: quotes verbatim, with their page number."},
    ]),
    (5, "15:20", [
        {"user": "The working title is The Quiet Hive. Put it on the title page.",
         "ide_file": "manuscript/00-title.md",
         "assistant": "Set the title page to The Quiet Hive."},
    ]),
    (6, "11:00", [
        {"user": "How did we set up the citation style? I need it for the notes.",
         "tools": [_read("{root}/build.sh", "pandoc manuscript/*.md --citeproc "
                         "--bibliography refs.bib --csl chicago-author-date.csl -o book.pdf")],
         "assistant": "build.sh runs pandoc with --citeproc, refs.bib and "
                      "chicago-author-date.csl."},
    ]),
    (7, "14:10", [
        {"user": "The PDF build is broken on the figures again.",
         "tools": [_bash("./build.sh", PANDOC_DUMP, error=True)],
         "assistant": "pandoc cannot convert the SVG figures: rsvg-convert is missing. I'll "
                      "look into the build tomorrow morning."},
    ]),
    (8, "10:20", [
        {"user": "Open question: do I need permission to quote about 300 words from Seeley's "
                 "Honeybee Democracy?",
         "assistant": "That depends on the publisher's fair-use policy; it is still open."},
    ]),
    (11, "16:40", [
        {"user": "My sister was diagnosed with MS last week, so I may write less this month.",
         "assistant": "I'm sorry to hear that. We can plan lighter weeks."},
    ]),
    (12, "09:10", [
        {"user": "Helen says the manuscript can come on May 29 instead.",
         "assistant": "Manuscript due May 29."},
    ]),
    (13, "10:30", [
        {"user": "Check that the Zotero sync works.",
         "tools": [_bash("cat ~/.config/zotero-sync.env",
                         "ZOTERO_USER=9921734\nZOTERO_API_KEY=P9xkQ2mWv7LrT4nB8sYc1dHe")],
         "assistant": "The sync config has your user id and an API key; the sync works."},
    ]),
    (14, "11:30", [
        {"user": "Installed librsvg and the PDF builds again, figures included.",
         "tools": [_bash("./build.sh", "book.pdf written (212 pages)")],
         "assistant": "Confirmed: book.pdf builds with all figures, 212 pages."},
    ]),
    (15, "09:05", [
        {"user": "Rebuild the PDF.", "tools": [_bash("./build.sh", "book.pdf written (212 "
                                                      "pages)")],
         "assistant": "Rebuilt book.pdf: 212 pages."},
    ]),
    (18, "10:00", [
        {"user": "Please let what I said about my sister's health go; I'd rather it didn't "
                 "stick around in your memory.",
         "assistant": "Understood."},
    ]),
    (19, "09:40", [
        {"user": "Proofread chapter 3.", "ide_file": "manuscript/03-the-colony.md",
         "assistant": "Proofread chapter 3: 14 fixes, mostly commas."},
    ]),
    (20, "09:35", [
        {"user": "Proofread chapter 4.", "ide_file": "manuscript/04-swarming.md",
         "assistant": "Proofread chapter 4: 9 fixes."},
    ]),
    (21, "10:15", [
        {"user": "New title. We call it Bees on the Roof; the old one sounded like a thriller.",
         "ide_file": "manuscript/00-title.md",
         "assistant": "The title page now says Bees on the Roof."},
        {"user": "Proofread chapter 5.", "assistant": "Proofread chapter 5: 11 fixes."},
    ]),
    (22, "09:50", [
        {"user": "Proofread chapter 6.", "ide_file": "manuscript/06-winter.md",
         "assistant": "Proofread chapter 6: 7 fixes."},
    ]),
    (25, "10:05", [
        {"user": "My editor moved the date again: June 12 for the full manuscript.",
         "assistant": "Manuscript due June 12."},
    ]),
    (26, "14:00", [
        {"user": "Fernleaf's rights desk answered: anything over 250 words needs written "
                 "permission, so the Seeley passage gets trimmed to 200 words.",
         "assistant": "Trimmed the Seeley passage in chapter 2 to 200 words."},
    ]),
    (28, "09:05", [
        {"user": "Rebuild the PDF.", "tools": [_bash("./build.sh", "book.pdf written (212 "
                                                      "pages)")],
         "assistant": "Rebuilt book.pdf: 212 pages."},
    ]),
    (29, "11:40", [
        {"user": "Which citation style did we pick, and where is it set?",
         "assistant": "Chicago author-date, set in build.sh with --csl."},
    ]),
]
BOOK_HARNESS: list[tuple[int, str, list[Turn]]] = [
    (7, "17:00", [
        {"command": "/wordcount manuscript",
         "assistant": "The manuscript has 61,240 words in 9 chapters."}]),
    (13, "15:00", [
        {"bash": {"command": "ls figures | wc -l", "output": "23"}},
        {"user": "Export chapter 2 to Word for Helen.", "api_error": "API Error: Request was "
         "aborted."}]),
    (20, "16:30", [
        {"user": "Check every quote against its source page.",
         "tools": [_bash("grep -c '^>' manuscript/*.md", "manuscript/02-history.md:14")],
         "interrupted": True}]),
    (27, "15:10", [
        {"compact": "The user is writing a book on urban beekeeping in Markdown; recent "
                    "work: proofreading chapters 3 to 6, a new title.",
         "user": "Which chapters still have TODO markers?",
         "subagent": {"type": "Explore", "task": "Find TODO markers",
                      "prompt": "List the chapters with TODO markers",
                      "answer": "07-pests.md and 09-harvest.md have TODO markers."},
         "assistant": "Chapters 7 and 9 still have TODO markers."}]),
]
BOOK_ROUTINE: list[list[Turn]] = [
    [{"user": "Fix the heading levels in chapter 2.", "assistant": "Chapter 2 now uses ## for "
      "sections throughout."}],
    [{"user": "Count the words in chapter 5.", "tools": [_bash("wc -w "
      "manuscript/05-foraging.md", "7120 manuscript/05-foraging.md")], "assistant": "Chapter 5 "
      "has 7,120 words."}],
    [{"user": "Find a synonym for 'buzzing' that isn't cute.", "assistant": "Try 'humming' "
      "or 'droning'."}],
    [{"user": "Add alt text to the figures in chapter 1.", "assistant": "Added alt text to 4 "
      "figures."}],
    [{"user": "Is 'honeybee' one word in Chicago style?", "assistant": "Yes, 'honeybee' is "
      "one word."}],
    [{"user": "Number the figures in chapter 3.", "assistant": "Figures 3.1 to 3.5 are "
      "numbered."}],
    [{"user": "Turn these notes into a paragraph.", "assistant": "Here is a paragraph on "
      "the waggle dance from your notes."}],
    [{"user": "Check the bibliography for duplicates.", "assistant": "Two duplicate "
      "entries: seeley2010 and seeley2010a."}],
    [{"user": "Merge those two entries.", "assistant": "Merged them into seeley2010."}],
    [{"user": "Make the epigraph italic.", "assistant": "The epigraph is italic now."}],
    [{"user": "What's the reading level of chapter 4?", "assistant": "About grade 9 on "
      "Flesch-Kincaid."}],
    [{"user": "Shorten the intro of chapter 6.", "assistant": "Cut the intro from 420 to 260 "
      "words."}],
    [{"user": "Add a glossary entry for 'brood'.", "assistant": "Added 'brood' to the "
      "glossary."}],
    [{"user": "Fix the broken cross-reference in chapter 8.", "assistant": "The "
      "cross-reference now points to figure 8.2."}],
    [{"user": "Spell-check chapter 7.", "tools": [_bash("aspell list < "
      "manuscript/07-pests.md | sort -u", "varroa\nnosema")], "assistant": "Only varroa and "
      "nosema, both correct."}],
    [{"user": "Add those to the dictionary.", "assistant": "Added varroa and nosema."}],
    [{"user": "Build the EPUB.", "tools": [_bash("./build.sh epub", "book.epub written")],
      "assistant": "book.epub is built."}],
    [{"user": "Move the sidebar on queens to chapter 3.", "assistant": "Moved the sidebar."}],
    [{"user": "Which chapter is the longest?", "assistant": "Chapter 5, with 7,120 words."}],
    [{"user": "Replace straight quotes with curly ones.", "assistant": "Replaced 312 quote "
      "marks."}],
    [{"user": "Add the acknowledgements page.", "assistant": "Added 10-acknowledgements.md."}],
    [{"user": "Check the captions end with a period.", "assistant": "3 captions fixed."}],
]
# fmt: on


def book_month() -> Month:
    checks = [
        *_common(
            "rsvg-convert: createProcess|See the LaTeX manual or LaTeX Companion|l.412",
            "P9xkQ2mWv7LrT4nB8sYc1dHe",
            "look into the build tomorrow",
            ["chicago-author-date.csl", "refs.bib", "build.sh", "NN-slug.md"],
            ["<command-", "<bash-", "[Request interrupted"],
        ),
        {
            "id": "convention-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["NN-slug.md", "one Markdown file per chapter", "figures as SVG", "SVG"],
            "description": "The layout convention stated once (a file per chapter, SVG figures) "
            "is in The Bond",
        },
        {
            "id": "rule-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": [
                "quotations are never edited",
                "quotes verbatim",
                "word for word",
                "never edited",
            ],
            "description": "The rule stated once (quotations never edited) is in The Bond",
        },
        {
            "id": "person-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["Helen Achebe", "Helen"],
            "description": "The editor, named once (Helen Achebe), is in The Bond",
        },
        {
            "id": "person-role-bond",
            "kind": "must_contain",
            "section": "bond",
            "any": ["editor"],
            "description": "Helen's role (editor) is in The Bond",
        },
        {
            "id": "deadline-current",
            "kind": "must_contain",
            "section": "active_context",
            "any": ["June 12", "12 June", "Jun 12"],
            "description": "The newest manuscript date (June 12) is in Active Context",
        },
        {
            "id": "deadline-old-not-current",
            "kind": "must_not_be_current",
            "any": ["May 15", "May 29", "15 May", "29 May"],
            "description": "The manuscript's old dates are not stated as current",
        },
        {
            "id": "deadline-bootstrap",
            "kind": "must_contain",
            "section": "bootstrap",
            "any": ["June 12", "12 June", "Jun 12"],
            "description": "The newest manuscript date is in the bootstrap block",
        },
        {
            "id": "decision-current",
            "kind": "must_contain",
            "section": "active_context",
            "at": "2026-05-22T23:00:00Z",
            "any": ["Bees on the Roof"],
            "description": "The day after, the new title (Bees on the Roof) is in Active Context",
        },
        {
            "id": "decision-old-not-current",
            "kind": "must_not_be_current",
            "any": ["The Quiet Hive", "Quiet Hive"],
            "description": "The old title (The Quiet Hive) is not stated as current",
        },
        {
            "id": "build-open",
            "kind": "must_contain",
            "section": "active_context",
            "at": "2026-05-12T23:00:00Z",
            "any": ["PDF build", "rsvg-convert", "figures"],
            "description": "Before its fix, the broken PDF build is in Active Context",
        },
        {
            "id": "build-fixed",
            "kind": "must_not_be_current",
            "any": ["build is broken", "broken on the figures"],
            "past_markers": ["fixed", "installed", "builds again", "no longer"],
            "description": "After the fix, the PDF build is not stated as broken",
        },
        {
            "id": "question-open",
            "kind": "must_contain",
            "section": "curiosity_gaps",
            "at": "2026-05-20T23:00:00Z",
            "any": ["permission", "Seeley", "300 words"],
            "description": "Until answered, the quote permission question is in Curiosity Gaps",
        },
        {
            "id": "question-answered",
            "kind": "must_not_contain",
            "section": "curiosity_gaps",
            "any": ["permission", "Seeley", "300 words"],
            "description": "Once answered (trim to 200 words), the question left Curiosity Gaps",
        },
        {
            "id": "forget-memory",
            "kind": "must_not_contain",
            "any": ["diagnosed", "sister"],
            "description": "The forget request was carried out: the sister's diagnosis is not in "
            "MEMORY.md",
        },
        {
            "id": "forget-search",
            "kind": "not_searchable",
            "query": "sister diagnosed MS",
            "any": ["diagnosed"],
            "description": "Search no longer finds the sister's diagnosis",
        },
        {
            "id": "forget-recorded",
            "kind": "forgotten",
            "min": 1,
            "description": "At least one crystal was forgotten (the request was carried out)",
        },
        {
            "id": "repeat-seen-twice",
            "kind": "seen_on_dates",
            "phrase": "Rebuild the PDF",
            "min": 2,
            "description": "The exchange repeated on May 28 is seen on two dates",
        },
        {
            "id": "topic-weeks-later",
            "kind": "searchable",
            "at": "2026-05-29T11:00:00Z",
            "query": "citation style set up",
            "any": ["chicago-author-date.csl", "citeproc"],
            "description": "Weeks later, the citation setup is found by search",
        },
        {
            "id": "skill-proofreading",
            "kind": "must_contain",
            "section": "emerging_skills",
            "any": ["proofread", "proofreading", "proofreads"],
            "description": "Four chapter proofreads became a skill",
        },
    ]
    return Month(
        "captured_book",
        "A month of Claude Code sessions on a book manuscript (Markdown, pandoc): a "
        "deadline moved twice, an editor named once then by role, a title changed, a broken "
        "PDF build fixed, a permissions question answered, a forget request, an API key in a "
        "tool result, IDE and harness noise, two thirds routine.",
        "claude-code",
        "bees-book",
        date(2026, 5, 4),
        28,
        [*BOOK_STORY, *BOOK_HARNESS],
        BOOK_ROUTINE,
        ["manuscript/02-history.md", "manuscript/05-foraging.md", "refs.bib", "build.sh"],
        checks,
    )


# --- rendering -----------------------------------------------------------------------------


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _table(header: str, fields: dict[str, object]) -> str:
    return header + "\n" + "".join(f"{key} = {_value(value)}\n" for key, value in fields.items())


def _repeated(month: Month) -> set[str]:
    """The prompts the storyline repeats on another day: written the same both times."""
    prompts = [turn.get("user") for _, _, turns in month.story for turn in turns]
    return {p for p in prompts if p and prompts.count(p) > 1}


def _turns(month: Month, turns: list[Turn], rng: random.Random) -> list[Turn]:
    """The turns with the month's project root filled in and, in Claude Code, IDE noise
    (except on an exchange the storyline repeats: it must be the same exchange again)."""
    root = f"{{home}}/code/{month.project}"
    repeated = _repeated(month)
    out = []
    for turn in turns:
        turn = json.loads(json.dumps(turn).replace("{root}", root))
        noisy = "user" in turn and "api_error" not in turn and turn["user"] not in repeated
        if month.agent == "claude-code" and noisy:
            if month.ide_files and "ide_file" not in turn and rng.random() < 0.5:
                turn["ide_file"] = rng.choice(month.ide_files)
            if rng.random() < 0.3:
                turn["reminder"] = rng.choice(REMINDERS).replace("{root}", root)
        out.append(turn)
    return out


def _session(month: Month, at: str, turns: list[Turn]) -> str:
    head = f'[[events]]\nat = "{at}"\n[events.session]\n'
    head += f'agent = "{month.agent}"\nproject = "{month.project}"\nbranch = "main"\n'
    parts = [head]
    for turn in turns:
        plain = {k: v for k, v in turn.items() if k not in ("tools", "subagent")}
        parts.append(_table("[[events.session.turns]]", plain))
        if "subagent" in turn:
            parts.append(_table("[events.session.turns.subagent]", turn["subagent"]))
        for tool in turn.get("tools", []):
            parts.append(_table("[[events.session.turns.tools]]", tool))
    return "".join(parts)


def sessions(month: Month, rng: random.Random) -> list[tuple[str, list[Turn]]]:
    """(end time, turns) of every session: the storyline and the scattered routine."""
    first = month.first
    out: list[tuple[str, list[Turn]]] = []
    for day, hhmm, turns in month.story:
        moment = first + timedelta(days=day - first.day)
        out.append((f"{moment.isoformat()}T{hhmm}:00Z", _turns(month, turns, rng)))
    workdays = [
        first + timedelta(days=n)
        for n in range(month.days)
        if (first + timedelta(days=n)).weekday() < 5
    ]
    taken = {at for at, _ in out}
    routine = [turn for turns in month.routine for turn in turns]
    rng.shuffle(routine)
    # Two routine exchanges for each storyline one, in sessions of one to three turns.
    story_turns = sum(len(turns) for _, _, turns in month.story)
    wanted = 2 * story_turns
    pool = [routine[i % len(routine)] for i in range(wanted)]
    while pool:
        size = min(len(pool), rng.randint(1, 3))
        chunk, pool = pool[:size], pool[size:]
        while True:
            workday = rng.choice(workdays)
            hour, minute = rng.randint(9, 17), rng.choice((5, 25, 50))
            at = f"{workday.isoformat()}T{hour:02d}:{minute:02d}:00Z"
            if at not in taken:
                break
        taken.add(at)
        out.append((at, _turns(month, chunk, rng)))
    return sorted(out, key=lambda item: item[0])


def render(month: Month) -> str:
    """A month's whole scenario file."""
    rng = random.Random(f"{SEED}/{month.name}")
    last = month.first + timedelta(days=month.days - 1)
    head = (
        "# Generated by make_sessions.py (seeded, deterministic): edit the script and rerun it.\n"
        f'name = "{month.name}"\n'
        f"description = {_value(month.description)}\n"
        f'start = "{month.first.isoformat()}T00:00:00Z"\n'
        f'end = "{last.isoformat()}T23:30:00Z"\n\n'
        + _table(
            "[schedule]", {"dream_times": ["23:00"], "force": True, "consolidate_every_minutes": 60}
        )
    )
    parts = [head]
    parts += [_session(month, at, turns) for at, turns in sessions(month, rng)]
    parts += [_table("[[checks]]", check) for check in month.checks]
    return "\n".join(parts)


MONTHS = (api_month, etl_month, book_month)

if __name__ == "__main__":
    for make in MONTHS:
        month = make()
        target = Path(__file__).parent / "captured" / f"{month.name.removeprefix('captured_')}.toml"
        target.write_text(render(month), encoding="utf-8")
        print(f"wrote {target}")
