"""Find secrets in text and replace each with a typed, value-stable placeholder.

Every text that enters dreamer (notes, ingested transcripts and files, the seed migration, agent
tools) passes `redact` before it reaches storage or an LLM request.

Placeholder rule: a secret becomes ``[secret:<kind>#<h>]`` where ``<h>`` is the first four hex
digits of the SHA-256 of the secret's value. One value always gives one placeholder, so a secret
that comes back is recognisably the same; two values differ but for a 1-in-65,536 chance. Only the
secret is replaced: a connection string keeps its scheme, user, host and database. Placeholders are
never detected again, and redact repeats until nothing new is found, so
``redact(redact(t).text).text == redact(t).text``.

Detectors, in order (where two overlap, the earlier wins):
    1. the ruleset: gitleaks' 221 rules loaded as data (`dreamer.support.secrets_rules`), all
       but its generic rule; a rule's kind is its gitleaks id, or the name dreamer always used
       (aws-access-key, github-token, anthropic-key, openai-key, slack-token, stripe-key ...);
    2. shapes the ruleset reads narrower than real keys are written, or not at all (each says
       why below): private keys clipped before their END line, ``sk-ant-``/``sk-`` keys of any
       length, AWS key ids with any digit, GitHub tokens longer than 36, Stripe test and webhook
       keys, Hugging Face tokens with digits, Telegram, Discord, Mailchimp, Square, Azure
       storage keys with no name before them, Google OAuth client secrets and tokens, Docker
       Hub, New Relic and Mapbox keys, Mailgun ``key-``, Discord webhooks, JWTs, password
       hashes (``$apr1$``, ``$2b$``, ``$6$``, argon2); the password of any
       ``scheme://user:PASS@host`` URL and a key as a URL's whole user
       (``https://<key>@o1.ingest.sentry.io/2``), ``curl -u user:PASS``, ``mysql -pPASS``,
       ``sshpass -p PASS``, ``Authorization: Basic/Bearer``;
    3. an ``aws-secret-key``: 40 base64 characters near ``aws_secret_access_key`` or after a key
       id;
    4. secrets given in words (below): password, token, api-key, credential; "my password ...
       is sunflower" (someone's password, a plain word ending the sentence); a generated string
       right after key, token, secret or password ("algolia admin key 57f63d65...");
    5. passphrases, passcodes and PINs said in a sentence ("the wifi passphrase is copper
       lantern orbit meadow", "the door code is 482913"): password, pin;
    6. logins written as ``user / password`` or ``user:password`` after login, credentials,
       creds, sign-in: password;
    7. the ruleset's generic rule (a keyword, an assignment, a high-entropy value): credential;
    8. payment card numbers: 13-19 digits with a card prefix and a valid Luhn digit, plain or
       grouped 4-4-4-4 / 4-6-5 by spaces or dashes: card-number; an IBAN whose mod-97 check
       holds: iban; a social security number named as one: ssn;
    9. a bare 40-character AWS secret key, only when random-looking.

Secrets given in words: a keyword (password, passwd, passphrase, pwd, pw; api key, access key,
secret key; token, access/auth/refresh token; secret, client secret) then a value:
``password: v``, ``"password": "v"``, ``DB_PASSWORD=v``, ``--password v``, ``my password for the
router admin page is v``, ``the api key for stripe was v``, ``changed the root password to v``.
The value is kept when it talks about a secret instead of giving one:
- a stop word: "the password is in 1Password", "is stored in vault", "required", "expired";
- a stand-in or a pointer: ``$VAR``, ``${VAR}``, ``<password>``, ``***``, ``sk-ant-...``, a path,
  an example value (``'placeholder'``, ``'your-api-key-here'``, ``changeme``);
- code: ``password=args.password``, ``token = get_token()``, ``token: AccessToken``,
  ``api_key=api_key``, ``"ANTHROPIC_API_KEY"``;
- after ``is``/``was``/``to``/a bare ``--flag``, a value with no digit and no symbol: so "the
  password is hunter2" is caught and "the password is swordfish" is not (a plain word cannot be
  told from prose; words after "passphrase" are caught by detector 5); ``to`` counts only after
  a setting verb ("changed/set/reset ... to");
- after ``:`` (not a tight ``=``), a short plain word followed by more prose ("token: expires
  tomorrow"); a password that is a plain word alone is a value ("password: swordfish",
  "pw=swordfish now"), while a token, key or secret under 16 characters needs a digit, a symbol
  or an inner capital.
Trailing ``.,;:`` and unbalanced closing brackets end a value; ``!`` and ``?`` stay.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from dreamer.support import secrets_rules

__all__ = ["PLACEHOLDER", "Finding", "Redaction", "contains_secret", "placeholder", "redact"]


class _Lazy:
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
    marks: list[tuple[int, Finding]] = []
    spans = _find(text)
    # A replacement can change what a later secret's context looks like ("password: swordfish
    # sk-ant-..." reads as prose until the key becomes a placeholder), so repeat until nothing
    # new is found: that makes redact idempotent by construction. Each round removes text that
    # is not a placeholder, so the loop ends; almost always after one round.
    while spans:
        parts: list[str] = []
        new_marks: list[tuple[int, Finding]] = []
        ends: list[int] = []
        shifts: list[int] = []
        last = shift = 0
        for start, end, kind in spans:
            mark = placeholder(kind, text[start:end])
            parts += (text[last:start], mark)
            new_marks.append((start + shift, Finding(kind, mark)))
            shift += len(mark) - (end - start)
            ends.append(end)
            shifts.append(shift)
            last = end
        parts.append(text[last:])
        moved = [(at + _shift_before(at, ends, shifts), f) for at, f in marks]
        marks = sorted(moved + new_marks, key=lambda mark: mark[0])
        text = "".join(parts)
        spans = _find(text)
    return Redaction(text, tuple(finding for _, finding in marks))


def _shift_before(at: int, ends: list[int], shifts: list[int]) -> int:
    """How far replacements that end at or before ``at`` moved it."""
    index = bisect.bisect_right(ends, at)
    return shifts[index - 1] if index else 0


def contains_secret(text: str) -> bool:
    """Whether ``text`` holds at least one secret that `redact` would replace."""
    return bool(_find(text))


# ---------------------------------------------------------------------------------------------
# Detection. Each detector yields (start, end, kind) candidates; `_find` keeps them in detector
# order, dropping any that overlaps a placeholder or an earlier, more specific secret. Patterns
# start with a literal where they can (no leading lookbehind): Python's re then skips ahead with
# a fast substring search, which is what keeps a 100 KB transcript in milliseconds.

Span = tuple[int, int, str]

PLACEHOLDER = _Lazy(r"\[secret:[a-z0-9-]+#[0-9a-f]{4}\]")  # what redact writes

_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_WORD = _ALNUM | {"_"}
_URLSAFE = _WORD | {"-"}
_B64 = r"A-Za-z0-9+/"
_U = r"A-Za-z0-9_\-"  # base64url, in a character class


def _random_looking(value: str) -> bool:
    """Has lowercase, uppercase and a digit: generated, not a word or a hex digest."""
    return (
        any(c.islower() for c in value)
        and any(c.isupper() for c in value)
        and any(c.isdigit() for c in value)
    )


def _written_out(value: str) -> bool:
    """Not a stand-in for a password: PASS, ${PW}, <password>, ***, pw."""
    if _REFERENCE.match(value):
        return False
    return not (value.isalpha() and (value.isupper() or value.lower() in _STOP_WORDS))


def _user_password(value: str) -> bool:
    """Written out, and not a number: ``docker run -u 1000:1000`` is a user and a group."""
    return _written_out(value) and not value.isdigit()


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


@dataclass(frozen=True, slots=True)
class _Shape:
    """A token with a recognisable shape; ``group`` is the part that is secret."""

    kind: str
    pattern: _Lazy
    group: int = 0
    check: Callable[[str], bool] | None = None
    not_after: frozenset[str] = frozenset()  # the character before the match must not be one
    # Characters that must run, (min, max) long, right before the match (then part of it).
    run_before: tuple[frozenset[str], int, int] | None = None
    hint: tuple[str, ...] = ()  # the text must hold one of these (lowercased) for it to run

    def spans(self, text: str) -> Iterator[Span]:
        for m in self.pattern.finditer(text):
            start, end = m.span(self.group)
            if self.run_before is not None:
                chars, least, most = self.run_before
                first = start
                while first > 0 and start - first < most and text[first - 1] in chars:
                    first -= 1
                if start - first < least or (first > 0 and text[first - 1] in chars):
                    continue
                start = first
            if start > 0 and text[start - 1] in self.not_after:
                continue
            if self.check is None or self.check(text[start:end]):
                yield start, end, self.kind


def _shape(
    kind: str,
    pattern: str,
    flags: int = 0,
    *,
    group: int = 0,
    check: Callable[[str], bool] | None = None,
    not_after: frozenset[str] = frozenset(),
    run_before: tuple[frozenset[str], int, int] | None = None,
    hint: tuple[str, ...],
) -> _Shape:
    return _Shape(kind, _Lazy(pattern, flags), group, check, not_after, run_before, hint)


# Shapes the ruleset misses or reads narrower than real keys are written, kept as a supplement.
# Each is here because a case in tests/test_secrets.py or benchmarks/secrets/ shows the gap.
_HEX_KEY = _Lazy(r"[0-9a-f]{32,}")
_AWS_KEY_ID = _shape(
    "aws-access-key",
    # gitleaks takes base32 ids only ([A-Z2-7]); ids in docs and old tools use any digit.
    r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
    not_after=_ALNUM,
    hint=("akia", "asia", "abia", "acca", "a3t"),
)
_SHAPES = (
    _shape(
        "private-key",
        # gitleaks needs the END line; a clipped paste has none: take the body, lines of base64
        # or of PEM headers.
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.{0,20000}?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:(?:\\n|\s)+(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment): [^\n]*))*)",
        re.DOTALL,
        hint=("-----begin",),
    ),
    # gitleaks: only sk-ant-api03- of exactly 93 characters and AA.
    _shape("anthropic-key", rf"sk-ant-[{_U}]{{20,}}", not_after=_URLSAFE, hint=("sk-ant-",)),
    _shape(
        "openai-key",
        # gitleaks: only keys with the T3BlbkFJ marker.
        rf"sk-(?:proj-|svcacct-|admin-)?[{_U}]{{20,}}",
        not_after=_URLSAFE,
        check=_random_looking,
        hint=("sk-",),
    ),
    _AWS_KEY_ID,
    _shape(
        "github-token",
        # gitleaks: exactly 36 characters (a longer token would keep its tail), no ghs_APPID_JWT.
        r"gh(?:[pour]_[A-Za-z0-9_]{36,255}|s_[A-Za-z0-9_.\-]{36,1024})"
        r"|github_pat_[A-Za-z0-9_]{22,255}",
        not_after=_WORD,
        hint=("gh", "github_pat_"),
    ),
    # gitleaks: xoxp/xoxb of fixed layouts only.
    _shape(
        "slack-token",
        r"x(?:ox[abposr]|app)-[A-Za-z0-9\-]{10,}",
        not_after=_ALNUM,
        hint=("xox", "xapp-"),
    ),
    # gitleaks: live keys only, and no webhook secret.
    _shape("stripe-key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", not_after=_ALNUM, hint=("k_",)),
    _shape("stripe-key", r"whsec_[A-Za-z0-9]{24,}", not_after=_ALNUM, hint=("whsec_",)),
    # gitleaks: letters only after hf_.
    _shape(
        "huggingface-token",
        r"hf_[A-Za-z0-9]{30,}",
        not_after=_WORD,
        check=_random_looking,
        hint=("hf_",),
    ),
    # gitleaks: only with "telegram" named before it.
    _shape(
        "telegram-token",
        rf":[{_U}]{{35}}(?![{_U}])",
        run_before=(frozenset("0123456789"), 8, 10),
        check=_random_looking,
        hint=(":",),
    ),
    # gitleaks: only with "AccountKey" in a named setting it knows; any connection string here.
    _shape(
        "azure-storage-key",
        rf"AccountKey=([{_B64}]{{86}}==)",
        group=1,
        hint=("accountkey=",),
    ),
    # gitleaks: only with "discord" named before it.
    _shape(
        "discord-token",
        rf"[MNO][{_U}]{{23,25}}\.[{_U}]{{6}}\.[{_U}]{{27,38}}",
        not_after=_URLSAFE | {"."},
        check=_random_looking,
        hint=(".",),
    ),
    # gitleaks: only with "mailchimp" named before it.
    _shape(
        "mailchimp-key",
        r"-us[0-9]{1,2}(?![0-9])",
        run_before=(frozenset("0123456789abcdef"), 32, 32),
        hint=("-us",),
    ),
    # gitleaks: sq0atp-/EAAA only, fixed lengths.
    _shape("square-token", rf"sq0(?:csp|atp)-[{_U}]{{22,43}}", hint=("sq0",)),
    # gitleaks has no rule for these.
    _shape("google-oauth-secret", rf"GOCSPX-[{_U}]{{28}}", not_after=_URLSAFE, hint=("gocspx-",)),
    _shape("docker-token", rf"dckr_pat_[{_U}]{{27,}}", not_after=_WORD, hint=("dckr_pat_",)),
    _shape(
        "discord-webhook",
        rf"discord(?:app)?\.com/api/webhooks/[0-9]{{17,20}}/([{_U}]{{60,}})",
        group=1,
        hint=("discord",),
    ),
    # gitleaks: only after "mailgun" or "newrelic" and an = or :.
    _shape("mailgun-key", r"key-[0-9a-f]{32}(?![0-9a-zA-Z])", not_after=_URLSAFE, hint=("key-",)),
    _shape(
        "new-relic-key",
        r"NR(?:AK|II|JS|IQ)-[A-Z0-9]{19,32}(?![A-Za-z0-9])",
        not_after=_URLSAFE,
        hint=("nrak-", "nrii-", "nrjs-", "nriq-"),
    ),
    _shape(
        "mapbox-token",
        rf"sk\.eyJ[{_U}]{{20,}}\.[{_U}]{{20,}}",
        not_after=_URLSAFE,
        hint=("sk.eyj",),
    ),
    _shape("google-oauth-token", rf"ya29\.[{_U}]{{30,}}", not_after=_URLSAFE, hint=("ya29.",)),
    _shape("google-oauth-token", rf"1//0[{_U}]{{40,}}", not_after=_URLSAFE, hint=("1//0",)),
    # A password hash (htpasswd, shadow, bcrypt, argon2) can be cracked offline: it goes too.
    _shape(
        "password-hash",
        r"\$(?:apr1|2[abxy]|[156]|y|argon2(?:id|i|d))\$[^\s:\"'`]{20,}",
        hint=("$",),
    ),
    _shape(
        "jwt",
        rf"eyJ[{_U}]{{5,}}\.eyJ[{_U}]{{5,}}\.[{_U}]*",
        not_after=_URLSAFE,
        hint=("eyj",),
    ),
    # The password of a scheme://user:password@host URL: userinfo cannot hold a raw "/", and
    # the last "@" before the host ends it, so an unescaped "@" in the password is covered.
    _shape("password", r"://[^\s:@/]*:([^\s/]+)@", group=1, check=_written_out, hint=("://",)),
    # A key as the whole userinfo: https://<key>@o1.ingest.sentry.io/2 (a Sentry DSN),
    # https://<token>@github.com/org/repo.git.
    _shape(
        "url-key",
        r"://([A-Za-z0-9_\-]{20,})[:@]",
        group=1,
        check=lambda v: _random_looking(v) or _HEX_KEY.fullmatch(v) is not None,
        hint=("://",),
    ),
    # Passwords on command lines: curl -u user:pw, mysql -pPW, sshpass -p pw.
    _shape(
        "password",
        r"-u[ \t]+[\"']?[^\s:\"'`]+:([^\s\"'`]+)",
        group=1,
        not_after=_URLSAFE,
        check=_user_password,
        hint=("-u",),
    ),
    _shape(
        "password",
        r"--user[ \t=]+[\"']?[^\s:\"'`]+:([^\s\"'`]+)",
        group=1,
        check=_user_password,
        hint=("--user",),
    ),
    _shape(
        "password",
        r"mysql(?:dump|admin)?\b[^\n]*?[ \t]-p([^\s\"'`-][^\s\"'`]*)",
        group=1,
        check=_written_out,
        hint=("mysql",),
    ),
    _shape(
        "password",
        r"sshpass[ \t]+-p[ \t]*[\"']?([^\s\"'`]+)",
        group=1,
        check=_written_out,
        hint=("sshpass",),
    ),
    _shape(
        "basic-auth",
        rf"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+([{_B64}]{{8,}}=*)",
        group=1,
        hint=("authorization",),
    ),
    _shape(
        "token",
        r"(?i:bearer)\s+([A-Za-z0-9._~+/\-]{16,}=*)",
        group=1,
        check=_random_looking,
        hint=("bearer",),
    ),
)


def _shapes(text: str, lowered: str) -> Iterator[Span]:
    for shape in _SHAPES:
        if any(word in lowered for word in shape.hint):
            yield from shape.spans(text)


# The ruleset's generic rule (a keyword, an assignment, a high-entropy value) runs after the
# prose rules below, which read the same keywords more closely.
_GENERIC = frozenset({"generic-api-key"})


def _ruleset(text: str, lowered: str) -> Iterator[Span]:
    return secrets_rules.spans(text, lowered, skip=_GENERIC)


def _ruleset_generic(text: str, lowered: str) -> Iterator[Span]:
    return secrets_rules.spans(text, lowered, only=_GENERIC)


_AWS_SECRET = _Lazy(rf"(?<![{_B64}=])[{_B64}]{{40}}(?![{_B64}=])")
_CAPITALISED_WORD = _Lazy(r"[A-Z][a-z]{5,}")
_LONG_LOWER_RUN = _Lazy(r"[a-z]{8}")
_AWS_SECRET_NAME = _Lazy(r"secret[_\s-]?access[_\s-]?key|aws[_\s-]?secret")


def _aws_secret_near_names(text: str, lowered: str) -> Iterator[Span]:
    """A 40-character key right after its name, or within 200 characters of a key id."""
    windows = [(end, end + 200) for _, end, _ in _AWS_KEY_ID.spans(text)]
    if "secret" in lowered:
        windows += [(m.end(), m.end() + 60) for m in _AWS_SECRET_NAME.finditer(lowered)]
    for start, end in windows:
        for m in _AWS_SECRET.finditer(text, start, min(end, len(text))):
            yield m.start(), m.end(), "aws-secret-key"


def _aws_secret_alone(text: str, lowered: str) -> Iterator[Span]:
    """A bare 40-character key: only when random-looking, so paths and SHA-1s stay."""
    for m in _AWS_SECRET.finditer(text):
        value = m.group()
        if (
            _random_looking(value)
            and value.count("/") < 3
            # Words make an identifier: BetaAsyncComputerToolset20260801, _ZNKSt10filesystem4path
            and len(_CAPITALISED_WORD.findall(value)) < 2
            and not _LONG_LOWER_RUN.search(value)
            and _entropy(value) >= 4.3
        ):
            yield m.start(), m.end(), "aws-secret-key"


# Secrets given in words ----------------------------------------------------------------------
# Found in two steps: the keyword's last word in the lowercased text (a cheap search), then the
# separator and value from there in the original text.

_KEYWORD = _Lazy(
    r"(?:pass(?:word|wd|phrase)|pwd|pw|token|secret(?:[\s_-]?(?:access[\s_-]?)?key)?|key)"
    r"(?![a-z0-9])"
)
_KEY_PREFIX = _Lazy(r"(?:api|access)[\s_.-]?$")  # "key" alone is no keyword: "api key" is
_TAIL = _Lazy(
    # "the password for the staging db is ...": a short qualifier before the verb
    r"(?:(?:[ \t]+(?i:for|of|on|at)[ \t]+(?:[\w.@/-]+[ \t]+){0,3}?[\w.@/-]+"
    # "the password we agreed on is ...", "the password that I use is ..."
    r"|[ \t]+(?i:(?:that|which)[ \t]+)?(?i:we|i|you|they|he|she)[ \t]+[\w']+"
    r"(?:[ \t]+(?i:on|for|to|with|me|us|them))?)"
    # only before =, a dash or "is"
    r"(?=[\"']?[ \t]*(?::=|=>|[:=](?!=))|[ \t]+(?i:is|was)[ \t]|[ \t](?:—|–|-{1,2}|->|→)[ \t]))?"
    r"(?:(?P<assign>[\"']?[ \t]*(?::=|=>|[:=](?!=)|[ \t](?:—|–|-{1,2}|->|→)(?=[ \t]))"
    r"(?:[ \t]*(?:\*\*|__))?[ \t]*)"
    r"|(?P<verb>[ \t]+(?i:is|was):?[ \t]+(?i:now[ \t]+|still[ \t]+|set[ \t]+to[ \t]+)?)"
    r"|(?P<to>[ \t]+(?i:to|as)[ \t]+)"
    r"|(?P<flag>,?[ \t]+))"  # "the password, Tr0ub4dor&3, works": an aside, as a bare value
    r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`]\S{0,199})"
)
_FLAG = _Lazy(r"--[\w-]*$")
_JOINED_WORDS = _Lazy(r"[A-Za-z]+(?:-[A-Za-z]+){2,}")
# Values that stand in for a secret in examples and fixtures: token='placeholder',
# api_key = 'your-api-key-here', password: "changeme", key: "<redacted>".
_STAND_IN = _Lazy(
    r"(?i)placeholder|^your[\W_]|[\W_]here$|^(?:dummy|example|sample|fake|changeme|change[-_]me"
    r"|redacted|secret|test|testing|foo|bar|baz|foobar|todo|fixme|xxx+|\.\.\.)$"
)
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
    str bytes string text int bool any object secretstr password passwd pwd pw pass token secret
    key apikey api_key user username login name value creds credentials auth
    and or but then so if when while field fields form box""".split()
)
_REFERENCE = _Lazy(
    r"^(?:\$[({A-Za-z_]|%[A-Za-z_]+%|<[^>]*>|\*{3,}|[xX]{3,}$|.*(?:\.\.\.|…)$|[\W_]+$"
    r"|[(!{\[\\]|[rbfuRBFU]{1,2}[\"']"  # an expression, a YAML tag, a regex or an f-string
    r"|/|~/|\.\.?/"  # a path: password: /run/secrets/db, NOPASSWD: /bin/systemctl
    r"|os\.environ|os\.getenv|getenv|process\.env|env\.|ENV\[|secrets\.)"
)
# Names and expressions in code, not values: getpass(), cfg["pw"], args.password, new_password,
# and type names (token: AccessToken).
_CODE = _Lazy(
    r"^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[(\[]|[A-Za-z_]+(?:\.[A-Za-z_]\w*)+$"
    r"|[a-z]+(?:_[a-z]+)+$|[A-Z]+(?:_[A-Z]+)+$|[A-Z][A-Za-z]*[a-z][A-Z][A-Za-z]*$)"
)
_NAME = _Lazy(r"^(?:[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+)$")
_CHAINED = _Lazy(r"[ \t]*=(?!=)")  # chained assignment: userid = passwd = acct = ""
_CAMEL = _Lazy(r"[a-z][A-Z]")
_WORD_THEN_STOP = _Lazy(r"[A-Za-z]+(?:[.,;:!?<]|&\w+;)")
_MORE_PROSE = _Lazy(r"[ \t]+[a-z]")
# "changed the root password to x" gives a value; "pass the token to fetchUser" does not.
_SETTING_VERB = _Lazy(r"\b(?:change|changed|set|reset|update|updated|rotated|switched)\b")
_NEXT_PARAM = _Lazy(r"[&;](?=[\w.\-]+=)")
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}


def _trim(value: str) -> str:
    """Drop sentence punctuation and unbalanced closing brackets from the end of a value."""
    value = _NEXT_PARAM.split(value, maxsplit=1)[0]
    while value:
        last = value[-1]
        if last in ".,;:\"'`":
            value = value[:-1]
        elif last in _CLOSERS and value.count(last) > value.count(_CLOSERS[last]):
            value = value[:-1]
        else:
            break
    return value


def _given(value: str, kind: str, form: str, quoted: bool, after: str, tight: bool) -> bool:
    """Whether a value after a keyword is the secret itself rather than talk about it."""
    if value.lower() in _STOP_WORDS or _REFERENCE.match(value) or _STAND_IN.search(value):
        return False
    if len(value) < (4 if kind == "password" else 8):
        return False
    if kind != "password" and value.isdigit():
        return False  # "token: 4096" is a count, not a token
    if quoted:
        return not _NAME.match(value)  # ENV_API_KEY = "ANTHROPIC_API_KEY"
    if _CODE.match(value) or _CHAINED.match(after):
        return False  # password=args.password, token = get_token(), api_key=api_key
    digit = any(c.isdigit() for c in value)
    # A hyphen joins words ("read-only"); any other symbol marks a made-up string.
    symbol = any(not c.isalnum() for c in value.replace("-", ""))
    if form in ("verb", "to", "flag"):
        if kind == "password" and _JOINED_WORDS.fullmatch(value) and len(value) >= 14:
            return True  # "the wifi password is correct-horse-battery-staple"
        # "the token was supplied.</p>", "Password is correct.&quot;": a word ending a sentence
        return (digit or symbol) and not _WORD_THEN_STOP.match(value)
    if not (digit or tight) and len(value) <= 12 and _MORE_PROSE.match(after):
        return False  # "token: GitHub's fine-grained one"; "pw=swordfish now" is still a value
    if kind != "password" and len(value) < 16:
        return digit or symbol or _CAMEL.search(value) is not None
    return True


def _made_up(value: str) -> bool:
    """A string no prose has: 8+ characters, letters and digits, and a symbol or mixed case."""
    if len(value) < 8 or _CODE.match(value) or _REFERENCE.match(value):
        return False
    letters = [c for c in value if c.isalpha()]
    symbol = any(not c.isalnum() for c in value.replace("-", ""))
    mixed = any(c.isupper() for c in letters) and any(c.islower() for c in letters)
    return bool(letters) and any(c.isdigit() for c in value) and (symbol or mixed)


def _keyword(text: str, lowered: str, m: re.Match[str]) -> tuple[int, str] | None:
    """Where the keyword found by ``m`` starts, and its family; None if it is no keyword."""
    word, start = m.group(), m.start()
    if word == "key":
        prefix = _KEY_PREFIX.search(lowered, max(0, start - 7), start)
        if prefix is None:
            return None
        start = prefix.start()
    before = text[start - 1] if start else " "
    # A keyword starts a word, a snake/kebab/dotted segment or a camelCase hump; "password" and
    # "token" also end run-together names (rootpassword, authtoken).
    if before.isalnum() and not (
        word.startswith("pass") or word == "token" or (before.islower() and text[start].isupper())
    ):
        return None
    if word == "key" or word.endswith("key"):
        return start, "api-key"
    if word == "token":
        return start, "token"
    if word == "secret":
        return start, "credential"
    return start, "password"


def _phrases(text: str, lowered: str) -> Iterator[Span]:
    done = 0
    for m in _KEYWORD.finditer(lowered):
        if m.start() < done:
            continue
        keyword = _keyword(text, lowered, m)
        tail = _TAIL.match(text, m.end()) if keyword else None
        if keyword is None or tail is None:
            continue
        start, kind = keyword
        if text[start - 1 : start] == "[" and text[m.end() : m.end() + 1] == ":":
            continue  # "[secret:kind#hash]" is how a placeholder is spelled out, not a secret
        form = next(f for f in ("assign", "verb", "to", "flag") if tail.group(f) is not None)
        if form == "flag" and not _FLAG.search(text, max(0, start - 30), start):
            # "the db password hunter2-Blue! is old": a bare value only when made up; "okta
            # api token 00TOWF...": any keyword before a generated string.
            bare = _trim(tail.group("value"))
            if not ((kind == "password" and _made_up(bare)) or _strong(bare)):
                continue
        if form == "to" and not _SETTING_VERB.search(lowered, max(0, start - 40), start):
            continue
        raw, value_start = tail.group("value"), tail.start("value")
        quoted = raw[0] in "\"'`" and raw[-1] == raw[0] and len(raw) > 1
        value = raw[1:-1] if quoted else _trim(raw)
        value_start += 1 if quoted else 0
        end = value_start + len(value)
        tight = tail.group("assign") == "="
        after = text[end : end + 4]
        if value and (
            _given(value, kind, form, quoted, after, tight)
            or (form == "verb" and kind == "password" and _owned(lowered, start, value, after))
        ):
            done = end
            yield value_start, end, kind


_OWNER = _Lazy(r"\b(?:my|our|your|his|her|their|\w+'s)(?:[ \t]+[\w'-]+){0,3}[ \t]*$")
_DESCRIBING = _Lazy(r"(?:ed|ing|ly|able|ible|ive|ous|ful|less)$")


def _owned(lowered: str, start: int, value: str, after: str) -> bool:
    """ "my password for the router is sunflower": a plain word is a password when someone's
    password "is" it and it ends the sentence (not "my password is outdated", "... is in 1P")."""
    return (
        value.isalpha()
        and len(value) >= 4
        and value.lower() not in _STOP_WORDS
        and not _DESCRIBING.search(value.lower())
        and (after[:1] in ("", "\n", ".", "!", ",", ";") and not after[1:2].isalnum())
        and _OWNER.search(lowered, max(0, start - 40), start) is not None
    )


_STRONG = _Lazy(r"[A-Za-z0-9_\-./+=~]{20,200}")
_HEX = frozenset("0123456789abcdefABCDEF")


def _strong(value: str) -> bool:
    """A generated string no prose or code holds: 20+ characters, and mixed case with a digit,
    or 32+ hex digits, or letters and digits of high entropy with no word joined by a hyphen."""
    if not _STRONG.fullmatch(value) or _REFERENCE.match(value) or _CODE.match(value):
        return False
    if _random_looking(value) and not _STAND_IN.search(value):
        return True
    if len(value) >= 32 and set(value) <= _HEX:
        return True
    letters = any(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    return letters and digits >= 3 and "-" not in value and _entropy(value) >= 4.0


_BARE_KEY = _Lazy(
    r"\b(?P<word>(?:api[ _-]?)?keys?|tokens?|secrets?|pass(?:word|wd)?s?|pwd)\b"
    r"(?:[ \t]+(?:is|was))?[ \t]*[:=]?[ \t]*(?P<value>[A-Za-z0-9_\-./+=~]{20,200})",
)  # runs on the lowercased text


def _bare_keys(text: str, lowered: str) -> Iterator[Span]:
    """A generated string right after key, token, secret or password: "algolia admin key
    57f63d65..." (the phrases above need "api key" or a verb; here the value proves itself)."""
    if not any(word in lowered for word in ("key", "token", "secret", "pass", "pwd")):
        return
    for m in _BARE_KEY.finditer(lowered):
        value = _trim(text[m.start("value") : m.end("value")])
        if _strong(value):
            word = m.group("word").lower()
            kind = (
                "password"
                if word.startswith("p")
                else "token"
                if word.startswith("token")
                else "credential"
                if word.startswith("secret")
                else "api-key"
            )
            yield m.start("value"), m.start("value") + len(value), kind


# Secrets in prose the ruleset cannot read ------------------------------------------------------
# Passphrases and PINs said in a sentence, credentials written as user / password, and card
# numbers. Each detector runs only when its cheap hint is in the text.

_SAID = _Lazy(
    r"\b(?P<word>pass[ -]?phrase|pass[ -]?code|pin(?:[ -]code)?|(?:door|alarm|access|gate|safe)"
    r"[ -]code)s?\b"
    # "the passphrase for my ssh key is ...": a short qualifier before the verb
    r"(?:[ \t]+(?:for|of|on|to|at)[ \t]+(?:[\w.@/'-]+[ \t]+){0,3}?[\w.@/'-]+)?"
    r"(?:[ \t]+(?:is|was|are)(?:[ \t]+(?:now|still))?[ \t]+|[ \t]*[:=][ \t]*)"
    r"(?P<value>\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'"
    r"|[^\s.,;:!?\"'`()]+(?:[ \t]+[^\s.,;:!?\"'`()]+){0,7})",
)  # runs on the lowercased text
_SAID_HINTS = ("pass", "pin", "code")
_GRAMMAR = frozenset(
    """a an the in on at to from for of by with via into is are was were be been it its this
    that these those my our your their his her not no and or but if then than so as required
    needed stored kept saved managed set changed reset rotated updated generated provided
    configured shown printed written sentence words word characters chars long""".split()
)


def _said(text: str, lowered: str) -> Iterator[Span]:
    """A passphrase (words and all), a passcode or a PIN given in a sentence."""
    if not any(hint in lowered for hint in _SAID_HINTS):
        return
    for m in _SAID.finditer(lowered):
        start = m.start("value")
        value = text[start : m.end("value")]
        if value[0] in "\"'":
            value, start = value[1:-1], start + 1
        words = value.split()
        lowered_words = [w.lower() for w in words]
        if not words or _REFERENCE.match(value):
            continue
        if "phrase" in m.group("word").lower():
            # A passphrase is words: take them to the end of the clause. Three words or more
            # with no word of grammar are one ("correct horse battery staple"); fewer must
            # hold no stop word ("is required", "is stored in vault").
            prose = _GRAMMAR if len(words) >= 3 else _STOP_WORDS
            if any(w in prose for w in lowered_words) or _STAND_IN.search(value):
                continue
            yield start, start + len(value), "password"
            continue
        if len(words) != 1 or lowered_words[0] in _STOP_WORDS:
            continue
        if value.isdigit() and 4 <= len(value) <= 12:
            yield start, start + len(value), "pin"
        elif _made_up(value) and "pass" in m.group("word").lower():
            yield start, start + len(value), "password"


_LOGIN = _Lazy(
    r"\b(?:log[ -]?in|log[ -]?on|sign[ -]?in|credentials?|creds|u/p"
    r"|user(?:name)?[ \t]*/[ \t]*pass(?:word)?)\b"
    r"[^\n]{0,40}?(?:[:=]|\b(?:is|are|was|were)\b)?[ \t]+"
    r"(?P<user>[\w.@+\-]{1,64})(?:[ \t]*/[ \t]*|:)(?P<password>[^\s/\"'`]{3,128})",
)  # runs on the lowercased text


_USER_THEN_PASSWORD = _Lazy(
    r"\buser(?:name)?[ \t]*[:=]?[ \t]+(?P<user>[\w.@+\-]{1,64})[ \t]*[,;]?[ \t]+"
    r"(?:and[ \t]+)?pass(?:word)?[ \t]*[:=]?[ \t]+(?P<password>[^\s\"'`]{3,128})",
)  # runs on the lowercased text


def _logins(text: str, lowered: str) -> Iterator[Span]:
    """``login: admin / hunter2!``, ``creds for the VPN are ada:pw``, ``username admin password
    hunter2``: the password part."""
    if not any(hint in lowered for hint in ("log", "sign", "cred", "u/p", "user")):
        return
    found = list(_LOGIN.finditer(lowered))
    if "pass" in lowered:
        found += _USER_THEN_PASSWORD.finditer(lowered)
    for m in found:
        value = _trim(text[m.start("password") : m.end("password")])
        user = m.group("user")
        if (
            len(value) >= 3
            and user.lower() not in _STOP_WORDS
            and _user_password(value)
            and not _CODE.match(value)
            and not _STAND_IN.search(value)
            and not value.isdigit()
        ):
            start = m.start("password")
            yield start, start + len(value), "password"


_CARD = _Lazy(r"(?<![\w.-])[2-6](?:[0-9]|[ -](?=[0-9])){12,22}(?![\w-]|\.[0-9])")
_CARD_PREFIX = _Lazy(
    r"4|5[1-5]|2(?:2[2-9]|[3-6][0-9]|7[01]|720)|3[47]|3(?:0[0-5]|[68])|6(?:011|5|4[4-9])|35"
)
_CARD_GROUPS = {(4, 4, 4, 4), (4, 6, 5), (4, 6, 4), (4, 4, 4, 4, 3), (4, 4, 4, 2), (4, 4, 4, 3)}


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_IBAN = _Lazy(r"\b[A-Z]{2}[0-9]{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b")
_SSN = _Lazy(
    r"\b(?:ssn|social security(?: number| no\.?)?)\b[^\n0-9]{0,20}([0-9]{3}-[0-9]{2}-[0-9]{4})\b"
)


def _accounts(text: str, lowered: str) -> Iterator[Span]:
    """An IBAN (its mod-97 check holds) and a US social security number named as one."""
    if _IBAN_HINT.search(text):
        for m in _IBAN.finditer(text):
            compact = m.group().replace(" ", "")
            if 15 <= len(compact) <= 34 and _mod97(compact):
                yield m.start(), m.end(), "iban"
    if "ssn" in lowered or "social security" in lowered:
        for m in _SSN.finditer(lowered):
            yield m.start(1), m.end(1), "ssn"


_IBAN_HINT = _Lazy(r"\b[A-Z]{2}[0-9]{2}[ ]?[A-Z0-9]{4}")


def _mod97(iban: str) -> bool:
    moved = iban[4:] + iban[:4]
    digits = "".join(str(int(c, 36)) for c in moved)
    return int(digits) % 97 == 1


def _cards(text: str, lowered: str) -> Iterator[Span]:
    """A payment card number: 13-19 digits with a card prefix and a valid Luhn check digit,
    plain or in the usual groups of 4 (Amex 4-6-5) with spaces or dashes."""
    for m in _CARD.finditer(text):
        raw = m.group()
        digits = raw.replace(" ", "").replace("-", "")
        if not 13 <= len(digits) <= 19 or not _CARD_PREFIX.match(digits):
            continue
        separators = {c for c in raw if not c.isdigit()}
        if len(separators) > 1:
            continue
        if separators:
            groups = tuple(len(part) for part in raw.split(separators.pop()))
            if groups not in _CARD_GROUPS:
                continue
        if _luhn(digits):
            yield m.start(), m.end(), "card-number"


_DETECTORS: tuple[Callable[[str, str], Iterator[Span]], ...] = (
    _ruleset,
    _shapes,
    _aws_secret_near_names,
    _phrases,
    _said,
    _logins,
    _bare_keys,
    _ruleset_generic,
    _cards,
    _accounts,
    _aws_secret_alone,
)


def _lower(text: str) -> str:
    """``text`` lowercased character for character, so positions stay the same."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)  # "İ" grows


def _find(text: str) -> list[Span]:
    """Non-overlapping secret spans in order of position; placeholders are never secrets."""
    taken = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)] if "[secret:" in text else []
    lowered = _lower(text)
    spans: list[Span] = []
    for detect in _DETECTORS:
        for start, end, kind in detect(text, lowered):
            if start < end and not any(s < end and start < e for s, e in taken):
                taken.append((start, end))
                spans.append((start, end, kind))
    spans.sort()
    return spans
