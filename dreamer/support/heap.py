"""Give the heap memory a finished job freed back to the operating system.

A long-lived process that runs jobs on a pool of threads (``dream serve``) embeds, parses and
renders in each of them; glibc's allocator keeps a heap (an arena) per thread and holds on to
what a job freed, so the resident size creeps up to every thread's own peak even though no
Python object stays alive. ``release`` asks it to return the free pages (``malloc_trim``), so
a service's memory is what it holds, not what its threads once held. Elsewhere (macOS,
Windows, musl) it does nothing: those allocators return memory on their own terms.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Any


def _malloc_trim() -> Callable[[int], Any] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim.argtypes = [ctypes.c_size_t]
        trim.restype = ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def release() -> None:
    """Return the allocator's free memory to the operating system, where it can (glibc)."""
    if _TRIM is not None:
        _TRIM(0)
