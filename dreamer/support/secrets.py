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
       and its curl rules (``user:password`` after ``-u``, a header's value after ``-H``);
    8. payment card numbers: 13-19 digits with a card prefix and a valid Luhn digit, plain or
       grouped 4-4-4-4 / 4-6-5 by spaces or dashes: card-number; an IBAN whose mod-97 check
       holds: iban; a social security number named as one: ssn;
    9. a bare 40-character AWS secret key, only when random-looking.

Between 7 and 8, what no rule names (issue 36): a password said in a sentence in any of twelve
languages (`secrets_sentences`, after 6): password; a key-shaped token, a service-like prefix
and a long generated body (``xai-…``, ``bkua_…``): api-key; a setting whose value is a long
generated string or whose name says it is a secret (``sig=…``): credential; base64 that decodes
to text holding a secret: encoded-secret (`secrets_unnamed`). An IBAN on a line that quotes
documentation ("the example IBAN", "from the spec") is no one's account and stays.

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
Trailing ``.,;:`` and unbalanced closing brackets end a value; ``!`` and ``?`` stay, except after
a plain word someone's password "is" ("Maya's email password is bluebird!"): there they end the
sentence, as a line end does, and the word alone is the secret.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from hashlib import sha256

from dreamer.support import secrets_rules
from dreamer.support.secrets_numbers import accounts, cards
from dreamer.support.secrets_words import (
    ALNUM,
    B64,
    BARE_KEY_HINTS,
    KEYWORD_HINTS,
    LOGIN_HINTS,
    SAID_HINTS,
    SENTENCE_HINTS,
    URLSAFE,
    WORD,
    Lazy,
    Span,
    U,
    entropy,
    identifier,
    random_looking,
    user_password,
    written_out,
)

__all__ = ["PLACEHOLDER", "Finding", "Redaction", "contains_secret", "placeholder", "redact"]


@dataclass(frozen=True)
class Finding:
    """One secret that was replaced: its kind and placeholder, never its value."""

    kind: str
    placeholder: str


@dataclass(frozen=True)
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
    digest = sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
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
# a fast substring search; a shape runs only when one of its hints is in the text.

PLACEHOLDER = Lazy(r"\[secret:[a-z0-9-]+#[0-9a-f]{4}\]")  # what redact writes


@dataclass(frozen=True)
class _Shape:
    """A token with a recognisable shape; ``group`` is the part that is secret."""

    kind: str
    pattern: Lazy
    group: int
    check: Callable[[str], bool] | None
    not_after: frozenset[str]  # the character before the match must not be one
    # Characters that must run, (min, max) long, right before the match (then part of it).
    run_before: tuple[frozenset[str], int, int] | None
    hint: tuple[str, ...]  # the text must hold one of these (lowercased) for it to run

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
    return _Shape(kind, Lazy(pattern, flags), group, check, not_after, run_before, hint)


# Shapes the ruleset misses or reads narrower than real keys are written, kept as a supplement.
# Each is here because a case in tests/support/test_secrets.py or benchmarks/secrets/ shows the gap.
_HEX_KEY = Lazy(r"[0-9a-f]{32,}")
_AWS_KEY_ID = _shape(
    "aws-access-key",
    # gitleaks takes base32 ids only ([A-Z2-7]); ids in docs and old tools use any digit.
    r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
    not_after=ALNUM,
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
    _shape("anthropic-key", rf"sk-ant-[{U}]{{20,}}", not_after=URLSAFE, hint=("sk-ant-",)),
    _shape(
        "openai-key",
        # gitleaks: only keys with the T3BlbkFJ marker.
        rf"sk-(?:proj-|svcacct-|admin-)?[{U}]{{20,}}",
        not_after=URLSAFE,
        check=random_looking,
        hint=("sk-",),
    ),
    _AWS_KEY_ID,
    _shape(
        "github-token",
        # gitleaks: exactly 36 characters (a longer token would keep its tail), no ghs_APPID_JWT.
        r"gh(?:[pour]_[A-Za-z0-9_]{36,255}|s_[A-Za-z0-9_.\-]{36,1024})"
        r"|github_pat_[A-Za-z0-9_]{22,255}",
        not_after=WORD,
        hint=("gh", "github_pat_"),
    ),
    # gitleaks: xoxp/xoxb of fixed layouts only.
    _shape(
        "slack-token",
        r"x(?:ox[abposr]|app)-[A-Za-z0-9\-]{10,}",
        not_after=ALNUM,
        hint=("xox", "xapp-"),
    ),
    # gitleaks: live keys only, and no webhook secret.
    _shape("stripe-key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", not_after=ALNUM, hint=("k_",)),
    _shape("stripe-key", r"whsec_[A-Za-z0-9]{24,}", not_after=ALNUM, hint=("whsec_",)),
    # gitleaks: letters only after hf_.
    _shape(
        "huggingface-token",
        r"hf_[A-Za-z0-9]{30,}",
        not_after=WORD,
        check=random_looking,
        hint=("hf_",),
    ),
    # gitleaks: only with "telegram" named before it.
    _shape(
        "telegram-token",
        rf":[{U}]{{35}}(?![{U}])",
        run_before=(frozenset("0123456789"), 8, 10),
        check=random_looking,
        hint=(":",),
    ),
    # gitleaks: only with "AccountKey" in a named setting it knows; any connection string here.
    _shape(
        "azure-storage-key",
        rf"AccountKey=([{B64}]{{86}}==)",
        group=1,
        hint=("accountkey=",),
    ),
    # gitleaks: only with "discord" named before it.
    _shape(
        "discord-token",
        rf"[MNO][{U}]{{23,25}}\.[{U}]{{6}}\.[{U}]{{27,38}}",
        not_after=URLSAFE | {"."},
        check=random_looking,
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
    _shape("square-token", rf"sq0(?:csp|atp)-[{U}]{{22,43}}", hint=("sq0",)),
    # gitleaks has no rule for these.
    _shape("google-oauth-secret", rf"GOCSPX-[{U}]{{28}}", not_after=URLSAFE, hint=("gocspx-",)),
    _shape("docker-token", rf"dckr_pat_[{U}]{{27,}}", not_after=WORD, hint=("dckr_pat_",)),
    _shape(
        "discord-webhook",
        rf"discord(?:app)?\.com/api/webhooks/[0-9]{{17,20}}/([{U}]{{60,}})",
        group=1,
        hint=("discord",),
    ),
    # gitleaks: only after "mailgun" or "newrelic" and an = or :.
    _shape("mailgun-key", r"key-[0-9a-f]{32}(?![0-9a-zA-Z])", not_after=URLSAFE, hint=("key-",)),
    _shape(
        "new-relic-key",
        r"NR(?:AK|II|JS|IQ)-[A-Z0-9]{19,32}(?![A-Za-z0-9])",
        not_after=URLSAFE,
        hint=("nrak-", "nrii-", "nrjs-", "nriq-"),
    ),
    _shape(
        "mapbox-token",
        rf"sk\.eyJ[{U}]{{20,}}\.[{U}]{{20,}}",
        not_after=URLSAFE,
        hint=("sk.eyj",),
    ),
    _shape("google-oauth-token", rf"ya29\.[{U}]{{30,}}", not_after=URLSAFE, hint=("ya29.",)),
    _shape("google-oauth-token", rf"1//0[{U}]{{40,}}", not_after=URLSAFE, hint=("1//0",)),
    # A password hash (htpasswd, shadow, bcrypt, argon2) can be cracked offline: it goes too.
    _shape(
        "password-hash",
        r"\$(?:apr1|2[abxy]|[156]|y|argon2(?:id|i|d))\$[^\s:\"'`]{20,}",
        hint=("$",),
    ),
    _shape(
        "jwt",
        rf"eyJ[{U}]{{5,}}\.eyJ[{U}]{{5,}}\.[{U}]*",
        not_after=URLSAFE,
        hint=("eyj",),
    ),
    # The password of a scheme://user:password@host URL: userinfo cannot hold a raw "/", and
    # the last "@" before the host ends it, so an unescaped "@" in the password is covered.
    _shape("password", r"://[^\s:@/]*:([^\s/]+)@", group=1, check=written_out, hint=("://",)),
    # A key as the whole userinfo: https://<key>@o1.ingest.sentry.io/2 (a Sentry DSN),
    # https://<token>@github.com/org/repo.git.
    _shape(
        "url-key",
        r"://([A-Za-z0-9_\-]{20,})[:@]",
        group=1,
        check=lambda v: random_looking(v) or _HEX_KEY.fullmatch(v) is not None,
        hint=("://",),
    ),
    # Passwords on command lines: curl -u user:pw, mysql -pPW, sshpass -p pw.
    _shape(
        "password",
        r"-u[ \t]+[\"']?[^\s:\"'`]+:([^\s\"'`]+)",
        group=1,
        not_after=URLSAFE,
        check=user_password,
        hint=("-u",),
    ),
    _shape(
        "password",
        r"--user[ \t=]+[\"']?[^\s:\"'`]+:([^\s\"'`]+)",
        group=1,
        check=user_password,
        hint=("--user",),
    ),
    _shape(
        "password",
        r"mysql(?:dump|admin)?\b[^\n]*?[ \t]-p([^\s\"'`-][^\s\"'`]*)",
        group=1,
        check=written_out,
        hint=("mysql",),
    ),
    _shape(
        "password",
        r"sshpass[ \t]+-p[ \t]*[\"']?([^\s\"'`]+)",
        group=1,
        check=written_out,
        hint=("sshpass",),
    ),
    _shape(
        "basic-auth",
        rf"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+([{B64}]{{8,}}=*)",
        group=1,
        hint=("authorization",),
    ),
    _shape(
        "token",
        r"(?i:bearer)\s+([A-Za-z0-9._~+/\-]{16,}=*)",
        group=1,
        check=random_looking,
        hint=("bearer",),
    ),
)


def _shapes(text: str, lowered: str) -> Iterator[Span]:
    for shape in _SHAPES:
        if any(word in lowered for word in shape.hint):
            yield from shape.spans(text)


# Ruleset rules that run after the prose rules below: the generic one (a keyword, an
# assignment, a high-entropy value), which they read more closely, and the curl ones, which
# take ``user:password`` or a header's value whole where the shapes above replace the password
# or token alone and leave the user and the header's name readable; and Terraform's password
# rule, which takes a quoted value with its quotes where the prose rules take the password.
_LATE = frozenset(
    {"generic-api-key", "curl-auth-user", "curl-auth-header", "hashicorp-tf-password"}
)


def _ruleset(text: str, lowered: str) -> Iterator[Span]:
    return secrets_rules.spans(text, lowered, skip=_LATE)


def _ruleset_late(text: str, lowered: str) -> Iterator[Span]:
    for start, end, kind in secrets_rules.spans(text, lowered, only=_LATE):
        # Terraform's rule takes a quoted word after "password" and a comma: in a list of words
        # (["couch roll", "password", "shredding"]) that is the next word, no password; the
        # prose rules above read a plain word said as a password.
        value = text[start:end].strip("\"'")
        if kind == "hashicorp-tf-password" and value.isalpha():
            continue
        # The generic rule's comma reads the next argument of a call as a key's value
        # (Error("key", family=FAMILY)): an assignment or a name is code.
        if kind == "credential" and ("=" in value.rstrip("=") or identifier(value)):
            continue
        yield start, end, kind


_AWS_SECRET = Lazy(rf"(?<![{B64}=])[{B64}]{{40}}(?![{B64}=])")
_CAPITALISED_WORD = Lazy(r"[A-Z][a-z]{5,}")
_LONG_LOWER_RUN = Lazy(r"[a-z]{8}")
_AWS_SECRET_NAME = Lazy(r"secret[_\s-]?access[_\s-]?key|aws[_\s-]?secret")


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
            random_looking(value)
            and value.count("/") < 3
            # Words make an identifier: BetaAsyncComputerToolset20260801, _ZNKSt10filesystem4path
            and len(_CAPITALISED_WORD.findall(value)) < 2
            and not _LONG_LOWER_RUN.search(value)
            and entropy(value) >= 4.3
        ):
            yield m.start(), m.end(), "aws-secret-key"


# Secrets given in words (detectors 4-6, and a generated string after a keyword) are
# `dreamer.support.secrets_prose`'s, loaded for a text that holds one of the words each of them
# looks for first (`secrets_words`): most notes hold none, and then a fresh process compiles
# none of that code. Each gate asks exactly what its detector asks before anything else.


def _prose(detector: str, hints: tuple[str, ...]) -> Callable[[str, str], Iterator[Span]]:
    """``secrets_prose``'s ``detector``, imported the first time a text holds one of ``hints``."""

    def detect(text: str, lowered: str) -> Iterator[Span]:
        if not any(hint in lowered for hint in hints):
            return iter(())
        from dreamer.support import secrets_prose

        found: Iterator[Span] = getattr(secrets_prose, detector)(text, lowered)
        return found

    return detect


def _sentences(text: str, lowered: str) -> Iterator[Span]:
    """A password said in a sentence in any language (`secrets_sentences`), loaded the first
    time a text holds a word for a password."""
    if not any(hint in lowered for hint in SENTENCE_HINTS):
        return iter(())
    from dreamer.support import secrets_sentences

    return secrets_sentences.sentences(text, lowered)


# Secrets no rule names (`secrets_unnamed`), imported on the first text that could hold one
# (a separator, an "=" or ":", or a run of base64), so `import dreamer` compiles none of it.


def _prefixed_keys(text: str, lowered: str) -> Iterator[Span]:
    if "_" not in text and "-" not in text:
        return iter(())
    from dreamer.support import secrets_unnamed

    return secrets_unnamed.prefixed_keys(text, lowered)


def _named_values(text: str, lowered: str) -> Iterator[Span]:
    if "=" not in text and ":" not in text:
        return iter(())
    from dreamer.support import secrets_unnamed

    return secrets_unnamed.named_values(text, lowered)


def _wrapped(text: str, lowered: str) -> Iterator[Span]:
    from dreamer.support import secrets_unnamed

    return secrets_unnamed.wrapped(text, _find)


_phrases = _prose("phrases", KEYWORD_HINTS)
_said = _prose("said", SAID_HINTS)
_logins = _prose("logins", LOGIN_HINTS)
_bare_keys = _prose("bare_keys", BARE_KEY_HINTS)


# The order of the module docstring; what rulesets miss in prose (said, logins, bare keys) lives
# in dreamer.support.secrets_prose, and in numbers (cards, accounts) in secrets_numbers.
_DETECTORS: tuple[Callable[[str, str], Iterator[Span]], ...] = (
    _ruleset,
    _shapes,
    _aws_secret_near_names,
    _phrases,
    _said,
    _logins,
    _sentences,
    _bare_keys,
    _ruleset_late,
    _prefixed_keys,
    _named_values,
    _wrapped,
    cards,
    accounts,
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
