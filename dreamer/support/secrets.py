"""Find secrets in text and replace each with a typed, value-stable placeholder.

Every text that enters dreamer (notes, ingested transcripts and files, the seed migration, agent
tools) passes `redact` before it reaches storage or an LLM request.

Placeholder rule: a secret becomes ``[secret:<kind>#<h>]`` where ``<h>`` is the first four hex
digits of the SHA-256 of the secret's value. One value always gives one placeholder, so a secret
that comes back is recognisably the same; two values differ (1 pair in 65,536 collides). Only the
secret is replaced: a connection string keeps its scheme, user, host and database. Placeholders are
never detected again, so ``redact(redact(t).text) == redact(t)`` in text.

Kinds, most specific first (an earlier kind wins where two overlap):
    private-key        ``-----BEGIN ... PRIVATE KEY-----`` through its END line, lines and all
    anthropic-key      ``sk-ant-...``
    openai-key         ``sk-...``, ``sk-proj-...``, ``sk-svcacct-...`` (mixed case and digits)
    aws-access-key     ``AKIA``/``ASIA``/``ABIA``/``ACCA`` + 16
    github-token       ``ghp_ gho_ ghu_ ghs_ ghr_ github_pat_``
    gitlab-token       ``glpat-`` and GitLab's other prefixed tokens
    slack-webhook      ``https://hooks.slack.com/services/...`` (the whole URL)
    slack-token        ``xoxa- xoxb- xoxo- xoxp- xoxr- xoxs- xapp-``
    stripe-key         ``sk_live_ rk_live_ sk_test_ rk_test_ whsec_``
    google-api-key, huggingface-token, npm-token, pypi-token, sendgrid-key, twilio-key,
    telegram-token, azure-storage-key, discord-token, mailchimp-key, square-token
    jwt                three base64url segments, the first two starting ``eyJ``
    password           the password of any ``scheme://user:PASS@host`` URL, or a password given
                       in words (below)
    basic-auth         ``Authorization: Basic ...``
    token              ``Bearer ...``, or a token given in words
    aws-secret-key     40 base64 characters near ``aws_secret_access_key`` or after an access key
                       id; anywhere else only when random-looking (mixed case, digits, entropy)
    api-key            an API key given in words
    credential         a ``secret`` or ``client secret`` given in words

Secrets given in words: a keyword (password, passwd, passphrase, pwd, pw; api key, access key,
secret key; token, access/auth/refresh token; secret, client secret) then a value:
``password: v``, ``"password": "v"``, ``DB_PASSWORD=v``, ``--password v``, ``the staging password
is v``, ``the api key for stripe was v``, ``changed the root password to v``. The value is kept
when it says where a secret lives or what it is like rather than giving it: a stop word ("in
1Password", "stored in vault", "required", "expired"), a reference (``$VAR``, ``${VAR}``,
``<password>``, ``***``) or, after ``is``/``was``/``to``, a plain word with no digit, symbol or
inner capital ("the password is swordfish" is not caught; "the password is hunter2" is). After
``:`` or ``=`` a plain lowercase word followed by more prose is kept too ("token: expires
tomorrow"). Trailing ``.,;:`` and unbalanced closing brackets end a value; ``!`` and ``?`` stay.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["Finding", "Redaction", "contains_secret", "placeholder", "redact"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret that was replaced: its kind and placeholder, never its value."""

    kind: str
    placeholder: str


@dataclass(frozen=True, slots=True)
class Redaction:
    """A text with its secrets replaced, and what was replaced in order of position."""

    text: str
    found: tuple[Finding, ...]

    @property
    def count(self) -> int:
        """How many secrets were replaced."""
        return len(self.found)


def placeholder(kind: str, value: str) -> str:
    """The placeholder that stands for ``value`` of ``kind``."""
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return f"[secret:{kind}#{digest[:4]}]"


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` with its placeholder."""
    spans = _find(text)
    if not spans:
        return Redaction(text, ())
    parts: list[str] = []
    found: list[Finding] = []
    last = 0
    for start, end, kind in spans:
        mark = placeholder(kind, text[start:end])
        parts += (text[last:start], mark)
        found.append(Finding(kind, mark))
        last = end
    parts.append(text[last:])
    return Redaction("".join(parts), tuple(found))


def contains_secret(text: str) -> bool:
    """Whether ``text`` holds at least one secret that `redact` would replace."""
    return bool(_find(text))


# ---------------------------------------------------------------------------------------------
# Detection. Each detector yields (start, end, kind) candidates; `_find` keeps them in detector
# order, dropping any that overlaps a placeholder or an earlier, more specific secret.

Span = tuple[int, int, str]

PLACEHOLDER = re.compile(r"\[secret:[a-z0-9-]+#[0-9a-f]{4}\]")

_B64 = r"A-Za-z0-9+/"
_URLSAFE = r"A-Za-z0-9_\-"
_AWS_KEY_ID = r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"


def _random_looking(value: str) -> bool:
    """Has lowercase, uppercase and a digit: generated, not a word or a hex digest."""
    return (
        any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
    )


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


# (kind, pattern, group holding the secret, extra check on the secret or None)
_Shape = tuple[str, re.Pattern[str], int, Callable[[str], bool] | None]

_SHAPES: tuple[_Shape, ...] = tuple(
    (kind, re.compile(pattern, flags), group, check)
    for kind, pattern, flags, group, check in (
        (
            "private-key",
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.{0,20000}?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
            # No END line (a clipped paste): take the body, lines of base64 or of headers.
            r"|(?:(?:\\n|\s)+(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment): [^\n]*))*)",
            re.DOTALL,
            0,
            None,
        ),
        ("anthropic-key", rf"(?<![{_URLSAFE}])sk-ant-[{_URLSAFE}]{{20,}}", 0, 0, None),
        (
            "openai-key",
            rf"(?<![{_URLSAFE}])sk-(?:proj-|svcacct-|admin-)?[{_URLSAFE}]{{20,}}",
            0,
            0,
            _random_looking,
        ),
        ("aws-access-key", _AWS_KEY_ID, 0, 0, None),
        (
            "github-token",
            r"(?<![A-Za-z0-9_])(?:gh[pour]_[A-Za-z0-9_]{36,255}|ghs_[A-Za-z0-9_.\-]{36,1024}"
            r"|github_pat_[A-Za-z0-9_]{22,255})",
            0,
            0,
            None,
        ),
        (
            "gitlab-token",
            rf"(?<![{_URLSAFE}])(?:(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)"
            rf"-|GR1348941)[{_URLSAFE}]{{20,}}",
            0,
            0,
            None,
        ),
        (
            "slack-webhook",
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{10,}",
            0,
            0,
            None,
        ),
        ("slack-token", r"(?<![A-Za-z0-9])(?:xox[abposr]|xapp)-[A-Za-z0-9\-]{10,}", 0, 0, None),
        (
            "stripe-key",
            r"(?<![A-Za-z0-9])(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})",
            0,
            0,
            None,
        ),
        ("google-api-key", rf"(?<![{_URLSAFE}])AIza[{_URLSAFE}]{{35}}", 0, 0, None),
        ("huggingface-token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}", 0, 0, _random_looking),
        ("npm-token", r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}", 0, 0, None),
        ("pypi-token", rf"pypi-AgE[{_URLSAFE}]{{50,}}", 0, 0, None),
        ("sendgrid-key", rf"SG\.[{_URLSAFE}]{{22}}\.[{_URLSAFE}]{{43}}", 0, 0, None),
        ("twilio-key", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", 0, 0, None),
        (
            "telegram-token",
            rf"(?<![0-9])[0-9]{{8,10}}:[{_URLSAFE}]{{35}}(?![{_URLSAFE}])",
            0,
            0,
            _random_looking,
        ),
        ("azure-storage-key", rf"AccountKey=([{_B64}]{{86}}==)", 0, 1, None),
        (
            "discord-token",
            rf"(?<![{_URLSAFE}.])[MNO][{_URLSAFE}]{{23,25}}\.[{_URLSAFE}]{{6}}\.[{_URLSAFE}]{{27,38}}",
            0,
            0,
            _random_looking,
        ),
        ("mailchimp-key", r"(?<![0-9a-f])[0-9a-f]{32}-us[0-9]{1,2}(?![0-9])", 0, 0, None),
        ("square-token", rf"sq0(?:csp|atp)-[{_URLSAFE}]{{22,43}}", 0, 0, None),
        (
            "jwt",
            rf"(?<![{_URLSAFE}])eyJ[{_URLSAFE}]{{5,}}\.eyJ[{_URLSAFE}]{{5,}}\.[{_URLSAFE}]*",
            0,
            0,
            None,
        ),
        # The password of any scheme://user:password@host URL: userinfo cannot hold a raw "/", and
        # the last "@" before the host ends it, so an unescaped "@" in the password is covered.
        ("password", r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:@/]*:([^\s/]+)@", 0, 1, None),
        (
            "basic-auth",
            rf"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+([{_B64}]{{8,}}=*)",
            0,
            1,
            None,
        ),
        ("token", r"\b(?i:bearer)\s+([A-Za-z0-9._~+/\-]{16,}=*)", 0, 1, _random_looking),
    )
)


def _shapes(text: str) -> Iterator[Span]:
    for kind, pattern, group, check in _SHAPES:
        for m in pattern.finditer(text):
            if check is None or check(m.group(group)):
                yield m.start(group), m.end(group), kind


_AWS_SECRET = re.compile(rf"(?<![{_B64}=])[{_B64}]{{40}}(?![{_B64}=])")
_AWS_SECRET_NAME = re.compile(
    r"(?i:secret[_\s-]?access[_\s-]?key|aws[_\s-]?secret(?:[_\s-]?key)?)|SecretAccessKey"
)
_AWS_KEY_ID_AT = re.compile(_AWS_KEY_ID)


def _aws_secret_near_names(text: str) -> Iterator[Span]:
    """A 40-character key right after its name, or within 200 characters of a key id."""
    windows = [(m.end(), m.end() + 60) for m in _AWS_SECRET_NAME.finditer(text)]
    windows += [(m.end(), m.end() + 200) for m in _AWS_KEY_ID_AT.finditer(text)]
    for start, end in windows:
        for m in _AWS_SECRET.finditer(text, start, min(end, len(text))):
            yield m.start(), m.end(), "aws-secret-key"


def _aws_secret_alone(text: str) -> Iterator[Span]:
    """A bare 40-character key: only when random-looking, so paths and SHA-1s stay."""
    for m in _AWS_SECRET.finditer(text):
        value = m.group()
        if _random_looking(value) and value.count("/") < 3 and _entropy(value) >= 4.3:
            yield m.start(), m.end(), "aws-secret-key"


# Secrets given in words ----------------------------------------------------------------------

_FAMILIES = (
    ("password", r"password|passwd|passphrase|pwd|pw"),
    ("api-key", r"api[\s_.-]?key|apikey|api[\s_-]?secret|(?:access|secret)[\s_-]?key"),
    ("token", r"(?:(?:access|auth|refresh|session|bot|api|personal[\s_-]access)[\s_-]?)?token"),
    ("credential", r"(?:client[\s_-]?)?secret"),
)
_KEYWORD = "|".join(f"(?P<{kind.replace('-', '_')}>{words})" for kind, words in _FAMILIES)
_VALUE = r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`]\S{0,199})"
_PHRASE = re.compile(
    rf"(?P<dash>(?<=--))?(?P<kw>(?i:{_KEYWORD}))(?![A-Za-z0-9])"
    # "the password for the staging db is ...": a short qualifier before the verb
    r"(?:[ \t]+(?i:for|of|on|at)[ \t]+(?:[\w.@/-]+[ \t]+){0,2}?[\w.@/-]+)?"
    r"(?:(?P<assign>[\"']?[ \t]*(?::=|=>|[:=](?!=))(?:[ \t]*(?:\*\*|__))?[ \t]*)"
    r"|(?P<verb>[ \t]+(?i:is|was):?[ \t]+(?i:now[ \t]+|still[ \t]+|set[ \t]+to[ \t]+)?)"
    r"|(?P<to>[ \t]+(?i:to)[ \t]+)"
    r"|(?(dash)(?P<flag>[ \t]+)|(?!)))" + _VALUE
)
# Only keywords that can appear inside a phrase are worth the phrase regex.
_KEYWORD_HINTS = ("pass", "pw", "pwd", "key", "token", "secret")

_STOP_WORDS = frozenset(
    """a an the in on at to from for of by with via into inside under over is are was be been
    being it its this that these those my our your their his her not no none null nil empty blank
    unset undefined required optional needed mandatory missing wrong incorrect correct invalid
    valid expired expiring same different too very still now also only just there here available
    unavailable unknown tbd todo hidden redacted masked stored kept saved managed set changed
    reset rotated updated generated provided configured defined given shown printed logged leaked
    compromised weak strong long short secure insecure ok okay fine good bad new old default true
    false yes see check ask use using somewhere elsewhere rotate rotating change changing update
    updating revoke revoked please n/a na case-sensitive read-only short-lived long-lived
    per-user per-project hardcoded hard-coded encrypted hashed plaintext plain-text
    str bytes string text int bool any object secretstr password passwd pwd token secret key
    apikey api_key""".split()
)
_REFERENCE = re.compile(
    r"^(?:\$[({A-Za-z_]|[(!{]|%[A-Za-z_]+%|\{\{|<[^>]*>$|\*{3,}|[xX]{3,}$|\.\.\.|…|\[secret:"
    r"|(?:os\.environ|os\.getenv|getenv|process\.env|env\.|ENV\[|secrets\.)|[\W_]+$)"
)
# Names and expressions in code, not values: getpass(), cfg["pw"], args.password, new_password.
_CODE = re.compile(
    r"^(?:[A-Za-z_]+(?:\.[A-Za-z_]\w*)*[(\[]|[A-Za-z_]+(?:\.[A-Za-z_]\w*)+$"
    r"|[a-z]+(?:_[a-z]+)+$|[A-Z]+(?:_[A-Z]+)+$)"
)
_CAMEL = re.compile(r"[a-z][A-Z]")
_MORE_PROSE = re.compile(r"[ \t]+[a-z]")
# "changed the root password to x" gives a value; "pass the token to fetchUser" does not.
_SETTING_VERB = re.compile(r"(?i:\b(?:change|changed|set|reset|update|updated|rotated|switched)\b)")
_NEXT_PARAM = re.compile(r"[&;](?=[\w.\-]+=)")
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim(value: str) -> str:
    """Drop sentence punctuation and unbalanced closing brackets from the end of a value."""
    value = _NEXT_PARAM.split(value, maxsplit=1)[0]
    while value:
        last = value[-1]
        if last in ".,;:\"'":
            value = value[:-1]
        elif last in _CLOSERS and value.count(last) > value.count(_CLOSERS[last]):
            value = value[:-1]
        else:
            break
    return value


def _given(value: str, kind: str, form: str, quoted: bool, after: str, tight: bool) -> bool:
    """Whether a value after a keyword is the secret itself rather than talk about it."""
    if value.lower() in _STOP_WORDS or _REFERENCE.match(value):
        return False
    if len(value) < (4 if kind == "password" else 8):
        return False
    if kind != "password" and value.isdigit():
        return False  # "token: 4096" is a count, not a token
    if quoted:
        return True
    if _CODE.match(value):
        return False  # password=args.password, token = get_token(), api_key=api_key
    digit = any(c.isdigit() for c in value)
    # A hyphen joins words ("read-only"); any other symbol marks a made-up string.
    symbol = any(not c.isalnum() for c in value.replace("-", ""))
    if form in ("verb", "to"):
        return digit or symbol
    if not (digit or tight) and len(value) <= 12 and _MORE_PROSE.match(after):
        return False  # "token: GitHub's fine-grained one"; "pw=swordfish now" is still a value
    if kind != "password" and len(value) < 16:
        return digit or symbol or _CAMEL.search(value) is not None
    return True


def _phrases(text: str) -> Iterator[Span]:
    lowered = text.lower()
    if not any(hint in lowered for hint in _KEYWORD_HINTS):
        return
    for m in _PHRASE.finditer(text):
        before = text[m.start() - 1] if m.start() else " "
        kind = next(k for k, _ in _FAMILIES if m.group(k.replace("-", "_")))
        # A keyword starts a word, a snake/kebab/dotted segment or a camelCase hump.
        keyword = m.group("kw")
        if before.isalnum() and not (
            keyword.lower().startswith("pass") or (before.islower() and keyword[0].isupper())
        ):
            continue
        form = next(f for f in ("assign", "verb", "to", "flag") if m.group(f) is not None)
        if form == "to" and not _SETTING_VERB.search(text, max(0, m.start() - 40), m.start()):
            continue
        raw, start = m.group("value"), m.start("value")
        quoted = raw[0] in "\"'`" and raw[-1] == raw[0] and len(raw) > 1
        value = raw[1:-1] if quoted else _trim(raw)
        start += 1 if quoted else 0
        end = start + len(value)
        tight = m.group("assign") == "="
        if value and _given(value, kind, form, quoted, text[end : end + 3], tight):
            yield start, end, kind


_DETECTORS: tuple[Callable[[str], Iterator[Span]], ...] = (
    _shapes,
    _aws_secret_near_names,
    _phrases,
    _aws_secret_alone,
)


def _find(text: str) -> list[Span]:
    """Non-overlapping secret spans in order of position; placeholders are never secrets."""
    taken = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)] if "[secret:" in text else []
    spans: list[Span] = []
    for detect in _DETECTORS:
        for start, end, kind in detect(text):
            if start < end and not any(s < end and start < e for s, e in taken):
                taken.append((start, end))
                spans.append((start, end, kind))
    spans.sort()
    return spans
