"""Issue 22: the prose rules at their edges, as a note meets them.

Two rules decide alone whether a bare word or string is a secret. ``owned``: a plain word is
someone's password when their password "is" it and it ends the sentence ("Maya's email password
is kiwi."), with the owner at most 40 characters before the keyword. ``strong``: a string after
"key", "token", "secret" or "password" is generated when it is random-looking, 32+ hex digits, or
letters with at least three digits at an entropy of 4 bits or more and no hyphen. Each case below
sits on one of those edges, once on each side, and asks what a user would see: the note redacted
or left as written.
"""

from __future__ import annotations

import re

import pytest

from dreamer.support.secrets import placeholder, redact


def _id(value: object) -> str:
    """A plain test id: mutmut passes each id back to pytest on a command line."""
    return re.sub(r"[^A-Za-z0-9]+", "-", str(value)).strip("-")[:40]


def _ids(cases: list) -> list[str]:
    return ["-".join(_id(part) for part in (c if isinstance(c, tuple) else (c,))) for c in cases]


def _hidden(note: str, secret: str, kind: str = "password") -> bool:
    text = redact(note).text
    if secret not in text:
        assert placeholder(kind, secret) in text, text
        return True
    assert text == note
    return False


# owned: a plain word said to be someone's password ----------------------------------------------


ENDS = [
    ("Maya's email password is kiwi.", True),  # four letters: the shortest password word
    ("Maya's email password is fig.", False),  # three: too short to tell from prose
    ("my password is bluebird", True),  # the note ends with it
    ("my password is bluebird.", True),
    ("my password is bluebird, Maya says", True),
    ("my password is bluebird; the PIN is elsewhere", True),
    ("my password is bluebird\n- water the plants", True),  # the line ends with it
    ("my password is bluebird\nnext line", True),  # a line end, whatever the next line holds
    ("my password is bluebird\r\nnext line", True),
    ("Maya's email password is bluebird!", True),  # the "!" ends the sentence, not the secret
    ("my password is bluebird?", True),
    ("my password is REDFOX!", True),  # only the "!" goes: the word keeps every letter
    ("my password is bluebird! Then lunch", True),
    ("my password is bluebird!x", False),  # a symbol inside a string: for the made-up rules
    ("my password is bluebird and it works", False),  # more prose follows: not the value
    ("my password is bluebird: the bird", False),
]


@pytest.mark.parametrize(("note", "hidden"), ENDS, ids=_ids(ENDS))
def test_a_word_is_someones_password_only_where_the_sentence_ends(note, hidden):
    assert _hidden(note, "bluebird" if "bluebird" in note else note.split()[-1][:-1]) is hidden


DESCRIBING = [
    "My password is Wrong.",  # a stop word in any case
    "my password is SAME.",
    "my password is hyphenated.",  # a word that describes: -ed, -able, -ing, -ous ...
    "my password is Unguessable.",
    "My password is REUSABLE.",
    "my password is ridiculous.",
]


@pytest.mark.parametrize("note", DESCRIBING, ids=_ids(DESCRIBING))
def test_a_word_that_describes_the_password_is_not_one(note):
    assert redact(note).text == note


def test_the_owner_is_looked_for_up_to_forty_characters_before_the_keyword():
    at_forty = "my extraordinarily overcomplicated wifi "  # "my" starts 40 characters before
    assert len(at_forty) == 40
    assert _hidden(at_forty + "password is kiwi.", "kiwi") is True
    at_forty_one = "my extraordinarilyy overcomplicated wifi "
    assert _hidden(at_forty_one + "password is kiwi.", "kiwi") is False
    # No owner at all: a plain word cannot be told from prose
    assert _hidden("the password is kiwi.", "kiwi") is False


# strong: a generated string after key, token, secret or password ---------------------------------


GENERATED = [
    ("deadbeef" * 4, True),  # 32 hex digits, however plain they look
    ("DEADBEEF" * 4, True),  # in upper case too
    (("deadbeef" * 4)[:31], False),  # 31: a short digest or an id
    ("abcdefghijklmnopq123", True),  # three digits at 4.3 bits
    ("abcdefghijklmnopqr12", False),  # two digits: a name with a number
    ("abcdefghijklm-nopq123", False),  # a hyphen joins words
    ("ghijklmnopqrs123" * 2, True),  # exactly 4.0 bits
    ("ghijklmnopqr123" * 2, False),  # 3.9 bits
    ("PlaceholderPlaceholder1", False),  # mixed case and a digit, but a stand-in
    ("PlaceholderZq8Lm2Xv7Rt", True),  # a stand-in word in a string strong on its own
    ("Zq8Lm2Xv7Rt4Nw9Kd3Hs6", True),  # mixed case with digits
]


@pytest.mark.parametrize(("value", "hidden"), GENERATED, ids=_ids(GENERATED))
def test_a_string_after_a_key_is_a_secret_when_it_looks_generated(value, hidden):
    assert _hidden(f"the algolia admin key {value}", value, "api-key") is hidden
    assert _hidden(f"the staging token {value} expires in May", value, "token") is hidden


def test_a_generated_string_after_a_bare_keyword_is_hidden_with_the_keywords_kind():
    value = "ghijklmnopqrs123" * 2
    assert _hidden(f"the deploy secret {value}", value, "credential")
    assert _hidden(f"the deploy tokens {value}", value, "token")
    assert _hidden(f"backup pwd {value}", value, "password")
    assert _hidden(f"db passwords {value}", value, "password")


POINTERS = [
    "the deploy key /home/ada/keys/Zq8Lm2Xv7Rt4Nw9Kd3.pem",  # a path: where the key is
    "the deploy key settings.DeployKeyZq8Lm2Xv7Rt",  # a name in code
    "the staging token Zq8Lm2Xv7Rt expires in May",  # under 20 characters: no proof alone
]


@pytest.mark.parametrize("note", POINTERS, ids=_ids(POINTERS))
def test_a_pointer_or_a_short_string_after_a_bare_keyword_is_left_as_written(note):
    assert redact(note).text == note
