"""Active Context: what a line establishes (a problem, a fix, a choice, a date) outranks the
steps of work; an open problem stays until its fix; a captured step of work is chatter."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dreams import offline_dream

from dreamer.dream.rules.active import DECISIONS, chatter, establishes, label
from dreamer.store import NewCrystal

PROBLEMS = [
    "The nightly export to the accounting system keeps timing out.",
    "Still can't get the staging deploy green.",
    "The invoice job is flaky on Mondays.",
    "The search page times out for shops with 10k products.",
    "The worker won't start after the upgrade.",
    "Login doesn't work on Safari anymore.",
    "The CSV import duplicated rows in the ledger.",
    "Can't get the printer to pair with the new laptop.",
    "The payroll sync is not working since Friday.",
    "The import wrote duplicate records for every refund.",
]


@pytest.mark.parametrize("text", PROBLEMS)
def test_a_problem_said_as_it_is_lived_is_a_friction(text):
    assert label(text) == "Friction"
    assert establishes(text, "user")


FIXES = [
    "Found it: the flaky invoice job raced the cache warmup.",
    "The export no longer times out since the index went in.",
    "The staging deploy builds again after the certificate renewal.",
    "Fixed the duplicated rows: the import now upserts.",
    "Solved: the worker failed on a missing env var.",
    "Login works now on Safari.",
    "The payroll sync runs fine again.",
]


@pytest.mark.parametrize("text", FIXES)
def test_a_problem_said_as_fixed_is_a_breakthrough(text):
    assert label(text) == "Breakthrough"


DECIDED = {
    r"decided": "We decided on quarterly invoices for the wholesale customers.",
    r"decision": "Decision: the shop closes on Mondays from June.",
    r"(?:go|going|went) with": "We'll go with the blue paint for the hallway.",
    r"instead": "Use the Lisbon office for the offsite instead of Porto.",
    r"after all": "The archive stays on tape after all.",
    r"no longer": "Ana no longer reviews the payroll runs.",
    r"switch(?:ed|ing)? to": "The team switched to weekly releases.",
    r"scrap(?:ped|ping)?": "Scrap the queue rewrite, use the cron job.",
    r"stay(?:ing)? (?:on|with)": "We stay on the old billing provider this year.",
    r"stick(?:ing)? with": "We're sticking with the paper forms for the fair.",
    r"from now on": "From now on the minutes go to the shared drive.",
    r"settled": "Settled the venue question with the caterer.",
    r"chose|chosen": "The board chose the smaller warehouse.",
    r"rather than": "Ship the app through TestFlight rather than the web build.",
    r"now (?:uses?|says|reads|runs on|lives in)": "The cover now reads Salt and Stone.",
    r"(?:we|we'll|we will) call it": "We'll call it the harbour edition.",
    r"will live in": "The photos will live in the family drive from now.",
}


def test_every_decision_cue_has_a_test():
    assert set(DECIDED) == set(DECISIONS)


@pytest.mark.parametrize("cue", DECISIONS)
def test_a_choice_made_or_reversed_establishes_something(cue):
    text = DECIDED[cue]
    assert establishes(text, "user") and establishes(text, "assistant")


def _part(text, speaker="user", type="experience"):
    return {"text": text, "source": "sessions", "speaker": speaker, "type": type}


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        ("Run the API tests.", "user"),
        ("Add a log line when a refund is created.", "user"),
        ("Add a glossary entry for 'swarm'.", "user"),
        ("All 64 API tests pass.", "assistant"),  # a report of a step, not a fix
        ('Backfilled orders for March. (exec_command "make backfill": 0 error)', "assistant"),
        ("Regenerated the client: three files changed.", "assistant"),
    ],
)
def test_a_captured_step_of_work_is_chatter(text, speaker):
    assert chatter(_part(text, speaker)) is True


def test_what_is_not_a_captured_step_is_weighed_as_before():
    assert chatter({"text": "Run the tests.", "source": "notes", "type": None}) is None
    rule = _part("Never deploy on Fridays.", type="directive")
    assert chatter(rule) is None
    assert chatter(_part("The launch slips to May 4.", "assistant")) is False
    assert chatter(_part("Fixed the broken upload: the bucket policy was wrong.")) is False


REQUESTS = [
    "Add a column for the VAT rate to the report.",
    "Rename the helper to parseAmount.",
    "Format the changed files.",
    "Sort the imports in the billing module.",
    "Write a docstring for the exporter.",
    "Bump the date library.",
]


def _said(ws, at, user, answer):
    ws.index(NewCrystal(user, source="sessions", importance=0.6, at=at, speaker="user"))
    ws.index(NewCrystal(answer, source="sessions", importance=0.5, at=at, speaker="assistant"))


def test_an_open_problem_stays_until_its_fix_arrives(ws, now):
    _said(
        ws,
        now,
        "The nightly export to the accounting system keeps timing out.",
        "The export stopped after 300 s on the ledger query.",
    )
    offline_dream(ws, now + timedelta(hours=1))
    for day, request in enumerate(REQUESTS, start=1):
        _said(ws, now + timedelta(days=day), request, "Done, the change is in.")
        state = offline_dream(ws, now + timedelta(days=day, hours=1))
    active = state.body("active_context")
    assert "keeps timing out" in active  # a week of requests did not crowd it out
    assert "VAT rate" not in active and "parseAmount" not in active  # chatter
    _said(
        ws,
        now + timedelta(days=7),
        "Found it: the nightly export missed an index on the ledger; it no longer times out.",
        "The export to the accounting system finishes in 40 s now.",
    )
    active = offline_dream(ws, now + timedelta(days=7, hours=1)).body("active_context")
    assert "Friction: The nightly export" not in active


def test_a_reversed_choice_outranks_the_days_requests(ws, now):
    _said(ws, now, "Let's build the queue on the message broker.", "Started the broker client.")
    offline_dream(ws, now + timedelta(hours=1))
    _said(
        ws,
        now + timedelta(days=1),
        "Scrap the broker. We stay on the cron job; one less service to run.",
        "Removed the broker client; the jobs stay in the crontab.",
    )
    offline_dream(ws, now + timedelta(days=1, hours=1))
    for hour, request in enumerate(REQUESTS, start=2):
        _said(ws, now + timedelta(days=2, hours=hour), request, "Done, the change is in.")
    active = offline_dream(ws, now + timedelta(days=2, hours=9)).body("active_context")
    assert "cron job" in active or "crontab" in active


def _said_by_the_user(text: str) -> dict:
    return {"source": "sessions", "type": "experience", "speaker": "user", "text": text}


@pytest.mark.parametrize(
    "text",
    [
        "Please keep PR titles under 60 characters.",
        "Use the eu-west bucket for all exports.",
        "Prefer dataclasses over dicts in new code.",
        "Format dates with ISO 8601, not locale strings.",
        "Avoid raw SQL in the views.",
        "Ravi owns the payments service; loop him in on changes there.",
        "Für dieses Projekt nehmen wir uv statt pip.",
        "Для фронтенда мы используем только TypeScript.",
        "Ask me before you touch anything under infra/.",
        "No force-pushes to shared branches, please.",
    ],
    ids=["keep", "use", "prefer", "not", "avoid", "statement", "de", "ru", "before-you", "no"],
)
def test_a_habit_or_a_statement_of_the_user_in_any_language_is_no_chatter(text):
    assert chatter(_said_by_the_user(text)) is False


@pytest.mark.parametrize(
    "text",
    [
        "Run the smoke tests.",
        "Add a retry to the upload.",
        "Rename the export job.",
        "Please run the smoke tests.",
        "Can you spell-check chapter 7?",
        "/wordcount manuscript",
    ],
    ids=["run", "add", "rename", "please", "hyphen", "slash-command"],
)
def test_a_step_of_work_the_user_asks_for_is_chatter(text):
    assert chatter(_said_by_the_user(text)) is True
