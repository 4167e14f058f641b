"""The edges of what a harness adds to a session: markup out of the words, machine paths made
relative, a tool's output reduced to its outcome, promises told from what was established."""

from __future__ import annotations

import pytest

from dreamer.agents import harness

CWD = "/home/mara/code/atlas"


@pytest.mark.parametrize(
    ("cwd", "text", "relative"),
    [
        (CWD, f"{CWD}/src/main.rs", "src/main.rs"),
        (CWD + "/", f"{CWD}/src/main.rs", "src/main.rs"),
        (CWD, f"cd {CWD} && make", "cd . && make"),
        ("C:\\work\\atlas", "C:\\work\\atlas\\src\\main.rs", "src\\main.rs"),
        ("C:\\work\\atlas\\", "type C:\\work\\atlas\\src\\main.rs", "type src\\main.rs"),
        ("C:\\work\\atlas\\", "type C:\\work\\atlas", "type ."),
        ("/w", "/w/src/main.rs in /w", "src/main.rs in ."),  # a two-character folder
        ("/", "/etc/hosts and /var/log", "/etc/hosts and /var/log"),  # the root is no project
        ("", "/etc/hosts", "/etc/hosts"),
        (None, "/etc/hosts", "/etc/hosts"),
    ],
    ids=[
        "posix",
        "posix-trailing-slash",
        "the-folder-itself",
        "windows",
        "windows-trailing-backslash",
        "windows-the-folder-itself",
        "two-characters",
        "root",
        "empty",
        "none",
    ],
)
def test_the_project_folder_is_made_relative(cwd, text, relative):
    assert harness.relative(text, cwd) == relative
