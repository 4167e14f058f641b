"""What the secret detector reads values with: lazily compiled patterns, character sets, the
words of prose that are never a secret, and the tests a candidate value must pass.

Shared by `dreamer.support.secrets` (the ruleset and shapes), `dreamer.support.secrets_prose`
(secrets given in words, and what rulesets miss in prose) and `secrets_numbers` (cards,
accounts).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from dreamer.support.words import SECRET_STOP_WORDS

Span = tuple[int, int, str]  # start, end, kind


class Lazy:
    """A pattern compiled on first use: importing this module compiles nothing."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source, self.flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern."""
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled, name)


ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
WORD = ALNUM | {"_"}
URLSAFE = WORD | {"-"}
B64 = r"A-Za-z0-9+/"
U = r"A-Za-z0-9_\-"  # base64url, in a character class


def random_looking(value: str) -> bool:
    """Has lowercase, uppercase and a digit: generated, not a word or a hex digest."""
    return (
        any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
    )


def written_out(value: str) -> bool:
    """Not a stand-in for a password: PASS, ${PW}, <password>, ***, pw."""
    if REFERENCE.match(value):
        return False
    return not (value.isalpha() and (value.isupper() or value.lower() in SECRET_STOP_WORDS))


def user_password(value: str) -> bool:
    """Written out, and not a number: ``docker run -u 1000:1000`` is a user and a group."""
    return written_out(value) and not value.isdigit()


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


# Values that stand in for a secret in examples and fixtures: token='placeholder',
# api_key = 'your-api-key-here', password: "changeme", key: "<redacted>".
STAND_IN = Lazy(
    r"(?i)placeholder|^your[\W_]|[\W_]here$|^(?:dummy|example|sample|fake|changeme|change[-_]me"
    r"|redacted|secret|test|testing|foo|bar|baz|foobar|todo|fixme|xxx+|\.\.\.)$"
)
REFERENCE = Lazy(
    r"^(?:\$[({A-Za-z_]|%[A-Za-z_]+%|<[^>]*>|\*{3,}|[xX]{3,}$|.*(?:\.\.\.|…)$|[\W_]+$"
    r"|[(!{\[\\]|[rbfuRBFU]{1,2}[\"']"  # an expression, a YAML tag, a regex or an f-string
    r"|/|~/|\.\.?/"  # a path: password: /run/secrets/db, NOPASSWD: /bin/systemctl
    r"|os\.environ|os\.getenv|getenv|process\.env|env\.|ENV\[|secrets\.)"
)
# Names and expressions in code, not values: getpass(), cfg["pw"], args.password, new_password,
# and type names (token: AccessToken).
CODE = Lazy(
    r"^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[(\[]|[A-Za-z_]+(?:\.[A-Za-z_]\w*)+$"
    r"|[a-z]+(?:_[a-z]+)+$|[A-Z]+(?:_[A-Z]+)+$|[A-Z][A-Za-z]*[a-z][A-Z][A-Za-z]*$)"
)
NEXT_PARAM = Lazy(r"[&;](?=[\w.\-]+=)")
CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def trim(value: str) -> str:
    """Drop sentence punctuation and unbalanced closing brackets from the end of a value."""
    value = NEXT_PARAM.split(value, maxsplit=1)[0]
    while value:
        last = value[-1]
        if last in ".,;:\"'`":
            value = value[:-1]
        elif last in CLOSERS and value.count(last) > value.count(CLOSERS[last]):
            value = value[:-1]
        else:
            break
    return value


_NAME_PART = Lazy(
    r"(?:[A-Z]?[a-z]{3,}|[A-Z][a-z]{2}|[A-Z]{2,}(?![a-z])|[0-9]+(?:[A-Z](?![a-z]))?)+"
)
_NAME_SEPARATORS = Lazy(r"[._\-/]+")


def identifier(value: str) -> bool:
    """A name built of words and numbers (or a path of such names), not a generated string:
    ``httpx2.AsyncByteStream``, ``BetaMemoryTool20250818Param``, ``_HTML5_FORM_RE.sub``,
    ``Qwen/Qwen2.5-Coder-7B-Instruct``."""
    parts = [part for part in _NAME_SEPARATORS.split(value) if part]
    return bool(parts) and all(_NAME_PART.fullmatch(part) for part in parts)


def made_up(value: str) -> bool:
    """A string no prose has: 8+ characters, letters and digits, and a symbol or mixed case."""
    if len(value) < 8 or CODE.match(value) or REFERENCE.match(value):
        return False
    letters = [c for c in value if c.isalpha()]
    symbol = any(not c.isalnum() for c in value.replace("-", ""))
    mixed = any(c.isupper() for c in letters) and any(c.islower() for c in letters)
    return bool(letters) and any(c.isdigit() for c in value) and (symbol or mixed)


# What each detector of secrets given in words looks for first, in the lowercased text: a text
# holding none of a detector's hints gives it nothing, so `dreamer.support.secrets` loads those
# detectors (`secrets_prose`) only for a text that holds one (most notes hold none).
KEYWORD_HINTS = ("pass", "pw", "token", "secret", "key")  # every match of prose._KEYWORD has one
SAID_HINTS = ("pass", "pin", "code")
LOGIN_HINTS = ("log", "sign", "cred", "u/p", "user")
BARE_KEY_HINTS = ("key", "token", "secret", "pass", "pwd")

# Issue 36: the data of the detectors for secrets no rule names (`secrets_unnamed`) and for
# passwords said in a sentence in any language (`secrets_sentences`). Each entry has a case in
# tests/support/test_secrets_unnamed.py or tests/support/test_secrets_words.py.

# The word for a password, by language (lowercase, as it occurs in the lowercased text).
PASSWORD_CUES: dict[str, tuple[str, ...]] = {
    "en": ("password", "passcode"),
    "de": ("passwort", "kennwort"),
    "fr": ("mot de passe", "mdp"),
    "es": ("contraseña", "clave"),
    "pt": ("senha",),
    "it": ("password", "parola d'ordine"),
    "nl": ("wachtwoord",),
    "pl": ("hasło", "haslo"),
    "ru": ("пароль",),
    "ja": ("パスワード", "暗証番号"),
    "zh": ("密码", "口令"),
    "ko": ("비밀번호", "암호"),
}
SENTENCE_HINTS = tuple(sorted({cue for cues in PASSWORD_CUES.values() for cue in cues}))
# Names a sentence gives where a password would be, that would read as one (a digit and
# letters): "パスワードは1Passwordに保存しています".
PASSWORD_MANAGERS = frozenset({"1password"})
# The first part of an id or a digest, never of a key: msg_01…, evt_1…, sha512-…, commit_….
ID_PREFIXES = frozenset(
    """msg toolu chatcmpl call resp run thread asst file batch req request evt cus pi ch in sub
    price prod txn acct sha sha1 sha256 sha384 sha512 md5 commit rev git obj blob tree span trace
    build job img image doc deps cache crystal""".split()
)
# Parts of a key's prefix that say it is one (pat-na1-<uuid>, sk-or-v1-<hex>): with one of
# them a shorter or hex body is enough.
KEY_PREFIX_WORDS = frozenset("pat sk rk key secret token tok api apikey live auth".split())
# Parts of a setting's name that say its value is a secret (sig=…, X-Amz-Signature=…).
SECRET_NAME_PARTS = tuple("secret token key pass pwd auth cred sig private cookie dsn".split())
# Names whose value is a digest or an id, whatever it looks like (integrity: sha512-…).
DIGEST_NAMES = frozenset(
    """sha sha1 sha256 sha384 sha512 md5 hash digest checksum integrity etag fingerprint id uuid
    guid ulid commit rev revision ref version image url uri href src path file model build
    nonce trace span request h1""".split()
)
# Words of a line that quotes an IBAN from documentation, not someone's account.
DOC_CUES = tuple(
    """example sample docs documentation spec format validator wikipedia e.g.
    placeholder dummy""".split()
)
