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
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # lazy groups load their commands here
        command = group.get_command(ctx, name)
        assert command is not None, name
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


def test_the_command_table_names_every_command_where_it_lives():
    import importlib

    import click

    from dreamer.cli import COMMANDS

    for name, where in COMMANDS.items():
        module, attribute = where.split(":")
        command = getattr(importlib.import_module(f"dreamer.cli.{module}"), attribute)
        assert isinstance(command, click.Command) and command.name == name, name


def test_a_note_does_not_import_the_scheduler_the_benchmarks_or_mcp(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; from dreamer.cli import main\n"
        f"try:\n    main(['note', '-w', {str(tmp_path / 'ws')!r}, 'hello'])\n"
        "except SystemExit:\n    pass\n"
        "heavy = [m for m in ('apscheduler', 'dreamer_bench', 'mcp', 'anthropic')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr
