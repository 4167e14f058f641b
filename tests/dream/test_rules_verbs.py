"""Verb forms: a reported verb's -ing form, a bare verb's candidates, the generic verbs."""

from __future__ import annotations

import pytest

from dreamer.dream.rules import verbs


@pytest.mark.parametrize(
    ("word", "form"),
    [
        ("Deployed", "deploying"),
        ("copied", "copying"),
        ("rewrote", "rewriting"),
        ("proofread", "proofreading"),
        ("misread", "misreading"),
        ("unset", "unsetting"),
        ("prepaid", "prepaying"),
        ("overpaid", "overpaying"),
        ("undertook", "undertaking"),
        ("reviewing", "reviewing"),
    ],
)
def test_a_reported_verb_has_its_ing_form(word, form):
    assert verbs.gerund(word) == form


@pytest.mark.parametrize("word", ["asset", "thread", "bread", "offset", "need", "wedding", "ran"])
def test_a_noun_or_a_short_word_is_no_reported_verb(word):
    assert verbs.gerund(word) is None


@pytest.mark.parametrize(
    ("word", "form"),
    [
        ("bump", "bumping"),
        ("migrate", "migrating"),
        ("format", "formatting"),
        ("translate", "translating"),
        ("review", "reviewing"),
        ("fix", "fixing"),
        ("proofread", "proofreading"),
    ],
)
def test_a_bare_verb_offers_its_ing_form(word, form):
    assert form in verbs.imperative_gerunds(word)


@pytest.mark.parametrize("word", ["I'll", "it's", "v2", "morning", "updated", "a"])
def test_no_ing_form_for_what_is_no_bare_verb(word):
    assert verbs.imperative_gerunds(word) == ()


@pytest.mark.parametrize("form", sorted(verbs.GENERIC))
def test_each_generic_verb_is_an_ing_form_a_report_can_lead_with(form):
    assert verbs.gerund(form) == form  # else the entry could never match a report
