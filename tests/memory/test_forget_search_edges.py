"""The edges of a forget query: what it parses to, which crystal it selects when a word is both
written and inside a secret placeholder, how the listing brackets what matched, and the words of
each refusal (the user reads them to decide what to type next)."""

from __future__ import annotations

import pytest

from dreamer.errors import UsageError
from dreamer.memory import forget_search
from dreamer.memory.forget_search import (
    forms_only,
    mark,
    only,
    parse,
    select,
    shared_names,
    too_many,
    which_name,
)


def test_a_query_that_is_not_text_is_refused_naming_its_type():
    with pytest.raises(UsageError, match=r"^a forget query is text \(str\), not int$"):
        parse(12)  # type: ignore[arg-type]


def test_a_query_of_punctuation_only_is_refused_with_an_example():
    with pytest.raises(UsageError, match="has no word to match; name what to forget, e.g."):
        parse("?! --")


def test_the_words_outside_a_quoted_phrase_still_count():
    assert parse('rotates "deploy key"') == (["rotates", "deploy", "key"], ["deploy key"])


def test_a_word_written_outside_a_placeholder_counts_though_the_placeholder_holds_it_too(ws, now):
    ws.note("Keep the secret recipe card next to [secret:password#9f3c]", at=now)
    ws.note("Billing runs nightly", at=now)
    assert [m.crystal.text for m in select(ws.store, "secret recipe")] == [
        "Keep the secret recipe card next to [secret:password#9f3c]"
    ]


def test_a_note_holding_the_word_only_in_a_placeholder_is_passed_over_not_an_end(ws, now):
    ws.note("Deploy key for staging: [secret:github-pat#1a2b]", at=now)
    ws.note("Keep the secret recipe for the Friday pie", at=now)
    assert [m.crystal.id for m in select(ws.store, "secret")] == [2]


def test_a_note_without_the_quoted_phrase_is_passed_over_not_an_end(ws, now):
    ws.note("the key to the deploy shed hangs by the door", at=now)
    ws.note("the deploy key rotates on Mondays", at=now)
    assert [m.crystal.id for m in select(ws.store, '"deploy key"')] == [2]


def test_the_kind_of_a_placeholder_makes_no_match_exact(ws, now):
    # "passwords" is written; "password" only names the placeholder's kind: another form only.
    ws.note("rotate the passwords [secret:password#ab12]", at=now)
    assert [(m.crystal.id, m.exact) for m in select(ws.store, "password")] == [(1, False)]


def test_a_name_written_with_a_curly_apostrophe_is_the_one_asked_for(ws, now):
    ws.note("Kofi’s phone is the old Nokia", at=now)
    ws.note("Kofi Mensah moved to Accra", at=now)
    matches = select(ws.store, "kofi")
    assert [m.crystal.text for m in only(matches, "Kofi's phone")] == [
        "Kofi’s phone is the old Nokia"
    ]


def test_names_are_listed_in_dictionary_order_whatever_their_case():
    texts = ["Kofi MENSAH called twice", "Kofi Mba paid the rent"]
    assert shared_names(texts, ["kofi"]) == {"kofi": ["Kofi Mba", "Kofi MENSAH"]}


def test_a_word_written_in_lower_case_begins_no_name():
    texts = ["met kofi Mensah at the market", "Kofi Boateng sells yams"]
    assert shared_names(texts, ["kofi"]) == {}


def test_a_quoted_phrase_is_marked_whole_in_any_case_and_spacing():
    marked = mark("the Deploy   Key rotates, the deploy key", ["deploy", "key"], ["deploy key"])
    assert marked == "the [Deploy   Key] rotates, the [deploy key]"


def test_an_open_bracket_in_the_text_does_not_stop_the_marking():
    assert mark("[todo: rotate the deploy key", ["deploy"], []) == "[todo: rotate the [deploy] key"
    assert mark("rotate the deploy key]", ["deploy"], []) == "rotate the [deploy] key]"


def test_five_shared_letters_make_two_words_one():
    # "route" and "router" share their first five letters, the least that counts.
    assert mark("the router and the route", ["route"], []) == "the [router] and the [route]"
    assert forget_search.same_word("router", {"route"})
    assert not forget_search.same_word("rout", {"routes"})


def test_the_refusal_of_too_many_matches_says_how_to_go_on():
    assert too_many(5, "address", "crystals", "say all") == (
        "5 crystals hold every word of 'address'; nothing was forgotten: say all, "
        "or narrow the query"
    )


def test_asking_which_name_rewrites_the_first_mention_only():
    names = {"kofi": ["Kofi Boateng", "Kofi Mensah"]}
    assert which_name(names, "kofi phone kofi", "for example") == (
        "'kofi' is part of 2 names here (Kofi Boateng, Kofi Mensah); nothing was forgotten: "
        "say which one, for example 'Kofi Boateng phone kofi'"
    )


def test_the_refusal_of_other_forms_lists_every_id(ws, now):
    ws.note("the neighbour's cat sleeps on the porch", at=now)
    ws.note("a cat flap for the back door", at=now)
    others = select(ws.store, "cats")
    assert forms_only(others, "cats", "ask again") == (
        "no crystal holds every word of 'cats' as written; 2 hold another form of a word "
        "(#1, #2); nothing was forgotten: ask again"
    )
