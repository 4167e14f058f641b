"""dreamer's own folders outside a workspace: its cache, and the search door's folder."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """dreamer's folder in the user's cache: platformdirs' answer, read from ``environ`` directly
    on Linux and the BSDs (XDG), where platformdirs would read only the process's own."""
    env = os.environ if environ is None else environ
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        base = env.get("XDG_CACHE_HOME", "").strip()
        return (Path(base) if base else Path.home() / ".cache") / "dreamer"
    import platformdirs

    return platformdirs.user_cache_path("dreamer", appauthor=False)


def runtime_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where dreamer's per-user sockets live: ``$XDG_RUNTIME_DIR/dreamer`` when that is set
    (an absolute path, as the XDG spec requires), else ``door/`` in dreamer's cache folder."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / "dreamer"
    return cache_dir(env) / "door"
