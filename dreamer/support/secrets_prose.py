"""Secrets in prose that no ruleset reads: secrets given in words after a keyword (password,
token, api key, secret), passwords and passphrases said in sentences, PINs, logins as user /
password, generated strings after a keyword.

Each detector takes the text and its lowercase (position for position) and yields (start, end,
kind) spans; `dreamer.support.secrets` runs them in its order, and loads this module only for
a text that holds one of the words they look for first (`secrets_words`: the hints). Patterns
run on the lowercase, values are read from the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from dreamer.support.secrets_words import (
    BARE_KEY_HINTS,
    CODE,
    KEYWORD_HINTS,
    LOGIN_HINTS,
    REFERENCE,
    SAID_HINTS,
    STAND_IN,
    Lazy,
    Span,
    entropy,
    made_up,
    random_looking,
    trim,
    user_password,
)
from dreamer.support.words import SECRET_PROSE_WORDS, SECRET_STOP_WORDS

_OWNER = Lazy(r"\b(?:my|our|your|his|her|their|\w+'s)(?:[ \t]+[\w'-]+){0,3}[ \t]*$")
_DESCRIBING = Lazy(r"(?:ed|ing|ly|able|ible|ive|ous|ful|less)$")


def owned(lowered: str, start: int, value: str, after: str) -> int:
    """ "my password for the router is sunflower": a plain word is a password when someone's
    password "is" it and it ends the sentence or the line (not "my password is outdated", "...
    is in 1P"). The word's length, 0 if it is none; a "!" or "?" after it ends the sentence."""
    word = value.rstrip("!?")
    after = value[len(word) :] + after
    ends = after[:1] in ("", "\n", "\r") or (
        after[:1] in (".", "!", "?", ",", ";") and not after[1:2].isalnum()
    )
    if (
        ends
        and word.isalpha()
        and len(word) >= 4
        and word.lower() not in SECRET_STOP_WORDS
        and not _DESCRIBING.search(word.lower())
        and _OWNER.search(lowered, max(0, start - 40), start) is not None
    ):
        return len(word)
    return 0


_STRONG = Lazy(r"[A-Za-z0-9_\-./+=~]{20,200}")
_HEX = frozenset("0123456789abcdefABCDEF")


def strong(value: str) -> bool:
    """A generated string no prose or code holds: 20+ characters, and mixed case with a digit,
    or 32+ hex digits, or letters and digits of high entropy with no word joined by a hyphen."""
    if not _STRONG.fullmatch(value) or REFERENCE.match(value) or CODE.match(value):
        return False
    if random_looking(value) and not STAND_IN.search(value):
        return True
    if len(value) >= 32 and set(value) <= _HEX:
        return True
    letters = any(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    return letters and digits >= 3 and "-" not in value and entropy(value) >= 4.0


_BARE_KEY = Lazy(
    r"\b(?P<word>(?:api[ _-]?)?keys?|tokens?|secrets?|pass(?:word|wd)?s?|pwd)\b"
    r"(?:[ \t]+(?:is|was))?[ \t]*[:=]?[ \t]*(?P<value>[A-Za-z0-9_\-./+=~]{20,200})",
)  # runs on the lowercased text


def bare_keys(text: str, lowered: str) -> Iterator[Span]:
    """A generated string right after key, token, secret or password: "algolia admin key
    57f63d65..." (the phrases above need "api key" or a verb; here the value proves itself)."""
    if not any(hint in lowered for hint in BARE_KEY_HINTS):
        return
    for m in _BARE_KEY.finditer(lowered):
        value = trim(text[m.start("value") : m.end("value")])
        if strong(value):
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


_SAID = Lazy(
    r"\b(?P<word>pass[ -]?phrase|pass[ -]?code|pin(?:[ -]code)?|(?:door|alarm|access|gate|safe)"
    r"[ -]code)s?\b"
    # "the passphrase for my ssh key is ...": a short qualifier before the verb
    r"(?:[ \t]+(?:for|of|on|to|at)[ \t]+(?:[\w.@/'-]+[ \t]+){0,3}?[\w.@/'-]+)?"
    r"(?:[ \t]+(?:is|was|are)(?:[ \t]+(?:now|still))?[ \t]+|[ \t]*[:=][ \t]*)"
    r"(?P<value>\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'"
    r"|[^\s.,;:!?\"'`()]+(?:[ \t]+[^\s.,;:!?\"'`()]+){0,7})",
)  # runs on the lowercased text


def said(text: str, lowered: str) -> Iterator[Span]:
    """A passphrase (words and all), a passcode or a PIN given in a sentence."""
    if not any(hint in lowered for hint in SAID_HINTS):
        return
    for m in _SAID.finditer(lowered):
        start = m.start("value")
        value = text[start : m.end("value")]
        if value[0] in "\"'":
            value, start = value[1:-1], start + 1
        words = value.split()
        lowered_words = [w.lower() for w in words]
        if not words or REFERENCE.match(value):
            continue
        if "phrase" in m.group("word").lower():
            # A passphrase is words: take them to the end of the clause. Three words or more
            # with no word of grammar are one ("correct horse battery staple"); fewer must
            # hold no stop word ("is required", "is stored in vault").
            prose = SECRET_PROSE_WORDS if len(words) >= 3 else SECRET_STOP_WORDS
            if any(w in prose for w in lowered_words) or STAND_IN.search(value):
                continue
            yield start, start + len(value), "password"
            continue
        if len(words) != 1 or lowered_words[0] in SECRET_STOP_WORDS:
            continue
        if value.isdigit() and 4 <= len(value) <= 12:
            yield start, start + len(value), "pin"
        elif made_up(value) and "pass" in m.group("word").lower():
            yield start, start + len(value), "password"


_LOGIN = Lazy(
    r"\b(?:log[ -]?in|log[ -]?on|sign[ -]?in|credentials?|creds|u/p"
    r"|user(?:name)?[ \t]*/[ \t]*pass(?:word)?)\b"
    r"[^\n]{0,40}?(?:[:=]|\b(?:is|are|was|were)\b)?[ \t]+"
    r"(?P<user>[\w.@+\-]{1,64})(?:[ \t]*/[ \t]*|:)(?P<password>[^\s/\"'`]{3,128})",
)  # runs on the lowercased text
_USER_THEN_PASSWORD = Lazy(
    r"\buser(?:name)?[ \t]*[:=]?[ \t]+(?P<user>[\w.@+\-]{1,64})[ \t]*[,;]?[ \t]+"
    r"(?:and[ \t]+)?pass(?:word)?[ \t]*[:=]?[ \t]+(?P<password>[^\s\"'`]{3,128})",
)  # runs on the lowercased text


def logins(text: str, lowered: str) -> Iterator[Span]:
    """``login: admin / hunter2!``, ``creds for the VPN are ada:pw``, ``username admin password
    hunter2``: the password part."""
    if not any(hint in lowered for hint in LOGIN_HINTS):
        return
    found = list(_LOGIN.finditer(lowered))
    if "pass" in lowered:
        found += _USER_THEN_PASSWORD.finditer(lowered)
    for m in found:
        value = trim(text[m.start("password") : m.end("password")])
        user = m.group("user")
        if (
            len(value) >= 3
            and user.lower() not in SECRET_STOP_WORDS
            and user_password(value)
            and not CODE.match(value)
            and not STAND_IN.search(value)
            and not value.isdigit()
        ):
            start = m.start("password")
            yield start, start + len(value), "password"


# Secrets given in words ----------------------------------------------------------------------
# Found in two steps: the keyword's last word in the lowercased text (a cheap search), then the
# separator and value from there in the original text.

_KEYWORD = Lazy(
    r"(?:pass(?:word|wd|phrase)|pwd|pw|token|secret(?:[\s_-]?(?:access[\s_-]?)?key)?|key)"
    r"(?![a-z0-9])"
)
_KEY_PREFIX = Lazy(r"(?:api|access)[\s_.-]?$")  # "key" alone is no keyword: "api key" is
_TAIL = Lazy(
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
_FLAG = Lazy(r"--[\w-]*$")
_JOINED_WORDS = Lazy(r"[A-Za-z]+(?:-[A-Za-z]+){2,}")
_NAME = Lazy(r"^(?:[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)+)$")
_CHAINED = Lazy(r"[ \t]*=(?!=)")  # chained assignment: userid = passwd = acct = ""
_CAMEL = Lazy(r"[a-z][A-Z]")
_WORD_THEN_STOP = Lazy(r"[A-Za-z]+(?:[.,;:!?<]|&\w+;)")
_MORE_PROSE = Lazy(r"[ \t]+[a-z]")
# "changed the root password to x" gives a value; "pass the token to fetchUser" does not.
_SETTING_VERB = Lazy(r"\b(?:change|changed|set|reset|update|updated|rotated|switched)\b")


def _given(value: str, kind: str, form: str, quoted: bool, after: str, tight: bool) -> bool:
    """Whether a value after a keyword is the secret itself rather than talk about it."""
    if value.lower() in SECRET_STOP_WORDS or REFERENCE.match(value) or STAND_IN.search(value):
        return False
    if len(value) < (4 if kind == "password" else 8):
        return False
    if kind != "password" and value.isdigit():
        return False  # "token: 4096" is a count, not a token
    if quoted:
        return not _NAME.match(value)  # ENV_API_KEY = "ANTHROPIC_API_KEY"
    if CODE.match(value) or _CHAINED.match(after):
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


def phrases(text: str, lowered: str) -> Iterator[Span]:
    """Secrets given in words: a keyword, then a separator or a verb, then the value."""
    done = 0
    if not any(hint in lowered for hint in KEYWORD_HINTS):
        return
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
            bare = trim(tail.group("value"))
            if not ((kind == "password" and made_up(bare)) or strong(bare)):
                continue
        if form == "to" and not _SETTING_VERB.search(lowered, max(0, start - 40), start):
            continue
        raw, value_start = tail.group("value"), tail.start("value")
        quoted = raw[0] in "\"'`" and raw[-1] == raw[0] and len(raw) > 1
        value = raw[1:-1] if quoted else trim(raw)
        value_start += 1 if quoted else 0
        end = value_start + len(value)
        tight = tail.group("assign") == "="
        after = text[end : end + 4]
        if not value:
            continue
        if not _given(value, kind, form, quoted, after, tight):
            # "my password is bluebird!": a plain word someone's password "is"
            length = owned(lowered, start, value, after) if form == "verb" else 0
            if not length or kind != "password":
                continue
            end = value_start + length
        done = end
        yield value_start, end, kind
