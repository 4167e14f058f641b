"""The memory page in a real browser: headless Chromium opens what `dream ui` printed and acts.

The browser is Debian's Chromium, driven through the Chrome DevTools protocol over the pipe
Chromium offers (``--remote-debugging-pipe``: JSON messages ending in NUL on file descriptors
3 and 4), so no driver, no websocket client and no downloaded browser are needed. `dream ui`
runs as the user runs it, in its own process; the test reads the workspace as any other
process would. Without Chromium the test is skipped (``DREAM_REQUIRE_CHROMIUM=1`` makes that a
failure), as tests/service/test_report_screenshot.py does.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_ui import HELD, LOCKER, reviewed_workspace

from dreamer import Workspace
from dreamer.dream import pins
from dreamer.memory import held
from dreamer.support.locks import hold

pytestmark = [pytest.mark.slow, pytest.mark.cli]

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
WAIT_MS = 20_000  # how long the page may take to show what an action did


class Browser:
    """A headless Chromium and one page of it, spoken to over the DevTools pipe."""

    def __init__(self, executable: str, profile: Path):
        to_browser, self._ours_out = os.pipe()
        self._ours_in, from_browser = os.pipe()
        # bash places our pipe ends on 3 and 4, where Chromium looks for them.
        self.process = subprocess.Popen(
            [
                "bash",
                "-c",
                f'exec "$0" "$@" 3<&{to_browser} 4>&{from_browser}',
                executable,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            pass_fds=(to_browser, from_browser),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._next = 0
        self._buffer = b""
        self.errors: list[dict[str, Any]] = []  # uncaught exceptions of the page's script
        self.session = ""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.send("Runtime.enable")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One DevTools command; its result (events on the way are skipped, but for the page's
        uncaught exceptions, kept in ``errors``)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._ours_out, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._ours_in, 1 << 16)
                assert chunk, "Chromium closed its DevTools pipe"
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("method") == "Runtime.exceptionThrown":
                self.errors.append(answer["params"]["exceptionDetails"])
            if answer.get("id") == self._next:
                assert "error" not in answer, answer["error"]
                return answer["result"]

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.send(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def open(self, url: str) -> None:
        """Load ``url`` and wait until its document is complete."""
        self.send("Page.enable")
        self.send("Page.navigate", url=url)
        self.until("document.readyState === 'complete' && location.href !== 'about:blank'")

    def until(self, condition: str) -> None:
        """Wait, in the page, until ``condition`` holds (fails after WAIT_MS)."""
        done = self.evaluate(
            "new Promise((resolve) => { const start = performance.now();"
            f" const check = () => {{ let ok = false; try {{ ok = !!({condition}); }}"
            " catch (e) {} if (ok) resolve(true);"
            f" else if (performance.now() - start > {WAIT_MS}) resolve(false);"
            " else setTimeout(check, 50); }; check(); })"
        )
        assert done, f"the page never showed: {condition}\n{self.text()[:3000]}"

    def text(self) -> str:
        """What the page shows, as text."""
        return self.evaluate("document.body ? document.body.innerText : ''")

    def click(self, selector: str) -> None:
        """Click the first element ``selector`` finds."""
        found = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return false; e.click(); return true; })()"
        )
        assert found, f"nothing on the page matches {selector}"

    def click_on(self, within: str, text: str, action: str) -> None:
        """Click the ``action`` button of the item under ``within`` that shows ``text``."""
        found = self.evaluate(
            f"(() => {{ for (const item of document.querySelectorAll({json.dumps(within)})) {{"
            f" if (item.innerText.includes({json.dumps(text)})) {{"
            f" const b = item.querySelector('[data-action={action}]');"
            " if (b) { b.click(); return true; } } } return false; })()"
        )
        assert found, f"no {within} showing {text!r} has a {action} button"

    def close(self) -> None:
        """Stop the browser."""
        self.process.kill()
        self.process.wait(timeout=30)
        os.close(self._ours_out)
        os.close(self._ours_in)


@pytest.fixture(scope="module")
def chromium() -> str:
    """The Chromium to drive, or a skip that says why."""
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        reason = f"no Chromium ({', '.join(BROWSERS)}) on PATH"
        if os.environ.get("DREAM_REQUIRE_CHROMIUM") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.fixture
def served(tmp_path, now) -> Iterator[tuple[Path, str]]:
    """A workspace with a candidate, and the URL a running `dream ui` printed for it."""
    root = reviewed_workspace(tmp_path / "ws", now)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAM_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "dreamer.cli", "ui", "-w", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    url = ""
    for line in process.stdout:  # not a terminal: no browser is opened
        if line.strip().startswith("http://127.0.0.1:"):
            url = line.strip()
            break
    assert url, process.stderr.read() if process.stderr else ""
    yield root, url
    process.send_signal(signal.SIGINT)  # Ctrl-C
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Stopped." in out


@pytest.fixture
def browser(chromium, tmp_path) -> Iterator[Browser]:
    """A headless Chromium with a fresh profile."""
    driven = Browser(chromium, tmp_path / "profile")
    yield driven
    driven.close()


def test_the_page_acts_on_the_memory_in_a_browser(served, browser):
    root, url = served
    base = url.split("?", 1)[0]

    # Without the token: refused, nothing shown.
    browser.open(base)
    assert "refused" in browser.text() and "Zorbulax" not in browser.text()
    browser.open(base + "?token=guessed")
    assert "refused" in browser.text()

    browser.open(url)
    browser.until("document.body.dataset.loaded")
    assert "Zorbulax" in browser.text() and "Candidate" in browser.text()
    health = browser.evaluate("document.getElementById('health-body').innerText")
    assert "offline: set in dreamer.toml" in health and "LLM to date" in health
    assert "1 item is held" in health  # a reason of dream status --json's health object

    # Search.
    browser.evaluate("document.getElementById('search-query').value = 'locker code'")
    browser.click("#search-form button[type=submit]")
    browser.until("document.querySelector('#search-results [data-crystal]')")
    assert LOCKER in browser.evaluate("document.getElementById('search-results').innerText")

    # An adopt while a dream holds the lock: a clear message, at once; then the adopt.
    candidate = (root / "memory" / "MEMORY.candidate.md").read_text(encoding="utf-8")
    with hold(root / "memory" / "dream.lock", wait=False, busy="held by the test"):
        browser.click("[data-action=adopt]")
        browser.until("document.getElementById('message').className === 'error'")
        assert "dream already running" in browser.evaluate(
            "document.getElementById('message').innerText"
        )
    assert (root / "memory" / "MEMORY.candidate.md").exists()
    browser.click("[data-action=adopt]")
    browser.until("document.getElementById('message').innerText.startsWith('Adopted')")
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == candidate
    browser.until("document.getElementById('candidate-body').innerText.includes('None waits')")

    # Edit a line of MEMORY.md, as a person would in an editor.
    browser.click_on("#memory-lines li", "Lisbon", "edit")
    browser.evaluate(
        "(() => { const i = document.querySelector('#memory-lines input');"
        " i.value = i.value.replace('Lisbon', 'Porto'); })()"
    )
    browser.click("#memory-lines [data-action=save]")
    browser.until("document.getElementById('message').innerText.startsWith('Line edited')")
    memory = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert memory == candidate.replace("Lisbon", "Porto", 1)
    browser.until("document.getElementById('memory-lines').innerText.includes('Porto')")

    # Pin a search result.
    browser.evaluate("document.getElementById('search-query').value = 'Lisbon tea'")
    browser.click("#search-form button[type=submit]")
    browser.until("document.querySelector('#search-results').innerText.includes('Lisbon')")
    browser.click_on("#search-results li", "Lisbon", "pin")
    browser.until("document.getElementById('pin-list').innerText.includes('Lisbon')")
    with Workspace.open(root, create=False) as ws:
        assert ["Lisbon" in c.text for c in pins.listed(ws)] == [True]

    # Forget with a preview of exactly what goes; then it is gone from the page and the disk.
    browser.evaluate("document.getElementById('search-query').value = 'Zorbulax'")
    browser.click("#search-form button[type=submit]")
    browser.until("document.querySelector('#search-results').innerText.includes('Zorbulax')")
    browser.click_on("#search-results li", "Zorbulax", "forget")
    browser.until("!document.getElementById('preview').hidden")
    shown = browser.evaluate("document.getElementById('preview').innerText")
    assert LOCKER.replace("Zorbulax", "") in shown.replace("Zorbulax", "")
    assert "Zorbulax" in browser.evaluate("document.getElementById('preview-lines').innerText")
    assert "Zorbulax" in (root / "MEMORY.md").read_text(encoding="utf-8")  # not yet
    browser.click("#forget-confirm")
    browser.until("document.getElementById('message').innerText.startsWith('Forgot')")
    browser.until("!document.body.innerText.includes('Zorbulax')")
    assert b"Zorbulax" not in (root / "MEMORY.md").read_bytes()
    assert b"Zorbulax" not in (root / "memory" / "crystals.db").read_bytes()

    # Accept a held item: the user's own word now.
    browser.click_on("#held-list li", HELD, "accept")
    browser.until("document.getElementById('message').innerText.startsWith('Accepted')")
    browser.until("document.getElementById('held-list').innerText.includes('nothing held')")
    with Workspace.open(root, create=False) as ws:
        assert held.count(ws) == 0
        accepted = [c for c in ws.store.crystals.select() if c.text == HELD]
        assert [(c.lifecycle, c.speaker) for c in accepted] == [("generated", "user")]

    # The page's calls without the token are refused too.
    status = browser.evaluate(
        "fetch('/api/pin', {method: 'POST', headers: {'Content-Type': 'application/json'},"
        " body: JSON.stringify({text: 'Sky is green'})}).then((r) => r.status)"
    )
    assert status == 403
    assert browser.errors == []
