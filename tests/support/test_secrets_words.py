"""Issue 36: each entry of the word lists the detectors of unnamed secrets read does its job.

An id prefix keeps an id, a digest's name keeps its value, a documentation cue keeps a quoted
IBAN, a key word in a prefix makes a uuid-bodied token a key, a secret's name makes a hex value
a secret, a password manager's name is no password. Each entry alone, against the same text
without it (so an entry that does nothing fails).
"""

from __future__ import annotations

import pytest

from dreamer.support.secrets import redact
from dreamer.support.secrets_words import (
    DIGEST_NAMES,
    DOC_CUES,
    ID_PREFIXES,
    KEY_PREFIX_WORDS,
    PASSWORD_MANAGERS,
    SECRET_NAME_PARTS,
)

BODY = "Hq3Lm9Zx2Vb7Nw4Tp8Rs1Yd6Hf0Gj5Ca3EuWx"  # 36 generated characters
HEX = "9f3c1a7e2d8b4c6f0a5e9d1b3c7f2a8e4d6b0c1f"  # 40 hex digits
UUID = "550e8400-e29b-41d4-a716-446655440000"
IBAN = "DE89 3704 0044 0532 0130 00"


@pytest.mark.parametrize("prefix", sorted(ID_PREFIXES))
def test_an_id_prefix_keeps_an_id(prefix):
    note = f"the log shows {prefix}_{BODY} after the retry"
    assert redact(note).text == note
    assert redact(f"the log shows zq{prefix}_{BODY} after the retry").text != note


@pytest.mark.parametrize("name", sorted(DIGEST_NAMES))
def test_a_digest_name_keeps_its_value(name):
    assert redact(f"{name}={BODY}").text == f"{name}={BODY}"
    assert redact(f"widget={BODY}").text != f"widget={BODY}"


@pytest.mark.parametrize("cue", DOC_CUES)
def test_a_documentation_cue_keeps_a_quoted_iban(cue):
    note = f"{IBAN} is the {cue} we copied"
    assert redact(note).text == note
    assert IBAN not in redact(f"{IBAN} is the account we pay").text


@pytest.mark.parametrize("word", sorted(KEY_PREFIX_WORDS))
def test_a_key_word_in_a_prefix_makes_a_uuid_bodied_token_a_key(word):
    assert UUID not in redact(f"crm uses {word}-na1-{UUID} now").text
    assert UUID in redact(f"crm uses zz-na1-{UUID} now").text


@pytest.mark.parametrize("part", SECRET_NAME_PARTS)
def test_a_secret_name_makes_a_hex_value_a_secret(part):
    assert HEX not in redact(f"x_{part}={HEX}").text
    assert HEX in redact(f"x_widget={HEX}").text


@pytest.mark.parametrize("manager", sorted(PASSWORD_MANAGERS))
def test_a_password_managers_name_is_no_password(manager):
    note = f"パスワードは{manager}にあります"
    assert redact(note).text == note
    assert "2" + manager[1:] not in redact(f"パスワードは2{manager[1:]}にあります").text
