"""`dream bench` is found through the `dreamer.commands` entry point, and each of its commands
explains itself with an example and takes -w/--workspace, as every `dream` command does."""

from __future__ import annotations

import click
import pytest
from dreamer_bench.cli import bench

from dreamer.cli import main

COMMANDS = sorted(bench.commands)


def test_dream_lists_and_finds_bench_through_its_entry_point(runner):
    listed = runner.invoke(main, ["--help"], catch_exceptions=False)
    assert listed.exit_code == 0 and "bench" in listed.output
    assert main.get_command(click.Context(main), "bench") is bench


@pytest.mark.parametrize("path", [[], *([name] for name in COMMANDS)], ids=lambda p: " ".join(p))
def test_help_has_an_example(runner, path):
    result = runner.invoke(main, ["bench", *path, "--help"], prog_name="dream")
    assert result.exit_code == 0, result.output
    assert "Example" in result.output and "Usage: dream bench" in result.output


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_takes_workspace(name):
    command = bench.commands[name]
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    assert {"-w", "--workspace"} <= options
    workspace = next(p for p in command.params if "--workspace" in getattr(p, "opts", []))
    assert workspace.envvar == "DREAM_WORKSPACE"


def test_the_examples_name_no_file_a_clone_lacks(runner):
    """The first example runs in a fresh clone; a file one must fetch (LoCoMo) is named by its
    own name, with where to get it, never by a path on the author's machine."""
    text = "\n".join(
        runner.invoke(main, ["bench", *path, "--help"], prog_name="dream").output
        for path in [[], *([name] for name in COMMANDS)]
    )
    assert "../shared" not in text
    group = runner.invoke(main, ["bench", "--help"], prog_name="dream").output
    first = group.split("Examples:")[1].strip().splitlines()[0].strip()
    assert first == "dream bench quality"
    assert "github.com/snap-research/LoCoMo" in group
