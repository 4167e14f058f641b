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
