"""SHA-256 from CPython's builtin module: ``hashlib`` loads OpenSSL's libcrypto first, ~3 ms
of a fresh ``dream note`` that hashes one short text. The digest is the same."""

from __future__ import annotations

try:
    from _sha2 import sha256  # type: ignore[import-not-found]  # CPython 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # CPython 3.11
    except ImportError:  # another Python, or a build without the builtin hashes
        from hashlib import sha256

__all__ = ["sha256"]
