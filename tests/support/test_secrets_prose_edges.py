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
from hypothesis import given, settings
from hypothesis import strategies as st

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


# --- the hints that decide whether the prose detectors load at all ---------------------------

# Words the prose patterns start from, in any case, parts of them, their neighbours, values and
# separators; the last few change length or meaning when lowercased.
_HINT_PIECES = [
    "password", "PASSWD", "pass", "passphrase", "pass code", "passcode", "pwd", "pw", "Pw",
    "token", "TOKEN", "secret", "secret key", "secret_access_key", "api key", "api_key", "key",
    "KEY", "keys", "pin", "PIN code", "door code", "code", "login", "log in", "LOG-ON",
    "sign in", "credentials", "creds", "u/p", "user", "username", "User / Pass", "is", "was",
    "are", ": ", "=", " - ", " to ", " for the router ", "my ", " ", " ", "\n", "\t", "'", '"',
    "admin", "/", "hunter2!", "Tr0ub4dor&3x", "4821", "57f63d65a1b2c3d4e5f6a7b8c9d0e1f2",
    "copper lantern orbit meadow", "p", "a", "s", "w", "o", "r", "d", "t", "k", "e", "y", "-",
    "_", ".", "İ", "ſ", "K", "ß",
]  # fmt: skip


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_HINT_PIECES), max_size=12))
def test_no_prose_pattern_matches_a_text_without_its_detectors_hints(parts):
    # The secret detector imports the prose detectors only for a text (lowercased, position for
    # position) holding one of a detector's hints; each hint list must hold for every match of
    # the patterns that detector runs first, or a secret would go unread.
    from dreamer.support import secrets_prose as prose
    from dreamer.support import secrets_words as words
    from dreamer.support.secrets import _lower

    lowered = _lower("".join(parts))

    def holds(hints: tuple[str, ...]) -> bool:
        return any(hint in lowered for hint in hints)

    if prose._KEYWORD.search(lowered):
        assert holds(words.KEYWORD_HINTS)
    if prose._SAID.search(lowered):
        assert holds(words.SAID_HINTS)
    if prose._LOGIN.search(lowered) or prose._USER_THEN_PASSWORD.search(lowered):
        assert holds(words.LOGIN_HINTS)
    if prose._BARE_KEY.search(lowered):
        assert holds(words.BARE_KEY_HINTS)


# One text for each way into each pattern: the pattern must match it (so the case is live) and
# the text must hold one of its detector's hints.
_EACH_WAY_IN = [
    ("_KEYWORD", "KEYWORD_HINTS", "password: Tr0ub4dor&3x"),
    ("_KEYWORD", "KEYWORD_HINTS", "db passwd is Tr0ub4dor&3x"),
    ("_KEYWORD", "KEYWORD_HINTS", "passphrase: copper lantern"),
    ("_KEYWORD", "KEYWORD_HINTS", "pwd=Tr0ub4dor&3x"),
    ("_KEYWORD", "KEYWORD_HINTS", "pw=swordfish9"),
    ("_KEYWORD", "KEYWORD_HINTS", "token: abcd1234efgh5678"),
    ("_KEYWORD", "KEYWORD_HINTS", "secret = abcd1234efgh5678"),
    ("_KEYWORD", "KEYWORD_HINTS", "aws secret access key: abcd1234efgh5678"),
    ("_KEYWORD", "KEYWORD_HINTS", "api key: abcd1234efgh5678"),
    ("_SAID", "SAID_HINTS", "the passphrase is copper lantern orbit meadow"),
    ("_SAID", "SAID_HINTS", "the pass code is 482913"),
    ("_SAID", "SAID_HINTS", "my pin is 4821"),
    ("_SAID", "SAID_HINTS", "the pin code: 4821"),
    ("_SAID", "SAID_HINTS", "the door code is 4821"),
    ("_SAID", "SAID_HINTS", "the gate code is 4821"),
    ("_LOGIN", "LOGIN_HINTS", "login: admin / hunter2!"),
    ("_LOGIN", "LOGIN_HINTS", "log on with ada:hunter2!"),
    ("_LOGIN", "LOGIN_HINTS", "sign-in is admin / hunter2!"),
    ("_LOGIN", "LOGIN_HINTS", "credentials ada:hunter2!"),
    ("_LOGIN", "LOGIN_HINTS", "creds for the vpn are ada:hunter2!"),
    ("_LOGIN", "LOGIN_HINTS", "u/p admin/hunter2!"),
    ("_LOGIN", "LOGIN_HINTS", "user / password admin / hunter2!"),
    ("_USER_THEN_PASSWORD", "LOGIN_HINTS", "username admin password hunter2!"),
    ("_BARE_KEY", "BARE_KEY_HINTS", "algolia admin key 57f63d65a1b2c3d4e5f6a7b8c9d0e1f2"),
    ("_BARE_KEY", "BARE_KEY_HINTS", "the tokens 57f63d65a1b2c3d4e5f6a7b8c9d0e1f2"),
    ("_BARE_KEY", "BARE_KEY_HINTS", "secrets: 57f63d65a1b2c3d4e5f6a7b8c9d0e1f2"),
    ("_BARE_KEY", "BARE_KEY_HINTS", "passwords 57f63d65a1b2c3d4e5f6a7b8c9d0e1f2"),
    ("_BARE_KEY", "BARE_KEY_HINTS", "pwd 57f63d65a1b2c3d4e5f6a7b8c9d0e1f2"),
]


@pytest.mark.parametrize(("pattern", "hints", "text"), _EACH_WAY_IN)
def test_every_way_into_a_prose_pattern_holds_one_of_its_detectors_hints(pattern, hints, text):
    from dreamer.support import secrets_prose as prose
    from dreamer.support import secrets_words as words
    from dreamer.support.secrets import _lower

    lowered = _lower(text)
    assert getattr(prose, pattern).search(lowered), "the case no longer exercises the pattern"
    assert any(hint in lowered for hint in getattr(words, hints))
