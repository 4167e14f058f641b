"""SHA-256, as the content hashes use it."""

from hashlib import sha256

__all__ = ["sha256"]
