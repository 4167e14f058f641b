"""The prose detector's shortest values, each side of the line: a value one character shorter
than the shortest secret of its kind is prose and stays; one at that length is replaced."""

from __future__ import annotations

import pytest

from dreamer.support.secrets import redact

EDGES = [
    # (note, the value, hidden): a password after a keyword is 4 characters or more
    ("db password: ab1x", "ab1x", True),
    ("db password: ab1", "ab1", False),
    ("set pwd=k9x2 for now", "k9x2", True),
    ("set pwd=k9x for now", "k9x", False),
    # any other kind (a token, a key, a secret) is 8 or more
    ("api token: ab12cd3x", "ab12cd3x", True),
    ("api token: ab12cd3", "ab12cd3", False),
    ("the deploy token = Zq7Kp2Lm", "Zq7Kp2Lm", True),
    ("the deploy token = Zq7Kp2L", "Zq7Kp2L", False),
    # a PIN is 4 digits or more
    ("PIN: 1234", "1234", True),
    ("PIN: 123", "123", False),
    ("the door pin is 2580.", "2580", True),
    ("the door pin is 258.", "258", False),
    # a plain word someone's password "is" is 4 letters or more
    ("Maya's email password is kiwi.", "kiwi", True),
    ("Maya's email password is fig.", "fig", False),
]


@pytest.mark.parametrize(("note", "value", "hidden"), EDGES, ids=[e[0] for e in EDGES])
def test_the_shortest_secret_of_each_kind_is_replaced_and_one_shorter_is_kept(note, value, hidden):
    text = redact(note).text
    assert (value not in text) is hidden, text
    if not hidden:
        assert text == note
