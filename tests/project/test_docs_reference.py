"""The generated reference (docs/reference/) says what the code says now: a changed `--help`
or setting fails here until `python docs/reference/generate.py` is run and its output committed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GENERATE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "generate.py"


def test_the_reference_matches_the_code():
    result = subprocess.run(
        [sys.executable, str(GENERATE), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_check_reports_a_stale_page(tmp_path):
    # The check must be able to fail: run it over a copy whose settings page is out of date.
    copy = tmp_path / "generate.py"
    copy.write_text(GENERATE.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "cli.md").write_text((GENERATE.parent / "cli.md").read_text(encoding="utf-8"))
    (tmp_path / "settings.md").write_text("# Settings reference\n\nstale\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(copy), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert "-stale" in result.stdout and "settings.md" in result.stdout
    assert "cli.md" not in result.stdout.replace("docs/reference/settings.md", "")
