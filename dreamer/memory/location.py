"""Where a workspace is, when the caller did not say (the CLI, hooks and ``dream mcp`` alike).

In order: the path given (``-w``), ``$DREAM_WORKSPACE``, a ``.dreamer/workspace`` pointer file
in the current folder or a folder above it (up to the repository's root; it holds a path,
absolute or relative to the folder that holds ``.dreamer/``), else a per-project default in the
user's data folder (platformdirs: ``~/.local/share/dreamer/workspaces/<name>-<hash>`` on Linux),
keyed by the canonical root of the git repository, so every worktree of a repository shares
one memory; outside a repository, keyed by the current folder. dreamer never writes
``./memory/`` into a repository by surprise.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

POINTER = Path(".dreamer") / "workspace"


def repository_root(start: Path) -> Path | None:
    """The main working tree of the git repository holding ``start`` (worktrees resolve to it)."""
    for folder in (start, *start.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return folder
        if marker.is_file():  # a linked worktree (or submodule): "gitdir: <path>"
            try:
                text = marker.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return folder
            if not text.startswith("gitdir:"):
                return folder
            target = Path(text[len("gitdir:") :].strip())
            target = (folder / target).resolve() if not target.is_absolute() else target
            # <main>/.git/worktrees/<name>: the worktree belongs to <main>.
            if target.parent.name == "worktrees" and target.parent.parent.name == ".git":
                return target.parent.parent.parent
            return folder
    return None


def _pointer(start: Path, stop: Path | None) -> Path | None:
    for folder in (start, *start.parents):
        candidate = folder / POINTER
        if candidate.is_file():
            target = candidate.read_text(encoding="utf-8").strip()
            if target:
                path = Path(target).expanduser()
                return path if path.is_absolute() else folder / path
        if stop is not None and folder == stop:
            break
    return None


def default_for(project: Path, data_dir: Path | None = None) -> Path:
    """The per-project workspace under the user's data folder for a project root."""
    if data_dir is None:
        import platformdirs

        data_dir = platformdirs.user_data_path("dreamer", appauthor=False)
    digest = hashlib.sha256(str(project).encode("utf-8")).hexdigest()[:12]
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
