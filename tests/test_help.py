"""Every `dream` command explains itself with an example and takes -w/--workspace.

The commands are found by walking the click tree, so commands added later are checked too.
"""

from __future__ import annotations

import click
import pytest

from dreamer.cli import main


def walk(
    group: click.Group, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        found.append(((*path, name), command))
        if isinstance(command, click.Group):
            found.extend(walk(command, (*path, name)))
    return found


COMMANDS = walk(main)
LEAVES = [(path, command) for path, command in COMMANDS if not isinstance(command, click.Group)]


def test_the_walk_finds_the_memory_commands():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"init", "note", "search", "get", "config"} <= names


@pytest.mark.parametrize(
    "path", [(), *(path for path, _ in COMMANDS)], ids=lambda path: " ".join(("dream", *path))
)
def test_help_has_an_example(runner, path):
    result = runner.invoke(main, [*path, "--help"], prog_name="dream", catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.strip()
    assert "Example" in result.output, f"'dream {' '.join(path)} --help' shows no example"
    assert "Usage: dream" in result.output


@pytest.mark.parametrize(
    "path", [path for path, _ in LEAVES], ids=lambda path: " ".join(("dream", *path))
)
def test_every_command_takes_workspace(path):
    command = dict(LEAVES)[path]
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert {"-w", "--workspace"} <= options, f"'dream {' '.join(path)}' lacks -w/--workspace"
    workspace = next(p for p in command.params if "--workspace" in getattr(p, "opts", []))
    assert workspace.envvar == "DREAM_WORKSPACE"


def test_short_help_flag_works(runner):
    result = runner.invoke(main, ["note", "-h"], catch_exceptions=False)
    assert result.exit_code == 0 and "Example" in result.output
