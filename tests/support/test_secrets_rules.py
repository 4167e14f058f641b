"""Issue 22: the loaded ruleset (gitleaks, as data) and the prose rules no ruleset has.

The ruleset: every rule compiles in Python's re, has keywords, says where it came from and under
which licence, and runs as gitleaks runs it (keyword prefilter, entropy floor, allowlists). Nothing
is compiled at import. The prose rules: passwords and passphrases said in sentences, logins as
user / password, card numbers that pass the Luhn check, and their look-alikes left alone.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from dreamer.support import secrets_rules
from dreamer.support.secrets import contains_secret, placeholder, redact

ROOT = Path(__file__).resolve().parents[2]


def test_every_loaded_rule_compiles_in_python_and_has_keywords():
    loaded = secrets_rules.rules()
    assert len(loaded) >= 200
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a nested set or a bad escape is a FutureWarning
        for rule in loaded:
            re.compile(rule.regex, re.ASCII)
            for allow in rule.allow:
                for pattern in allow.regexes:
                    re.compile(pattern, re.ASCII)
            assert rule.keywords, rule.id  # spans() skips a text with no keyword at all
            assert re.fullmatch(r"[a-z0-9-]+", rule.kind), rule.id  # a valid placeholder kind


def test_the_rules_file_names_its_source_and_licence_and_ships_it():
    data = json.loads(secrets_rules.DATA.read_text())
    assert data["source"].startswith("https://github.com/gitleaks/gitleaks/blob/")
    assert re.fullmatch(r"[0-9a-f]{40}", data["commit"])
    assert data["licence"].startswith("MIT")
    licence = secrets_rules.DATA.with_name("secrets_rules.LICENSE").read_text()
    assert "MIT License" in licence and "Zachary Rice" in licence
    # Both live inside the package folder, which the wheel ships whole.
    # (the imported package: the source tree, or site-packages after a plain `pip install .`)
    assert secrets_rules.DATA.parent == Path(secrets_rules.__file__).parent
    assert (ROOT / "dreamer" / "support" / secrets_rules.DATA.name).is_file()
    assert 'packages = ["dreamer"]' in (ROOT / "pyproject.toml").read_text()


def test_go_only_syntax_is_rewritten_for_python():
    update = _load_update_rules()
    assert update.to_python(r"abc(?i)def") == r"abc(?i:def)"
    # RE2 scopes a flag to the rest of its group, later alternatives included: "(x(?i)y|z)"
    # is "xy" or "z" (this said "(x(?i:y|z))", which made every alternative need the "x").
    assert update.to_python(r"(x(?i)y|z)w") == r"(x(?i:y)|(?i:z))w"
    assert update.to_python(r"foo\z") == r"foo\Z"
    assert update.to_python(r"pat[[:alnum:]]{14}") == r"pat[A-Za-z0-9]{14}"
    assert update.to_python(r"[^]a[b]") == r"[^]a\[b]"
    # A class whose first member is an escape ends at its first "]" (it had swallowed the
    # next class: curl's -u and -H rules and one more never matched).
    assert update.to_python(r"(?:[\r\n]{1,2}.*)[ \t](?:-u)") == r"(?:[\r\n]{1,2}.*)[ \t](?:-u)"
    assert update.to_python(r"(sk_[\S]{29})['\"]") == r"(sk_[\S]{29})['\"]"
    # The shipped file is what the converter makes of the rules (nothing edited by hand).
    data = json.loads(secrets_rules.DATA.read_text())
    assert data["converted_by"] == "benchmarks/secrets/update_rules.py"


def _load_update_rules():
    import importlib.util

    path = ROOT / "benchmarks" / "secrets" / "update_rules.py"
    spec = importlib.util.spec_from_file_location("update_rules", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["update_rules"] = module
    spec.loader.exec_module(module)
    return module


def test_rules_run_as_gitleaks_runs_them():
    by_id = {rule.id: rule for rule in secrets_rules.rules()}
    vault = by_id["vault-service-token"]
    only = frozenset({"vault-service-token"})
    token = "hvs." + "Zq8Lm2Xv7Rt4Nw9Kd3Hs6Gf1Jb5Ca0Ey" * 3
    text = f"VAULT_TOKEN={token}"
    found = secrets_rules.spans(text, text.lower(), only=only)
    assert [(text[a:b], k) for a, b, k in found] == [(token, "vault-service-token")]
    # The keyword prefilter: without "hvs." or "s." in the text the rule does not run.
    assert vault.keywords and not any(k in "no token here" for k in vault.keywords)
    # The entropy floor: a value of few distinct characters is no token.
    assert vault.entropy > 0
    low = f"VAULT_TOKEN=hvs.{'ab' * 48}"
    assert list(secrets_rules.spans(low, low.lower(), only=only)) == []
    # A rule's allowlist: AWS' documented example key id is not a secret; another id is.
    aws = frozenset({"aws-access-token"})
    example, real = "AKIAIOSFODNN7EXAMPLE", "AKIAQ3EGUGWZ7RMPL42X"
    assert list(secrets_rules.spans(example, example.lower(), only=aws)) == []
    assert [k for _, _, k in secrets_rules.spans(real, real.lower(), only=aws)] == [
        "aws-access-key"
    ]


@pytest.mark.parametrize(
    ("rule", "secret", "text"),
    [
        ("curl-auth-user", "deploy:Wq7zR2pX9", "curl -u deploy:Wq7zR2pX9 https://ci.internal/api"),
        (
            "curl-auth-header",
            "Zx81Qw0Lp2Rv7Tn5",
            "curl -H 'Authorization: Bearer Zx81Qw0Lp2Rv7Tn5' https://api.internal/v1",
        ),
        (
            "curl-auth-header",
            "Zx81Qw0Lp2Rv7Tn5",
            'curl -s --header "x-api-key: Zx81Qw0Lp2Rv7Tn5" https://api.internal/v1',
        ),
        (
            "freemius-secret-key",
            "sk_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC",
            "'secret_key' => 'sk_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC'",
        ),
    ],
)
def test_the_rules_with_a_class_of_escapes_find_their_secret_on_their_own(rule, secret, text):
    found = secrets_rules.spans(text, text.lower(), only=frozenset({rule}))
    assert secret in {text[a:b] for a, b, _ in found}


def test_importing_the_detector_compiles_and_reads_nothing():
    probe = (
        "import re, sys\n"
        "before = len(re._cache) if hasattr(re, '_cache') else 0\n"
        "import dreamer.support.secrets as s, dreamer.support.secrets_rules as r\n"
        "print(r.ruleset.cache_info().currsize, s.PLACEHOLDER._compiled is None,"
        " all(x.pattern._compiled is None for x in s._SHAPES))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.split() == ["0", "True", "True"]


def test_a_text_compiles_only_the_rules_its_keywords_call_for():
    secrets_rules._compiled.cache_clear()
    redact("Lunch with Maya moved to Friday at noon.")
    plain = secrets_rules._compiled.cache_info().currsize
    redact("the vault token hvs." + "Zq8Lm2Xv7Rt4Nw9Kd3Hs6Gf1Jb5Ca0Ey" * 3)
    assert plain == 0
    assert 0 < secrets_rules._compiled.cache_info().currsize < 20


# Secrets in prose --------------------------------------------------------------------------------

CAUGHT = [
    ("password", "hunter2!", "my password for the router admin page is hunter2!"),
    ("password", "sunflower", "my password for the router admin page is sunflower"),
    ("password", "Tangerine77", "My bank password is Tangerine77."),
    ("password", "Winter2025!", "I set the password as Winter2025!"),
    (
        "password",
        "copper lantern orbit meadow",
        "the wifi passphrase is copper lantern orbit meadow",
    ),
    ("password", "purple monkey dishwasher", "the passphrase is 'purple monkey dishwasher'"),
    ("password", "orange-kite-42", "ssh key passphrase: orange-kite-42"),
    ("password", "toor", "the test VM login is root / toor"),
    ("password", "Blue-Otter-77", "NAS login: admin / Blue-Otter-77"),
    ("password", "wcxrc906$", "creds for the VPN are ada:wcxrc906$"),
    ("password", "hunter2", "username admin password hunter2"),
    ("password", "hunter2!", "Password for the router admin page — hunter2!"),
    ("password", "bluebird", "Maya's email password is bluebird."),
    ("password", "correct horse battery staple", "wifi passphrase: correct horse battery staple"),
    (
        "password",
        "correct-horse-battery-staple",
        "the wifi password is correct-horse-battery-staple",
    ),
    ("password", "Tr0ub4dor&3", "The password, Tr0ub4dor&3, works for the admin panel"),
    ("password", "letmein123", "the password we agreed on is letmein123"),
    ("pin", "4821", "my ATM PIN is 4821"),
    ("pin", "7731", "the garage door code is 7731"),
    ("card-number", "4111 1111 1111 1111", "paid with 4111 1111 1111 1111 exp 09/28"),
    ("card-number", "5500-0000-0000-0004", "card 5500-0000-0000-0004"),
    ("card-number", "3782 822463 10005", "Amex 3782 822463 10005 for travel"),
    ("card-number", "6011000990139424", "the card number is 6011000990139424"),
    ("iban", "DE89 3704 0044 0532 0130 00", "rent goes to DE89 3704 0044 0532 0130 00"),
    (
        "api-key",
        "57f63d654f75852777dc278aaf6301d1",
        "algolia admin key 57f63d654f75852777dc278aaf6301d1",
    ),
    (
        "password-hash",
        "$apr1$IMfvg7b8$2VawVTURIOHXvDNkl9jkzo",
        "admin:$apr1$IMfvg7b8$2VawVTURIOHXvDNkl9jkzo",
    ),
]


@pytest.mark.parametrize(("kind", "secret", "note"), CAUGHT, ids=[c[2][:40] for c in CAUGHT])
def test_secrets_said_in_prose_are_replaced(kind, secret, note):
    result = redact(note)
    assert secret not in result.text
    assert placeholder(kind, secret) in result.text


LEFT = [
    "the password is swordfish",  # no one's: a plain word cannot be told from prose
    "my password is outdated, I need a new one",
    "My password is the same as before.",
    "The passphrase is required at every boot; the user types it.",
    "The passphrase is a sentence of four words, per the policy.",
    "His PIN for the phone is required after every reboot.",
    "pin numpy to 1.26 and scipy to 1.13",
    "login: via SSO / no password needed",
    "user / password login is disabled; SSO only since March.",
    "The login form has fields username and password and a remember-me box.",
    "docker run -u 1000:1000 -p 8080:80 dreamer:latest",
    "4111 1111 1111 1112 fails the Luhn check",  # not a card
    "Order 4532015112830367 has been shipped" + "x",  # a Luhn-valid number inside a word: kept
    "Timestamp 1741790400000 is 2025-03-12 in ms.",
    "The meeting ID is 845 2291 3307 (no passcode).",
    "Ticket numbers 5500 0000 and 5500 0001 were merged.",
    "token='placeholder' is what the fixture passes to the client",
    "api_key = 'your-api-key-here' in README example",
    "Each secret becomes a [secret:kind#hash] placeholder",
    "cache key deps-3f2a9c1d8e7b6a5f for the build",
    "password - see the vault entry",
    "the router's admin password is outdated",
    "Maya's password is strong.",
    "passwords, tokens and keys never go in notes",
    "the password we use is in 1Password",
    "the password is up-to-date",
    "the password reset link is https://example.com/reset",
]


@pytest.mark.parametrize("note", LEFT)
def test_look_alikes_are_left_alone(note):
    assert redact(note).text == note
    assert not contains_secret(note)
