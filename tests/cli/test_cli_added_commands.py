"""Commands other packages add (``dreamer.commands`` entry points): without the package, one
line names the fix. The benchmarks' own tests check that an installed ``dream bench`` is found."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from dreamer.cli import main


@pytest.mark.skipif(
    any(point.name == "bench" for point in entry_points(group="dreamer.commands")),
    reason="the benchmarks are installed here",
)
@pytest.mark.parametrize(
    "args", [["bench"], ["bench", "--help"], ["bench", "scale", "--crystals", "10"]]
)
def test_dream_bench_without_the_benchmarks_names_the_install_and_exits_2(runner, args):
    result = runner.invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "Error: 'dream bench' needs the benchmarks package: "
        "run 'pip install ./benchmarks' in a clone of dreamer"
    ]


def test_an_unknown_command_is_still_clicks_usage_error(runner):
    result = runner.invoke(main, ["nosuch"])
    assert result.exit_code == 2 and "No such command 'nosuch'" in result.output
