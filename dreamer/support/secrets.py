"""Find secrets in text and replace each with a typed, value-stable placeholder.

Every text that enters dreamer (notes, ingested transcripts and files, the seed migration, agent
tools) passes `redact` before it reaches storage or an LLM request.

Placeholder rule: a secret becomes ``[secret:<kind>#<h>]`` where ``<h>`` is the first four hex
digits of the SHA-256 of the secret's value. One value always gives one placeholder, so a secret
that comes back is recognisably the same; two values differ but for a 1-in-65,536 chance. Only the
secret is replaced: a connection string keeps its scheme, user, host and database. Placeholders are
never detected again, and redact repeats until nothing new is found, so
``redact(redact(t).text).text == redact(t).text``.

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
    password           the password of any ``scheme://user:PASS@host`` URL, of ``curl -u
                       user:PASS``, ``mysql -pPASS`` or ``sshpass -p PASS``, or one given in
                       words (below)
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
when it talks about a secret instead of giving one:
- a stop word: "the password is in 1Password", "is stored in vault", "required", "expired";
- a stand-in or a pointer: ``$VAR``, ``${VAR}``, ``<password>``, ``***``, ``sk-ant-...``, a path;
- code: ``password=args.password``, ``token = get_token()``, ``token: AccessToken``,
  ``api_key=api_key``, ``"ANTHROPIC_API_KEY"``;
- after ``is``/``was``/``to``/a bare ``--flag``, a value with no digit and no symbol: so "the
  password is hunter2" is caught and "the password is swordfish" is not (a plain word cannot be
  told from prose; neither can a passphrase of several words); ``to`` counts only after a
  setting verb ("changed/set/reset ... to");
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

__all__ = ["PLACEHOLDER", "Finding", "Redaction", "contains_secret", "placeholder", "redact"]


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

PLACEHOLDER = re.compile(r"\[secret:[a-z0-9-]+#[0-9a-f]{4}\]")  # what redact writes

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
    pattern: re.Pattern[str]
    group: int = 0
    check: Callable[[str], bool] | None = None
    not_after: frozenset[str] = frozenset()  # the character before the match must not be one
    # Characters that must run, (min, max) long, right before the match (then part of it).
    run_before: tuple[frozenset[str], int, int] | None = None
    hint: str = ""  # a lowercase word the text must hold, for patterns with no literal start

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
    hint: str = "",
) -> _Shape:
    return _Shape(kind, re.compile(pattern, flags), group, check, not_after, run_before, hint)


_AWS_KEY_ID = _shape(
    "aws-access-key",
    r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
    not_after=_ALNUM,
)
_SHAPES = (
    _shape(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.{0,20000}?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
        # No END line (a clipped paste): take the body, lines of base64 or of PEM headers.
        r"|(?:(?:\\n|\s)+(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment): [^\n]*))*)",
        re.DOTALL,
    ),
    _shape("anthropic-key", rf"sk-ant-[{_U}]{{20,}}", not_after=_URLSAFE),
    _shape(
        "openai-key",
        rf"sk-(?:proj-|svcacct-|admin-)?[{_U}]{{20,}}",
        not_after=_URLSAFE,
        check=_random_looking,
    ),
    _AWS_KEY_ID,
    _shape(
        "github-token",
        r"gh(?:[pour]_[A-Za-z0-9_]{36,255}|s_[A-Za-z0-9_.\-]{36,1024})"  # ghs_: also ghs_APPID_JWT
        r"|github_pat_[A-Za-z0-9_]{22,255}",
        not_after=_WORD,
    ),
    _shape(
        "gitlab-token",
        rf"(?:gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|GR1348941)[{_U}]{{20,}}",
        not_after=_URLSAFE,
    ),
    _shape(
        "slack-webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{10,}",
    ),
    _shape("slack-token", r"x(?:ox[abposr]|app)-[A-Za-z0-9\-]{10,}", not_after=_ALNUM),
    # One pattern per prefix: a pattern that starts with a literal is searched far faster.
    _shape("stripe-key", r"sk_(?:live|test)_[A-Za-z0-9]{16,}", not_after=_ALNUM),
    _shape("stripe-key", r"rk_(?:live|test)_[A-Za-z0-9]{16,}", not_after=_ALNUM),
    _shape("stripe-key", r"whsec_[A-Za-z0-9]{24,}", not_after=_ALNUM),
    _shape("google-api-key", rf"AIza[{_U}]{{35}}", not_after=_URLSAFE),
    _shape("huggingface-token", r"hf_[A-Za-z0-9]{30,}", not_after=_WORD, check=_random_looking),
    _shape("npm-token", r"npm_[A-Za-z0-9]{36}", not_after=_WORD),
    _shape("pypi-token", rf"pypi-AgE[{_U}]{{50,}}"),
    _shape("sendgrid-key", rf"SG\.[{_U}]{{22}}\.[{_U}]{{43}}"),
    _shape("twilio-key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", not_after=_ALNUM),
    _shape(
        "telegram-token",
        rf":[{_U}]{{35}}(?![{_U}])",
        run_before=(frozenset("0123456789"), 8, 10),
        check=_random_looking,
    ),
    _shape("azure-storage-key", rf"AccountKey=([{_B64}]{{86}}==)", group=1),
    _shape(
        "discord-token",
        rf"[MNO][{_U}]{{23,25}}\.[{_U}]{{6}}\.[{_U}]{{27,38}}",
        not_after=_URLSAFE | {"."},
        check=_random_looking,
    ),
    _shape(
        "mailchimp-key",
        r"-us[0-9]{1,2}(?![0-9])",
        run_before=(frozenset("0123456789abcdef"), 32, 32),
    ),
    _shape("square-token", rf"sq0(?:csp|atp)-[{_U}]{{22,43}}"),
    _shape("jwt", rf"eyJ[{_U}]{{5,}}\.eyJ[{_U}]{{5,}}\.[{_U}]*", not_after=_URLSAFE),
    # The password of a scheme://user:password@host URL: userinfo cannot hold a raw "/", and
    # the last "@" before the host ends it, so an unescaped "@" in the password is covered.
    _shape("password", r"://[^\s:@/]*:([^\s/]+)@", group=1, check=_written_out),
    # Passwords on command lines: curl -u user:pw, mysql -pPW, sshpass -p pw.
    _shape(
        "password",
        r"-u[ \t]+[\"']?[^\s:\"'`]+:([^\s\"'`]+)",
        group=1,
        not_after=_URLSAFE,
        check=_user_password,
    ),
    _shape(
        "password",
        r"--user[ \t=]+[\"']?[^\s:\"'`]+:([^\s\"'`]+)",
        group=1,
        check=_user_password,
    ),
    _shape(
        "password",
        r"mysql(?:dump|admin)?\b[^\n]*?[ \t]-p([^\s\"'`-][^\s\"'`]*)",
        group=1,
        check=_written_out,
    ),
    _shape("password", r"sshpass[ \t]+-p[ \t]*[\"']?([^\s\"'`]+)", group=1, check=_written_out),
    _shape(
        "basic-auth",
        rf"(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?i:basic)\s+([{_B64}]{{8,}}=*)",
        group=1,
        hint="authorization",
    ),
    _shape(
        "token",
        r"(?i:bearer)\s+([A-Za-z0-9._~+/\-]{16,}=*)",
        group=1,
        check=_random_looking,
        hint="bearer",
    ),
)


def _shapes(text: str, lowered: str) -> Iterator[Span]:
    for shape in _SHAPES:
        if shape.hint in lowered:  # "" is in every text
            yield from shape.spans(text)


_AWS_SECRET = re.compile(rf"(?<![{_B64}=])[{_B64}]{{40}}(?![{_B64}=])")
_CAPITALISED_WORD = re.compile(r"[A-Z][a-z]{5,}")
_LONG_LOWER_RUN = re.compile(r"[a-z]{8}")
_AWS_SECRET_NAME = re.compile(r"secret[_\s-]?access[_\s-]?key|aws[_\s-]?secret")


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

_KEYWORD = re.compile(
    r"(?:pass(?:word|wd|phrase)|pwd|pw|token|secret(?:[\s_-]?(?:access[\s_-]?)?key)?|key)"
    r"(?![a-z0-9])"
)
_KEY_PREFIX = re.compile(r"(?:api|access)[\s_.-]?$")  # "key" alone is no keyword: "api key" is
_TAIL = re.compile(
    # "the password for the staging db is ...": a short qualifier before the verb
    r"(?:[ \t]+(?i:for|of|on|at)[ \t]+(?:[\w.@/-]+[ \t]+){0,2}?[\w.@/-]+)?"
    r"(?:(?P<assign>[\"']?[ \t]*(?::=|=>|[:=](?!=))(?:[ \t]*(?:\*\*|__))?[ \t]*)"
    r"|(?P<verb>[ \t]+(?i:is|was):?[ \t]+(?i:now[ \t]+|still[ \t]+|set[ \t]+to[ \t]+)?)"
    r"|(?P<to>[ \t]+(?i:to)[ \t]+)"
    r"|(?P<flag>[ \t]+))"
    r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`]\S{0,199})"
)
_FLAG = re.compile(r"--[\w-]*$")
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
    key apikey api_key user username login name value creds credentials auth""".split()
)
_REFERENCE = re.compile(
    r"^(?:\$[({A-Za-z_]|%[A-Za-z_]+%|<[^>]*>|\*{3,}|[xX]{3,}$|.*(?:\.\.\.|…)$|[\W_]+$"
    r"|[(!{\[\\]|[rbfuRBFU]{1,2}[\"']"  # an expression, a YAML tag, a regex or an f-string
    r"|/|~/|\.\.?/"  # a path: password: /run/secrets/db, NOPASSWD: /bin/systemctl
    r"|os\.environ|os\.getenv|getenv|process\.env|env\.|ENV\[|secrets\.)"
)
# Names and expressions in code, not values: getpass(), cfg["pw"], args.password, new_password,
# and type names (token: AccessToken).
_CODE = re.compile(
    r"^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[(\[]|[A-Za-z_]+(?:\.[A-Za-z_]\w*)+$"
    r"|[a-z]+(?:_[a-z]+)+$|[A-Z]+(?:_[A-Z]+)+$|[A-Z][A-Za-z]*[a-z][A-Z][A-Za-z]*$)"
)
_NAME = re.compile(r"^(?:[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+)$")
_CHAINED = re.compile(r"[ \t]*=(?!=)")  # chained assignment: userid = passwd = acct = ""
_CAMEL = re.compile(r"[a-z][A-Z]")
_WORD_THEN_STOP = re.compile(r"[A-Za-z]+(?:[.,;:!?<]|&\w+;)")
_MORE_PROSE = re.compile(r"[ \t]+[a-z]")
# "changed the root password to x" gives a value; "pass the token to fetchUser" does not.
_SETTING_VERB = re.compile(r"\b(?:change|changed|set|reset|update|updated|rotated|switched)\b")
_NEXT_PARAM = re.compile(r"[&;](?=[\w.\-]+=)")
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
    if value.lower() in _STOP_WORDS or _REFERENCE.match(value):
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
        form = next(f for f in ("assign", "verb", "to", "flag") if tail.group(f) is not None)
        if form == "flag" and not _FLAG.search(text, max(0, start - 30), start):
            # "the db password hunter2-Blue! is old": a bare value only when made up.
            if not (kind == "password" and _made_up(_trim(tail.group("value")))):
                continue
        if form == "to" and not _SETTING_VERB.search(lowered, max(0, start - 40), start):
            continue
        raw, value_start = tail.group("value"), tail.start("value")
        quoted = raw[0] in "\"'`" and raw[-1] == raw[0] and len(raw) > 1
        value = raw[1:-1] if quoted else _trim(raw)
        value_start += 1 if quoted else 0
        end = value_start + len(value)
        tight = tail.group("assign") == "="
        if value and _given(value, kind, form, quoted, text[end : end + 4], tight):
            done = end
            yield value_start, end, kind


_DETECTORS: tuple[Callable[[str, str], Iterator[Span]], ...] = (
    _shapes,
    _aws_secret_near_names,
    _phrases,
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
