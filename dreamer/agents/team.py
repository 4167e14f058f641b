"""The model choice a project commits, and each teammate's session taking it up.

``dream claude install --scope project`` writes ``.dreamer/synthesizer`` beside the project's
``.dreamer/workspace`` pointer: one line naming the synthesizer the team's dreams use
(``claude-code``, each person's own Claude Code login). It names no path and no key, so a team
commits it. A workspace's own settings stay each person's: on a teammate's machine the hooks
(:func:`adopt`) write the committed choice into their workspace's ``dreamer.toml`` once, when
its backend is here (for ``claude-code``: the ``claude`` command on PATH) and nothing of their
own names a synthesizer; when the backend is not here, nothing changes and the session start
says in one line how to opt in, every session, until the person installs it or chooses. A
person's own choice (``memory.dream.synthesizer`` in dreamer.toml, or ``DREAM_SYNTHESIZER``)
always stands, and nothing falls back to offline in silence.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from dreamer.agents import claude_settings as cs
from dreamer.config import SYNTHESIZERS, read_toml
from dreamer.errors import InvalidSetting
from dreamer.memory import location
from dreamer.memory.workspace import Workspace
from dreamer.support.files import atomic_write

CHOICE = location.TEAM_CHOICE


class Notice(NamedTuple):
    """What a hook says of the team's choice: the line, and whether dreamer.toml was written."""

    line: str
    wrote: bool = False


def committed(cwd: Path) -> tuple[str, Path] | None:
    """(the synthesizer the project commits, its file), found from ``cwd`` up to the project's
    root; None when the project commits none. ValueError names a file that holds no
    synthesizer dreamer knows."""
    here = cwd.resolve()
    found = location.project_file(CHOICE, here, location.repository_root(here))
    if found is None:
        return None
    try:
        name = found.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read {found} ({e})") from e
    if name not in SYNTHESIZERS or name == "auto":
        known = ", ".join(s for s in SYNTHESIZERS if s != "auto")
        raise ValueError(f"{found} names {name!r}, not a synthesizer (one of {known})")
    return name, found


def own_choice(root: Path, environ: Mapping[str, str]) -> bool:
    """Whether this person named a synthesizer themselves (DREAM_SYNTHESIZER, or dreamer.toml)."""
    if environ.get("DREAM_SYNTHESIZER"):
        return True
    try:
        return "memory.dream.synthesizer" in read_toml(root / "dreamer.toml")
    except InvalidSetting:
        return True  # a broken dreamer.toml is the person's to fix; never written over


def missing(name: str, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(what this machine lacks to dream with ``name``, how to opt in); None: nothing."""
    if name == "claude-code":
        from dreamer.dream.synth.claude_code import INSTALL_HINT, find_cli
        from dreamer.errors import ModelUnavailable

        try:
            find_cli(environ.get("DREAM_CLAUDE_CLI") or None, environ)
        except ModelUnavailable:
            return "no 'claude' command is on PATH here", f"install Claude Code ({INSTALL_HINT})"
    if name == "claude" and not (environ.get("ANTHROPIC_API_KEY") or environ.get("DREAM_API_KEY")):
        return "no ANTHROPIC_API_KEY is set here", "set ANTHROPIC_API_KEY"
    return None


def adopt(
    root: Path, cwd: Path, environ: Mapping[str, str] | None = None, *, write: bool = True
) -> Notice | None:
    """Take the project's committed choice into the workspace's dreamer.toml when its backend
    is here; the one line to show at session start (None: nothing to say).

    ``write`` False (a session start before the workspace exists): nothing is written; a
    missing backend is still named.
    """
    env = os.environ if environ is None else environ
    try:
        found = committed(cwd)
    except ValueError as e:  # said at session start, never a reason to lose the memory block
        return Notice(f"dreamer: {e}; fix or remove that file")
    if found is None or own_choice(root, env):
        return None
    name, source = found
    lacking = missing(name, env)
    if lacking:
        what, fix = lacking
        return Notice(
            f"dreamer: this project's dreams are written by {name} (its {CHOICE}), but {what}, "
            f"so your dreams stay offline; to opt in, {fix} and start a new session; to keep "
            f'offline dreams, put memory.dream.synthesizer = "offline" in '
            f"{root / 'dreamer.toml'}"
        )
    if not write:
        return None
    toml = root / "dreamer.toml"
    before = toml.read_text(encoding="utf-8") if toml.exists() else ""
    after = cs.with_synthesizer(before, name)
    if after is None:
        return None
    Workspace.open(root, create=True).close()  # made as every workspace is (owner-only)
    atomic_write(toml, after)
    return Notice(
        f"dreamer: dreams here are now written by {name}, the project's choice in {source}; "
        f"it was added to {toml}, where you can change it",
        wrote=True,
    )
