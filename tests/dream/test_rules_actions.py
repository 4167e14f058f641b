"""Actions: what a note reports or an exchange did, once a day, its object in its own words."""

from __future__ import annotations

import pytest

from dreamer.dream.rules.actions import parse


def test_a_report_gives_its_verb_object_and_value():
    said = parse("Upgraded celery to 5.4 in the worker image.")
    assert said is not None
    assert (said.verb, said.tokens, said.valued) == ("upgrading", ("celery",), True)


def test_a_request_is_an_action_only_when_the_verb_is_reported_somewhere():
    assert parse("Translate chapter 2 into German.") is None  # no "Translated ..." known
    said = parse("Translate chapter 2 into German.", known={"translating"})
    assert said is not None and said.words == ["chapter"] and said.tokens == ("chapter", "2")


@pytest.mark.parametrize(
    "text",
    [
        "I'll bump the lockfile tomorrow.",  # a promise
        "I will migrate the orders table next.",  # a promise, spelled out
        "Should we migrate the orders table?",  # a question
        "Migrate the orders table?",  # a question, bare
        "Partners asked for more time.",  # a noun leads
        "Billing service returns 500 again.",  # no verb form leads
        "Reviewing: done.",  # an -ing word with no object
    ],
)
def test_no_action_in_promises_questions_or_statements(text):
    assert parse(text, known={"migrating", "bumping", "partnering", "reviewing"}) is None


def test_the_object_ends_at_its_preposition_and_drops_determiners():
    said = parse("Reviewed the PR #31 for the payments team")
    assert said is not None and said.tokens == ("PR", "31")


@pytest.mark.parametrize(
    "text",
    [
        "Please translate chapter 4.",
        "Let's translate chapter 4 into Dutch.",
        "Translate chapter 4.",
    ],
)
def test_a_request_may_open_with_please_or_lets(text):
    said = parse(text, known={"translating"})
    assert said is not None and said.tokens == ("chapter", "4")
