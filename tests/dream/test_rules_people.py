"""People: someone named once mid-sentence with a role (the person and the role, where they work
beside them), never an organisation taken for a person. Each verb of ``IN_CHARGE`` has a case."""

from __future__ import annotations

import pytest

from dreamer.dream.rules import people

IN_CHARGE = {
    "manages": ("Rosa Lindqvist manages the print shop; she signs the orders.", "manager"),
    "leads": ("Loop in Priya Raman, she leads QA.", "lead"),
    "heads": ("Kofi Mensah heads the kitchen and he plans the menus.", "head"),
    "runs": ("Tomás Reyes runs the night shift at the depot, and he hates surprises.", "lead"),
    "supervises": ("Anna Kowalczyk supervises the lab; her word is final.", "supervisor"),
    "oversees": ("Ravi Menon oversees the renovation. He visits on site.", "supervisor"),
    "coordinates": ("Elif Demir coordinates the volunteers, she sends the rota.", "coordinator"),
    "chairs": ("Sunita Rao chairs the parents committee. Her term ends in June.", "chair"),
}


def test_every_verb_has_a_case():
    assert set(IN_CHARGE) == set(people.IN_CHARGE)


@pytest.mark.parametrize("verb", sorted(IN_CHARGE))
def test_someone_named_with_what_they_are_in_charge_of(verb):
    text, role = IN_CHARGE[verb]
    [person] = people.named(text)
    assert person["role"] == role
    line = people.described(person)
    assert line.startswith(person["name"] + f" {verb} ")
    assert line.endswith(".") and "," not in line and ";" not in line


@pytest.mark.parametrize(
    "text, line",
    [
        (
            "Dana Whitfield at Kestrel Books is my publicist. She reads the draft in May.",
            "Dana Whitfield (Kestrel Books) is the user's publicist.",
        ),
        (
            "Tomás Reyes (my landlord at Harbour Lets) says the boiler is fine.",
            "Tomás Reyes (Harbour Lets) is the user's landlord.",
        ),
        (
            "Ask my editor at Kestrel Books, Dana Whitfield, about the cover.",
            "Dana Whitfield (Kestrel Books) is the user's editor.",
        ),
        (
            "My supervisor, Anna Kowalczyk, signs off the ethics form.",
            "Anna Kowalczyk is the user's supervisor.",
        ),
    ],
)
def test_someone_named_mid_sentence_with_a_role_and_where_they_work(text, line):
    [person] = people.named(text)
    assert people.described(person) == line


@pytest.mark.parametrize(
    "text",
    [
        "Harbour Lets manages the building; they answer within a week.",  # no she or he
        "I met Dev Patel at Northwind, my old employer.",  # the employer is no person
        "Dana Whitfield at Kestrel Books is my publicist.",
    ],
)
def test_an_organisation_is_never_taken_for_a_person(text):
    names = [p["name"] for p in people.named(text)]
    assert not any(name in ("Harbour Lets", "Northwind", "Kestrel Books") for name in names)
