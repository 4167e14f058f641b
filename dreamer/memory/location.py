"""Where a workspace is, when the caller did not say (the CLI, hooks and ``dream mcp`` alike).

In order: the path given (``-w``), ``$DREAM_WORKSPACE``, a ``.dreamer/workspace`` pointer file
in the current folder or a folder above it (up to the repository's root; it holds a path,
absolute or relative to the folder that holds ``.dreamer/``), else a per-project default in the
user's data folder (platformdirs: ``~/.local/share/dreamer/workspaces/<name>-<hash>`` on Linux),
keyed by the canonical root of the git repository (its main working tree; a bare repository's
own folder), so every worktree of a repository shares one memory; outside a repository, keyed
by the current folder. dreamer never writes
``./memory/`` into a repository by surprise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from hashlib import sha256
from pathlib import Path

from dreamer.errors import InvalidSetting

POINTER = Path(".dreamer") / "workspace"
# The project's committed model choice (dreamer.agents.team): read from the same folder.
TEAM_CHOICE = Path(".dreamer") / "synthesizer"


def repository_root(start: Path) -> Path | None:
    """The main working tree of the git repository holding ``start`` (worktrees resolve to it).

    What ``git rev-parse --git-common-dir`` gives, read from the files git writes (a hook must
    not wait for a subprocess, and git need not be installed): a linked worktree's ``.git`` file
    names its git dir, whose ``commondir`` file leads to the repository's own git dir. A
    ``<root>/.git`` common dir gives ``<root>``; a bare repository's gives the bare folder itself.
    A submodule (a git dir without ``commondir``) is a project of its own.
    """
    for folder in (start, *start.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return folder
        if marker.is_file():  # a linked worktree (or submodule): "gitdir: <path>"
            return _common_root(folder, marker)
    return None


def _common_root(folder: Path, marker: Path) -> Path:
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return folder
    if not text.startswith("gitdir:"):
        return folder
    gitdir = Path(text[len("gitdir:") :].strip())
    gitdir = (folder / gitdir).resolve() if not gitdir.is_absolute() else gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        common = ""
    if common:
        shared = Path(common)
        shared = (gitdir / shared).resolve() if not shared.is_absolute() else shared
    elif gitdir.parent.name == "worktrees":  # commondir unreadable: git's own layout tells
        shared = gitdir.parent.parent
    else:
        return folder  # a submodule, or a git dir kept elsewhere for this one tree
    return shared.parent if shared.name == ".git" else shared


def project_file(name: Path, start: Path, stop: Path | None) -> Path | None:
    """The nearest ``name`` (say ``.dreamer/workspace``) in ``start`` or a folder above it, up
    to ``stop`` (the repository's root) when given."""
    for folder in (start, *start.parents):
        candidate = folder / name
        if candidate.is_file():
            return candidate
        if stop is not None and folder == stop:
            break
    return None


def _pointer(start: Path, stop: Path | None) -> Path | None:
    found = project_file(POINTER, start, stop)
    try:
        target = found.read_text(encoding="utf-8").strip() if found else ""
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) else f"not UTF-8, byte {e.start}"
        raise InvalidSetting(
            f"cannot read the workspace pointer {found} ({reason}); write the "
            "workspace's path in it, or remove it"
        ) from e
    if not found or not target:
        return None
    path = Path(target).expanduser()
    return path if path.is_absolute() else found.parent.parent / path


def default_for(project: Path, data_dir: Path | None = None) -> Path:
    """The per-project workspace under the user's data folder for a project root."""
    if data_dir is None:
        import platformdirs

        data_dir = platformdirs.user_data_path("dreamer", appauthor=False)
    digest = sha256(str(project).encode("utf-8")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in project.name) or "root"
    return data_dir / "workspaces" / f"{name}-{digest}"


def resolve(
    path: str | os.PathLike[str] | None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Path, str]:
    """(the workspace folder, how it was chosen: flag, env, pointer or default)."""
    env = os.environ if environ is None else environ
    if path is not None and str(path) != "":
        return Path(path).expanduser().absolute(), "flag"
    if env.get("DREAM_WORKSPACE"):
        return Path(env["DREAM_WORKSPACE"]).expanduser().absolute(), "env"
    here = (cwd or Path.cwd()).resolve()
    project = repository_root(here)
    pointed = _pointer(here, project)
    if pointed is not None:
        return pointed.absolute(), "pointer"
    return default_for((project or here).resolve()), "default"
