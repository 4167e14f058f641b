"""The edges of the detectors for secrets no rule names: each threshold held from both sides.

A key-shaped token, a setting's value or a run of base64 exactly at a threshold, and one step
off it: what a user sees is whether the note keeps it or shows a placeholder. Mutation testing
(``benchmarks/mutation.py secrets_unnamed``) moved each of these thresholds by one and no test
noticed; docs/contributing/testing.md says which moves are left and why they are harmless.
"""

from __future__ import annotations

import base64

import pytest

from dreamer.support.secrets import redact

HEX32 = "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d"  # lowercase hex, entropy 3.9
UUID = "3f9c2a71-8b4e-4d6a-9e1f-7c5b0a2d8e43"


def _redacted(token: str, kind: str, note: str = "the deploy used {} today") -> None:
    """``token`` in a note is replaced by a placeholder of ``kind``, the rest kept."""
    text = note.format(token)
    out = redact(text).text
    assert token not in out, out
    head, _, tail = note.partition("{}")
    assert out.startswith(f"{head}[secret:{kind}#") and out.endswith(f"]{tail}"), out


def _kept(token: str, note: str = "the deploy used {} today") -> None:
    """``token`` in a note stays as it is."""
    text = note.format(token)
    assert redact(text).text == text


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# A key after a prefix that says it is one (pat-, sk-): a body of letters and digits, not of
# words. Each body below is lowercase, so it is neither generated nor hex: only this rule sees it.

KEYISH_24 = "qz7wmx3kvr5tjn9hbd4fcpgy"  # 24 characters
ENTROPY_AT = "g7h2g7h2g7h2g7h2k3m5n8p9k3m5n8p9"  # four symbols four times, eight twice: 3.5
ENTROPY_BELOW = "g7h2g7h2g7h2g7h2k3m5n8p9k3m5n8p8"  # one character changed: 3.48
DIGITS_4 = "qzxwm7kvrbtj3nshbd5fcpgy9lwq"
DIGITS_3 = "qzxwm7kvrbtj3nshbd-fcpgy9lwq"  # the 5 replaced by a dash


@pytest.mark.parametrize(
    "body",
    [KEYISH_24, ENTROPY_AT, DIGITS_4],
    ids=["24-characters", "entropy-3-5", "four-digits"],
)
def test_a_key_prefix_and_a_body_at_each_threshold_is_a_key(body):
    _redacted(f"pat-{body}", "api-key")


@pytest.mark.parametrize(
    "body",
    [KEYISH_24[:-1], ENTROPY_BELOW, DIGITS_3, "na1-marketingx9q2w3e4r5t6"],
    ids=["23-characters", "entropy-below-3-5", "three-digits", "a-word-of-eight-letters"],
)
def test_a_key_prefix_and_a_body_one_step_short_is_no_key(body):
    _kept(f"pat-{body}")


# A short prefix and 32 or more lowercase hex characters, once short parts of the prefix
# (pt_ of lsv2_pt_) are taken off.


def test_a_short_prefix_and_32_hex_characters_is_a_key_and_31_are_not():
    _redacted(f"wpk_{HEX32}", "api-key")
    _kept(f"wpk_{HEX32[:-1]}")


def test_a_prefix_of_five_characters_takes_hex_and_one_of_six_does_not():
    _redacted(f"abcde_{HEX32}", "api-key")
    _kept(f"abcdef_{HEX32}")


def test_a_prefix_part_of_four_characters_is_taken_off_and_one_of_five_is_a_word():
    _redacted(f"wpk_prod_{HEX32}", "api-key")
    _kept(f"wpk_stage_{HEX32}")


def test_two_short_prefix_parts_are_taken_off_and_a_third_makes_it_a_name():
    _redacted(f"wpk-v1-{HEX32}", "api-key")  # dashes as well as underscores
    _kept(f"wpk-v1-{HEX32[:-1]}")  # 31 hex characters left
    _kept(f"web_app_min_x64_{HEX32}")  # an artefact named by its hash


def test_a_langsmith_shaped_key_is_a_key():
    # lsv2_pt_<32 hex>_<10 hex>: the first short part is taken off, the underscore inside the
    # hex is no letter.
    _redacted(f"lsv2_pt_{HEX32}_9c1d8e7b6a", "api-key")
    _redacted(f"acme_{HEX32[:20]}_{HEX32[12:]}", "api-key")


def test_a_hex_key_written_in_groups_is_a_key():
    _redacted("acme-3f2a9c1d-8e7b6a5f-4e3d2c1b-0a9f8e7d", "api-key")


def test_a_uuid_after_a_short_name_is_an_id_and_after_a_key_prefix_a_key():
    # Kubernetes names volumes pvc-<uuid>; logs write user-<uuid>, node-<uuid>.
    for name in ("pvc", "user", "node", "acme-na1"):
        _kept(f"{name}-{UUID}", "kubectl describe {} showed it bound")
    _redacted(f"pat-na1-{UUID}", "api-key")
    _redacted(f"sk-{UUID}", "api-key")


# A generated body: mixed case and digits with no run of words. Two capitalised words of six
# or more letters make it something a person typed.


def test_a_body_with_two_capitalised_words_is_typed_and_with_one_generated():
    _kept("site-Xq7Zr2Kp9Summer4Xn8Vb3Garden6Hd1Fj", "the {} banner")
    _redacted("site-Xq7Zr2Kp9Summer4Xn8Vb3Gardn6Hd1Fj5", "api-key", "the {} banner")


def test_a_dash_inside_a_body_is_no_base64_padding_to_drop():
    # Without its dash this body would read as base64 of text, and text is no key.
    encoded = _b64(b"Kestrel 42 over the Harbour")
    body = f"{encoded[:12]}-{encoded[12:]}"
    _redacted(f"zz9-{body}", "api-key")


# A setting's value that decodes from base64 to ordinary text is no secret.


def test_a_setting_holding_base64_of_plain_text_is_kept():
    _kept(f"WELCOME_BANNER={_b64(b'Welcome to the staging server')}", "{}")


def test_a_setting_holding_a_dotted_name_in_code_is_kept():
    _kept("upstream = cfg.Kx9mQ2vLp7Rz4Wn8Tb3Yd", "{}")


# base64 runs: 24 to 4,096 characters, padding or none, text with spaces, tabs, line ends and
# a few bytes outside ASCII.


def test_a_base64_run_of_exactly_24_characters_around_a_password_is_redacted():
    run = _b64(b"password=Hx7#kQ2vL")
    assert len(run) == 24
    _redacted(run, "encoded-secret", "the secret holds {} for ci")


def test_a_base64_run_of_exactly_4096_characters_around_a_key_is_redacted():
    lines = b"".join(b"FEATURE_%04d=on\n" % i for i in range(188))
    data = lines + b"STRIPE_KEY=sk_live_51Hq3Lm9Zx2Vb7Nw4Tp8Rs1Yd6Hf0Gj5Ca3Eu\n"
    data += b"#" * (3072 - len(data))
    run = _b64(data)
    assert len(run) == 4096
    _redacted(run, "encoded-secret", "kubectl get secret app -o yaml showed data: {}")


STRIPE = "sk_live_51Hq3Lm9Zx2Vb7Nw4Tp8Rs1Yd6Hf0Gj5Ca3Eu"


@pytest.mark.parametrize("missing", [1, 2], ids=["one-equals-sign", "two-equals-signs"])
def test_base64_without_its_padding_is_read_too(missing):
    data = f"{STRIPE}{' ' * (3 - missing)}".encode()
    padded = _b64(data)
    assert padded.endswith("=" * missing) and not padded.endswith("=" * (missing + 1))
    _redacted(padded.rstrip("="), "encoded-secret", "STRIPE_B64 {} in the env")


def test_base64_of_a_sentence_with_spaces_is_text():
    run = _b64(b"the password for the db is Hx7#kQ2vLp9 so do not share it")
    _redacted(run, "encoded-secret", "the config map holds {} now")


def test_base64_of_a_windows_tsv_export_is_text():
    rows = b"".join(b"%02d\tci\r\n" % i for i in range(30))
    data = b"id\tname\r\n" + rows + b"30\t" + STRIPE.encode() + b"\r\n"
    for control in b"\t\r\n":  # each more than a tenth of the bytes
        assert data.count(control) > len(data) / 10
    _redacted(_b64(data), "encoded-secret", "the export was {} in the ticket")


def test_base64_of_text_with_a_tenth_of_its_bytes_outside_ascii_is_text():
    data = "Das Passwort für Büro und Küche ist Hx7#kQ2vLp9 ab morgen".encode()
    assert len(data) == 10 * sum(byte > 127 for byte in data)  # exactly 90% printable
    _redacted(_b64(data), "encoded-secret", "im Secret stand {} drin")
