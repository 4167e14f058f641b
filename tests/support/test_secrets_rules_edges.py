"""Issue 22: the gitleaks rules engine at its edges, entry by entry.

An allow list lets a match through as "not a secret". Each shipped entry is read from
``dreamer/support/secrets_rules.json`` here, so an entry added by the converter gets a case (the
test asks for an example of every regex). Each example is a value the entry must let through,
checked against a value it must not; both go through the engine the way a note does. The edges
of the engine itself follow: the entropy floor at exactly its value, the keyword prefilter, which
capture group is the secret, the 50-character run before a match that an allow list sees, and
the one line a ``line`` entry reads.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from dreamer.support import secrets_rules
from dreamer.support.secrets import placeholder, redact

DATA = json.loads(secrets_rules.DATA.read_text(encoding="utf-8"))
BY_ID = {rule.id: rule for rule in secrets_rules.rules()}
RANDOM = "Zq8Lm2Xv7Rt4Nw9Kd3Hs6"  # high entropy, no stop word, no stand-in
GENERIC = frozenset({"generic-api-key"})

# One value per shipped allow-list regex that the regex lets through (global list first, then
# each rule's lists): the secret, the match or the line, as the entry's target says. A regex that
# is a literal value (Google's documented sample keys) is its own example.
EXAMPLES = {
    # global: boolean and null words, one repeated character, template and format placeholders,
    # paths
    r"(?i)^true|false|null$": ["TRUE", "false", "Null"],
    r"^(?i:a+|b+|c+|d+|e+|f+|g+|h+|i+|j+|k+|l+|m+|n+|o+|p+|q+|r+|s+|t+|u+|v+|w+|x+|y+|z+"
    r"|\*+|\.+)$": [
        "xxxxxxxxxx",
        "ZZZZZZZZ",
        "********",
        "..........",
    ],
    r"^\$(?:\d+|{\d+})$": ["$1", "${12}"],
    r"^\$(?:[A-Z_]+|[a-z_]+)$": ["$API_TOKEN", "$api_token"],
    r"^\${(?:[A-Z_]+|[a-z_]+)}$": ["${API_TOKEN}"],
    r"^\{\{[ \t]*[\w ().|]+[ \t]*}}$": ["{{ .Values.apiToken }}"],
    r"""^\$\{\{[ \t]*(?:(?:env|github|secrets|vars)(?:\.[A-Za-z]\w+)+[\w "'&./=|]*)[ \t]*}}$""": [
        "${{ secrets.API_TOKEN }}"
    ],
    r"^%(?:[A-Z_]+|[a-z_]+)%$": ["%API_TOKEN%"],
    r"^%[+\-# 0]?[bcdeEfFgGoOpqstTUvxX]$": ["%s", "%+v"],
    r"^\{\d{0,2}}$": ["{0}", "{}"],
    r"^@(?:[A-Z_]+|[a-z_]+)@$": ["@API_TOKEN@"],
    r"^/Users/(?i:[a-z0-9]+/[\w .-/]+$)": ["/Users/ada/keys/token.txt"],
    r"^/(?:bin|etc|home|opt|tmp|usr|var)/[\w ./-]+$": ["/etc/ssl/private/server.key"],
    # aws-access-token: the documented example key ids
    r".+EXAMPLE$": ["AKIAIOSFODNN7EXAMPLE"],
    # curl-auth-user: stand-ins for the user:password pair
    r"[^:]+:(?:change(?:it|me)|pass(?:word)?|pwd|test|token|\*+|x+)": ["ada:changeme", "ada:xxx"],
    r"""['"]?<[^>]+>['"]?:['"]?<[^>]+>|<[^:]+:[^>]+>['"]?""": ["<user>:<password>"],
    r"[^:]+:\[[^]]+]": ["ada:[password]"],
    r"""['"]?[^:]+['"]?:['"]?\$(?:\d|\w+|\{(?:\d|\w+)})['"]?""": ["ada:$PASSWORD"],
    r"\$\([^)]+\):\$\([^)]+\)": ["$(whoami):$(cat pw)"],
    r"""['"]?\$?{{[^}]+}}['"]?:['"]?\$?{{[^}]+}}['"]?""": ["{{user}}:{{password}}"],
    # generic-api-key: a value of letters alone; a match naming something that is no secret; a
    # line of a Docker build mount or an import
    r"^[a-zA-Z_.-]+$": ["only_letters.and-dashes"],
    "match-of-generic-api-key": [
        "primary_key = " + RANDOM,
        "keyboard = " + RANDOM,
        "csrf_token = " + RANDOM,
        "author: " + RANDOM,
    ],
    "--mount=type=secret,": ["RUN --mount=type=secret,id=npm token=" + RANDOM],
    r"""import[ \t]+{[ \t\w,]+}[ \t]+from[ \t]+['"][^'"]+['"]""": [
        "import { apiToken } from './config'"
    ],
    # kubernetes-secret-yaml: an empty or templated value; two documents, not one Secret
    r"""[\w.-]+:(?:[ \t]*(?:\||>[-+]?)\s+)?[ \t]*(?:\{\{[ \t\w"|$:=,.-]+}}|""|'')""": [
        "password: ''",
        "token: {{ .Values.token }}",
    ],
    r"(kind:(?s:.)+\n---\n(?s:.)+\bdata:|data:(?s:.)+\n---\n(?s:.)+\bkind:)": [
        "kind: ConfigMap\n---\napiVersion: v1\ndata:\n  token: " + RANDOM
    ],
    # nuget-config-password: NuGet's documented sample passwords and a %VARIABLE%
    "33f!!lloppa": ["33f!!lloppa"],
    r"hal\+9ooo_da!sY": ["hal+9ooo_da!sY"],
    r"^\%\S.*\%$": ["%NUGET_PASSWORD%"],
    # vault-service-token: an old-style token of letters only
    r"s\.[A-Za-z]{24}": ["s.abcdefghijklmnopqrstuvwx"],
}


@pytest.fixture(autouse=True)
def _fresh_rules():
    """Each test reads the data file afresh, as a new process does: the loader is under test."""
    secrets_rules.ruleset.cache_clear()
    yield


def test_the_loaded_rules_hold_every_field_of_the_data_file():
    loaded = secrets_rules.ruleset()
    assert [r.id for r in loaded.rules] == [r["id"] for r in DATA["rules"]]
    for rule, raw in zip(loaded.rules, DATA["rules"], strict=True):
        assert (rule.kind, rule.regex, rule.keywords, rule.group) == (
            raw["kind"],
            raw["regex"],
            tuple(raw["keywords"]),
            raw["group"],
        )
        assert (rule.entropy, rule.prefix_run) == (float(raw["entropy"]), raw["prefix_run"])
        assert [_fields(a) for a in rule.allow] == [_raw_fields(e) for e in raw["allow"]]
    assert [_fields(a) for a in loaded.common] == [_raw_fields(e) for e in DATA["allow"]]
    assert set(loaded.keywords) == {k for r in DATA["rules"] for k in r["keywords"]}


def _fields(allow) -> tuple:
    return (allow.target, allow.both, allow.regexes, allow.stopwords)


def _raw_fields(entry: dict) -> tuple:
    both = entry["condition"] == "AND"
    return (entry["target"], both, tuple(entry["regexes"]), tuple(entry["stopwords"]))


def _key(regex: str) -> str:
    if regex.startswith("(?i)(?:access(?:ibility|or)|access[_.-]?id"):
        return "match-of-generic-api-key"  # 1,500 characters of names: named here by role
    return regex


def _entries() -> list[tuple[str, dict]]:
    """(where, entry) for every shipped allow-list entry: the global list, then each rule's."""
    out = [("global", entry) for entry in DATA["allow"]]
    for rule in DATA["rules"]:
        out += [(rule["id"], entry) for entry in rule["allow"]]
    return out


def _literal(regex: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9_-]+", regex) is not None


def _probe(where: str, entry: dict) -> secrets_rules.Rule:
    """A rule that takes a whole line as its secret and carries only this allow-list entry."""
    loaded = secrets_rules.ruleset()
    by_id = {rule.id: rule for rule in loaded.rules}
    allow = (loaded.common if where == "global" else by_id[where].allow)[
        [e for w, e in _entries() if w == where].index(entry)
    ]
    return secrets_rules.Rule("probe", "probe", r"(?s)\A.+\Z", ("",), allow=(allow,))


def _found(rule: secrets_rules.Rule, text: str) -> list[str]:
    return [text[a:b] for a, b, _ in rule.spans(text, ())]


def _ids(wheres: list[str]) -> list[str]:
    """Plain test ids (``global-3``): mutmut passes each id back to pytest on a command line."""
    seen: dict[str, int] = {}
    out = []
    for where in wheres:
        seen[where] = seen.get(where, 0) + 1
        out.append(f"{where}-{seen[where]}")
    return out


REGEXES = [
    (where, entry, regex)
    for where, entry in _entries()
    for regex in entry["regexes"]
    if not _literal(regex)
]


def test_every_shipped_allow_list_regex_has_an_example_here():
    missing = [r for _, _, r in REGEXES if _key(r) not in EXAMPLES]
    assert missing == [], "add an example of each new allow-list regex to EXAMPLES"


@pytest.mark.parametrize(("where", "entry", "regex"), REGEXES, ids=_ids([w for w, _, _ in REGEXES]))
def test_each_allow_list_regex_lets_its_example_through_and_not_a_real_value(where, entry, regex):
    rule = _probe(where, entry)
    for example in EXAMPLES[_key(regex)]:
        assert re.search(regex, example, re.ASCII), example  # the example is one it names
        assert _found(rule, example) == [], example
    # A real value is still a secret for the same entry
    real = RANDOM if entry["target"] != "match" else f"v = {RANDOM}"
    assert _found(rule, real) == [real]


def test_each_literal_allow_list_value_is_let_through_by_its_own_rule():
    literals = [(w, r) for w, e in _entries() for r in e["regexes"] if _literal(r)]
    assert len(literals) >= 10  # Google's sample keys, NuGet's sample password
    for where, value in literals:
        assert _bits(value) > BY_ID[where].entropy  # above the floor: the list lets it through
        found = list(secrets_rules.spans(value, value.lower(), only=frozenset({where})))
        assert found == [], (where, value)
        assert _found(_probe(where, _owning(where, value)), value) == []
    # One character changed and the same rule reports it (the gcp rule's floor is entropy 4)
    changed = "AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIt"
    assert [k for _, _, k in secrets_rules.spans(changed, changed.lower())] == ["google-api-key"]


def _bits(value: str) -> float:
    counts = [value.count(c) for c in set(value)]
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts)


def _owning(where: str, regex: str) -> dict:
    return next(e for w, e in _entries() if w == where and regex in e["regexes"])


STOPWORDS = [(where, entry) for where, entry in _entries() if entry["stopwords"]]


@pytest.mark.parametrize(("where", "entry"), STOPWORDS, ids=_ids([w for w, _ in STOPWORDS]))
def test_each_stopword_lets_a_secret_holding_it_through_in_any_case(where, entry):
    rule = _probe(where, entry)
    assert _found(rule, RANDOM) == [RANDOM]
    kept = [
        word
        for word in entry["stopwords"]
        for secret in (f"Q7{word}9z", f"Q7{word.upper()}9z")  # compared lowercased
        if _found(rule, secret)
    ]
    assert kept == [], f"{len(kept)} stopwords did not let their secret through: {kept[:5]}"


# The global list applies to every rule ----------------------------------------------------------


def test_the_global_allow_list_applies_to_every_rule_and_a_rules_own_list_to_it_alone():
    common = secrets_rules.ruleset().common
    probe = secrets_rules.Rule("probe", "probe", r"value=(\S+)", ("value",))
    assert list(probe.spans("value=${API_TOKEN}", common)) == []
    assert [(a, b) for a, b, _ in probe.spans("value=" + RANDOM, common)] == [(6, 6 + len(RANDOM))]
    # AWS' EXAMPLE suffix is AWS' rule's own: another rule still reports such a value
    example = "AKIAIOSFODNN7EXAMPLE"
    assert list(probe.spans(f"value={example}", common)) != []
    text = f"aws_access_key_id = {example}"
    assert list(secrets_rules.spans(text, text.lower(), only=frozenset({"aws-access-token"}))) == []


# The generic rule's lists, as a note meets them -------------------------------------------------


def _generic(text: str) -> list[str]:
    return [text[a:b] for a, b, _ in secrets_rules.spans(text, text.lower(), only=GENERIC)]


@pytest.mark.parametrize("name", ["primary_key", "hot.key", "bucket-key", "idx_key"])
def test_a_key_named_as_no_secret_is_let_through_with_its_name_before_the_keyword(name):
    assert _generic(f"{name} = {RANDOM}") == []  # the run before "key" belongs to the match
    assert _generic(f"my {name} = {RANDOM}") == []
    assert _generic(f"api_key = {RANDOM}") == [RANDOM]


def test_the_run_before_the_keyword_reaches_back_fifty_characters_and_no_further():
    # "author" is a name the generic rule lets through; it counts only inside the match, whose
    # run of [A-Za-z0-9_.-] before the keyword is at most 50 characters long (as in gitleaks)
    at_fifty = "author" + "x" * 43 + "_token = " + RANDOM
    at_fifty_one = "author" + "x" * 44 + "_token = " + RANDOM
    assert _generic(at_fifty) == []
    assert _generic(at_fifty_one) == [RANDOM]
    # The run is ASCII, as RE2's \w: a letter of another script ends it
    assert _generic("authoré_token = " + RANDOM) == [RANDOM]
    assert _generic("author_token = " + RANDOM) == []
    assert _generic("author.token = " + RANDOM) == []
    assert _generic("author-token = " + RANDOM) == []


def test_a_line_entry_reads_the_line_of_the_match_and_no_other():
    mount = "--mount=type=secret,id=npm"
    assert _generic(f"{mount} token={RANDOM}") == []  # first line of the text
    assert _generic(f"RUN echo\n{mount} token={RANDOM}\nRUN make") == []
    assert _generic(f"RUN echo\n{mount}\ntoken={RANDOM}") == [RANDOM]  # two lines above
    # The line runs to its last character: the closing quote of an import on the same line
    assert _generic(f"token={RANDOM}; import {{ x }} from './y'") == []
    assert _generic(f"{mount}\ntoken={RANDOM}") == [RANDOM]  # the line above
    assert _generic(f"token={RANDOM}\n{mount}") == [RANDOM]  # the line below
    assert _generic(f"token={RANDOM}\n{mount}\nRUN make") == [RANDOM]  # not to the last newline
    assert _generic(f"token={RANDOM}") == [RANDOM]
    # A note: the credential stays hidden whatever the line after it says
    for after in (mount, "import { x } from './y'"):
        note = f"creds={RANDOM}\n{after}"
        assert redact(note).text == f"creds={placeholder('credential', RANDOM)}\n{after}"


def test_a_stopword_in_the_secret_lets_it_through_whatever_the_match_says():
    # The match entry of the generic rule has regexes (names) and stopwords: either one is enough
    assert _generic(f"api_key = Q7{'ABOUT'}9zLm2Xv") == []
    assert _generic("api_key = Q7TRIXr9zLm2Xv") == ["Q7TRIXr9zLm2Xv"]
    letters = "ZqLmXvRtNwKdHsGfJb"  # high entropy, but letters alone: the secret entry
    assert _bits(letters) > BY_ID["generic-api-key"].entropy
    assert _generic(f"api_key = {letters}") == []
    assert _generic(f"api_key = {letters}7") == [letters + "7"]


# The engine's own edges -------------------------------------------------------------------------


def test_a_value_at_exactly_the_entropy_floor_is_dropped_and_just_above_it_kept():
    rule = secrets_rules.Rule("probe", "probe", r"v=(\w+)", ("v=",), entropy=2.0)
    assert _found(rule, "v=abcd") == []  # four distinct characters: exactly 2.0 bits
    assert _found(rule, "v=abcde") == ["abcde"]
    # No floor (the default): a value of one repeated character is still a value
    plain = secrets_rules.Rule("probe", "probe", r"v=(\w+)", ("v=",))
    assert _found(plain, "v=1111111111") == ["1111111111"]


def test_the_secret_is_the_named_group_else_the_first_that_matched_else_the_match():
    either = secrets_rules.Rule("probe", "probe", r"(?:a=(\w+)|b=(\w+))", ("=",))
    assert _found(either, f"b={RANDOM}") == [RANDOM]
    assert _found(either, f"a={RANDOM}") == [RANDOM]
    whole = secrets_rules.Rule("probe", "probe", r"tok_\w+", ("tok_",))
    assert _found(whole, f"x tok_{RANDOM} y") == [f"tok_{RANDOM}"]
    named = secrets_rules.Rule("probe", "probe", r"(\w+)=(\w+)", ("=",), group=2)
    assert _found(named, f"key={RANDOM}") == [RANDOM]
    zero = secrets_rules.Rule("probe", "probe", r"(\w+)=(\w+)", ("=",), group=0)
    assert _found(zero, f"key={RANDOM}") == [f"key={RANDOM}"]
    # An empty group is no secret (a group that matched nothing is not "the first that matched")
    empty = secrets_rules.Rule("probe", "probe", r"v=(\w*)", ("v=",), group=1)
    assert list(empty.spans("v= and v=", ())) == []


def test_a_rule_runs_only_when_one_of_its_keywords_is_in_the_text_in_any_case():
    token = "hvs." + "Zq8Lm2Xv7Rt4Nw9Kd3Hs6Gf1Jb5Ca0Ey" * 3
    only = frozenset({"vault-service-token"})
    for text in (f"VAULT_TOKEN={token}", f"vault_token={token}"):
        assert [k for _, _, k in secrets_rules.spans(text, text.lower(), only=only)] == [
            "vault-service-token"
        ]
    # The prefilter reads the lowercase it is given: without the keyword there, nothing runs
    text = f"VAULT_TOKEN={token}"
    assert list(secrets_rules.spans(text, text.lower().replace("hvs.", "xxx."), only=only)) == []
    # Two texts in a row: the second is searched for its own keywords
    first, second = "no keyword here at all", f"token={token}"
    assert list(secrets_rules.spans(first, first.lower())) == []
    assert list(secrets_rules.spans(second, second.lower(), only=only)) != []
    assert list(secrets_rules.spans(first, first.lower())) == []


def test_skip_and_only_choose_rules_by_id():
    text = f"VAULT_TOKEN=hvs.{'Zq8Lm2Xv7Rt4Nw9Kd3Hs6Gf1Jb5Ca0Ey' * 3}"
    everything = {k for _, _, k in secrets_rules.spans(text, text.lower())}
    assert everything == {"vault-service-token", "credential"}  # the generic rule reads it too
    vault = frozenset({"vault-service-token"})
    assert {k for _, _, k in secrets_rules.spans(text, text.lower(), skip=vault)} == {"credential"}
    assert {k for _, _, k in secrets_rules.spans(text, text.lower(), only=vault)} == {
        "vault-service-token"
    }
    assert list(secrets_rules.spans(text, text.lower(), only=frozenset())) == []
