"""Secrets no rule names: key-shaped tokens, secret-looking settings, and base64 around a key.

- A key-shaped token: a service-like prefix (``xai-``, ``r8_``, ``bkua_``, ``tskey-auth-``,
  ``sb_secret_``), a separator and a long generated body. An id or a digest has the same shape
  (``msg_01…``, ``evt_1…``, ``sha512-…``, ``commit_<sha>``): its prefix is in ``ID_PREFIXES``, its
  body is shorter, or it is no generated string (a uuid, a word, lowercase hex after a word).
  A uuid after a short name is an id (``pvc-<uuid>``), after a key's prefix a key
  (``pat-na1-<uuid>``).
- ``name=value`` / ``name: value``: the value is a long generated string, or the name says it
  is a secret (``sig=``, ``X-Amz-Signature=``) and the value is long hex or generated; never
  when the name says it is a digest or an id (``integrity``, ``etag``, ``sha256``).
- base64 (24 to 4,096 characters) that decodes to text holding a secret: the whole run goes.

Each detector takes the text and its lowercase (position for position) and yields
(start, end, kind) spans, as `dreamer.support.secrets` runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from dreamer.support.secrets_words import (
    CODE,
    DIGEST_NAMES,
    ID_PREFIXES,
    KEY_PREFIX_WORDS,
    REFERENCE,
    SECRET_NAME_PARTS,
    STAND_IN,
    Lazy,
    Span,
    entropy,
    identifier,
    random_looking,
    trim,
)

_HEX = frozenset("0123456789abcdef")
_CAPITALISED_WORD = Lazy(r"[A-Z][a-z]{5,}")
_LONG_LOWER_RUN = Lazy(r"[a-z]{8}")
_UUID = Lazy(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def generated(value: str) -> bool:
    """A string no one typed as a word: mixed case and digits, varied, with no run of words."""
    return (
        random_looking(value)
        and not identifier(value)
        and entropy(value) >= 3.8
        and not _LONG_LOWER_RUN.search(value)
        and len(_CAPITALISED_WORD.findall(value)) < 2
    )


def _hex(value: str, least: int) -> bool:
    bare = value.replace("-", "").replace("_", "")
    return len(bare) >= least and set(bare) <= _HEX and entropy(bare) >= 3.3


def decoded_text(value: str) -> str | None:
    """What a base64 value decodes to, when that is text (most of it printable ASCII)."""
    if not 24 <= len(value) <= 4096:
        return None
    # Imported here: most notes hold no run of base64, and a fresh `dream note` would pay
    # for struct and binascii on every start.
    import base64
    import binascii

    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return raw.decode("ascii", "replace") if raw and printable >= 0.9 * len(raw) else None


# A short first part and "_" or "-", then the body (which holds the prefix's further parts:
# ``auth-`` of ``tskey-auth-``); not inside a longer token, a path, a URL or base64, and the
# body ends where a key ends.
_PREFIXED = Lazy(
    r"(?<![A-Za-z0-9_\-./@+=:%~])"
    r"([A-Za-z][A-Za-z0-9]{0,11})[_-]([A-Za-z0-9_\-]{20,})"
    r"(?![A-Za-z0-9_\-/+=]|[.:][A-Za-z0-9])"
)


def prefixed_keys(text: str, lowered: str) -> Iterator[Span]:
    """A service-like prefix, a separator and a long generated body: ``xai-…``, ``bkua_…``."""
    if "_" not in text and "-" not in text:
        return
    for m in _PREFIXED.finditer(text):
        first, body = m.group(1).lower(), m.group(2)
        if first in ID_PREFIXES or decoded_text(body) is not None:
            continue
        parts = {part.lower() for part in m.group().replace("-", "_").split("_")[:3]}
        keyish = bool(parts & KEY_PREFIX_WORDS)
        core = _core(body)
        if (
            (len(body) >= 30 and generated(body))
            or (len(first) <= 5 and _hex(core, 32) and not _UUID.fullmatch(core))
            or (keyish and _keyish_body(body))
        ):
            yield m.start(), m.end(), "api-key"


def _keyish_body(body: str) -> bool:
    """After a key's prefix (``pat-``, ``sk-``), a body of digits and letters, not of words:
    ``pat-na1-<uuid>`` is a key, ``test_an_api_key_in_the_environment`` a name."""
    return (
        len(body) >= 24
        and entropy(body) >= 3.5
        and sum(c.isdigit() for c in body) >= 4
        and not _LONG_LOWER_RUN.search(body)
    )


def _core(body: str) -> str:
    """The body without the short parts of its prefix: ``pt_<hex>`` of ``lsv2_pt_<hex>``."""
    for _ in range(2):
        part, separator, rest = body.replace("-", "_").partition("_")
        if not separator or len(part) > 4 or not rest:
            break
        body = body[len(part) + 1 :]
    return body


# ":" or "=", an optional quote, the value; then, read back from the ":" or "=", the name and
# an optional closing quote (a value of 16+ characters is rare in prose, a name is not: looking
# for values first leaves most notes after one fast pass).
_VALUE = Lazy(r"[:=][ \t]*[\"'`]?([A-Za-z0-9+/_\-%.~]{16,})")
_NAME = Lazy(r"(?<![A-Za-z0-9_.\-/])([A-Za-z_][A-Za-z0-9_.\-]{0,40})[\"']?[ \t]*\Z")


def named_values(text: str, lowered: str) -> Iterator[Span]:
    """A setting whose value is a secret: a long generated value, or a secret's name and a
    value that is no word (``WIDGET_CONN=<generated>``, ``sig=<signature>``)."""
    if "=" not in text and ":" not in text:
        return
    for v in _VALUE.finditer(text):
        m = _NAME.search(text, max(0, v.start() - 48), v.start())
        if m is None:
            continue
        name = m.group(1).lower()
        value = trim(v.group(1))
        words = set(name.replace("-", "_").replace(".", "_").split("_"))
        if words & DIGEST_NAMES or name in DIGEST_NAMES or _not_a_value(value):
            continue
        secret_name = any(part in name for part in SECRET_NAME_PARTS)
        if (len(value) >= 20 and generated(value)) or (
            secret_name
            and (_hex(value, 40) or (len(value) >= 20 and generated(value.replace("%", ""))))
        ):
            start = v.start(1)
            yield start, start + len(value), "credential"


def _not_a_value(value: str) -> bool:
    return bool(
        STAND_IN.search(value)
        or REFERENCE.match(value)
        or CODE.match(value)
        or decoded_text(value) is not None
    )


_BASE64 = Lazy(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=_\-])")


def wrapped(text: str, find: Callable[[str], list[Span]]) -> Iterator[Span]:
    """A base64 run whose text holds a secret ``find`` finds: ``c2tfbGl2ZV8…`` (sk_live_…)."""
    for m in _BASE64.finditer(text):
        inner = decoded_text(m.group())
        if inner is not None and find(inner):
            yield m.start(), m.end(), "encoded-secret"
