"""What ``dream run`` says agrees with ``dream log``: the crystals a dream consumed are one
number in both."""

from __future__ import annotations

import re
from datetime import timedelta

from freezegun import freeze_time

from dreamer.cli import main


def test_dream_run_and_dream_log_say_the_same_consumed_count(ws, now, runner):
    first = ws.note("Ada leads the Falcon project at Acme", at=now - timedelta(days=2))
    for i in range(5):
        ws.note(f"Falcon module {i} was wired into the build", at=now - timedelta(days=1))
    with freeze_time(now - timedelta(hours=20)):
        runner.invoke(main, ["run", "-w", str(ws.root)], catch_exceptions=False)
    ws.note("Ada moved the Falcon launch to July 3", at=now - timedelta(hours=1), replaces=first)
    with freeze_time(now):
        said = runner.invoke(main, ["run", "--force", "-w", str(ws.root)], catch_exceptions=False)
        log = runner.invoke(main, ["log", "--limit", "1", "-w", str(ws.root)]).output
    assert said.exit_code == 0, said.output
    consumed = int(re.search(r"consumed (\d+)", log).group(1))
    assert f"{consumed} crystal{'' if consumed == 1 else 's'} consumed" in said.output
    assert "with 1 new note" in said.output
    assert "consolidated" not in said.output  # one word for one number
