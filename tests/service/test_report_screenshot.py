"""The report as a browser shows it: a headless Chromium screenshot of `dream demo`'s report.

Chromium is Debian's ``chromium`` package. Where it is missing, this module installs it when it
can (running as root with apt-get, as CI does); otherwise the test is skipped and says why.
With ``DREAM_REQUIRE_CHROMIUM=1`` (CI sets it) a missing browser is a failure, not a skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import png
import pytest

from dreamer.cli import main

pytestmark = pytest.mark.cli

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
PACKAGES = ("chromium", "fonts-dejavu-core")
# The page's colours (report_page.STYLE) that only charts and badges use.
DOPAMINE, CORTISOL, COMMITTED, CREATED = (0, 158, 115), (213, 94, 0), (47, 158, 68), (86, 180, 233)


def _find() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _install() -> str:
    """Install Chromium with apt-get; '' when done, else why it could not be."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not running as root, so apt-get cannot install it"
    if not shutil.which("apt-get"):
        return "this system has no apt-get"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *PACKAGES]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
        if done.returncode != 0:
            return f"'{' '.join(command)}' failed: {done.stderr.strip()[-300:]}"
    return ""


@pytest.fixture(scope="module")
def chromium() -> str:
    """The path of a Chromium to run headless (installed here if missing and possible)."""
    found = _find()
    if found is None:
        why = _install()
        found = _find()
        if found is None:
            reason = f"no Chromium ({', '.join(BROWSERS)}) on PATH: {why or 'install failed'}"
            if os.environ.get("DREAM_REQUIRE_CHROMIUM") == "1":
                pytest.fail(reason)
            pytest.skip(reason)
    return found


def screenshot(browser: str, page: Path, out: Path, width: int, height: int) -> png.Image:
    """Render ``page`` headless, offline, at width x height CSS pixels; return the pixels."""
    profile = out.with_suffix(".profile")
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={profile}",
            f"--screenshot={out}",
            f"--window-size={width},{height}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
    return png.read(out.read_bytes())


def _near(rgb: np.ndarray, colour: tuple[int, int, int], tolerance: int = 24) -> int:
    """How many pixels are within ``tolerance`` of ``colour`` on every channel."""
    return int((np.abs(rgb.astype(np.int16) - np.array(colour)) <= tolerance).all(axis=2).sum())


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory) -> Path:
    """`dream demo`, then `dream report`: the page a new user sees first."""
    from click.testing import CliRunner

    root = tmp_path_factory.mktemp("shot") / "demo"
    runner = CliRunner()
    result = runner.invoke(main, ["demo", str(root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    page = root.parent / "report.html"
    result = runner.invoke(main, ["report", "-w", str(root), "-o", str(page)])
    assert result.exit_code == 0, result.output
    return page


@pytest.mark.parametrize("width, height", [(390, 2400), (1280, 2000)], ids=["phone", "desktop"])
def test_the_demo_report_shows_its_charts_in_a_browser(chromium, demo_report, width, height):
    image = screenshot(chromium, demo_report, demo_report.with_name(f"{width}.png"), width, height)
    assert (image.width, image.height) == (width, height)
    rgb = image.rgb()
    background = rgb[2, 2]
    share_drawn = float((np.abs(rgb.astype(np.int16) - background) > 16).any(axis=2).mean())
    colours = len(np.unique(rgb.reshape(-1, 3), axis=0))
    # Text, charts and badges (the white cards on the grey page do not count).
    assert share_drawn > 0.03, f"only {share_drawn:.1%} of the page differs from its background"
    assert colours > 200, f"only {colours} distinct colours: a blank or unstyled page"
    # The charts are there: each chart's own colour covers a visible area.
    assert _near(rgb, DOPAMINE) > 150, "no dopamine line"
    assert _near(rgb, CORTISOL) > 150, "no cortisol line or stimulus markers"
    assert _near(rgb, COMMITTED) > 60, "no committed dream (badge or dot)"
    assert _near(rgb, CREATED) > 1500, "no crystal lifecycle bars"
