"""The progress line: counts and an estimate of the time left, on a terminal's stderr only.

Commands hand ``ProgressLine`` to the core as its ``progress(done, total)`` hook
(``dreamer.support.progress``). On a terminal it redraws one line ("Importing: 1,200/2,000
(60%), about 40 s left"); when stderr is a pipe, a file or a test's capture, or the user
passed ``-q``, it writes nothing, so logs and scripts see only the command's own output.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TextIO

import click

REDRAW_SECONDS = 0.2  # at most five redraws a second
RATE_WINDOW_SECONDS = 30.0  # the estimate follows the recent pace, not the whole run's

quiet_option = click.option(
    "-q", "--quiet", is_flag=True, help="No progress line on stderr (none when piped either)."
)


class ProgressLine:
    """A ``progress(done, total)`` hook that draws counts and the time left on a terminal."""

    def __init__(
        self,
        label: str,
        *,
        quiet: bool = False,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.shown = not quiet and _is_terminal(self.stream)
        self._clock = clock
        self._recent: deque[tuple[float, int]] = deque()
        self._drawn_at: float | None = None
        self._width = 0
        self._lock = threading.Lock()  # a bench's ticking thread draws beside its steps

    def __call__(self, done: int, total: int) -> None:
        if not self.shown:
            return
        with self._lock:
            self._draw(done, total)

    def _draw(self, done: int, total: int) -> None:
        now = self._clock()
        self._recent.append((now, done))
        while len(self._recent) > 2 and now - self._recent[1][0] >= RATE_WINDOW_SECONDS:
            self._recent.popleft()
        finished = total > 0 and done >= total
        if self._drawn_at is not None and not finished and now - self._drawn_at < REDRAW_SECONDS:
            return
        self._drawn_at = now
        line = f"{self.label}: {done:,}/{total:,}"
        if total > 0:
            line += f" ({min(100, 100 * done // total)}%)"
        left = self._seconds_left(done, total)
        if left is not None and not finished:
            line += f", about {_duration(left)} left"
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def _seconds_left(self, done: int, total: int) -> float | None:
        """The time the rest takes at the pace of the last ``RATE_WINDOW_SECONDS``."""
        (first_at, first_done), (last_at, last_done) = self._recent[0], self._recent[-1]
        if last_at <= first_at or last_done <= first_done:
            return None
        pace = (last_done - first_done) / (last_at - first_at)
        return max(0, total - done) / pace

    def say(self, message: str) -> None:
        """A line of its own on stderr (say, the step a long run is at), above the counts: on
        a terminal the counts are cleared first and drawn again at the next call."""
        with self._lock:
            self._say(message)

    def _say(self, message: str) -> None:
        if self.shown and self._drawn_at is not None:
            self.stream.write("\r" + " " * self._width + "\r")
            self._drawn_at = None
            self._width = 0
        self.stream.write(message + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line (when one was drawn), so the command's output starts on its own."""
        if self.shown and self._drawn_at is not None:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn_at = None

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or bare stream
        return False


def _duration(seconds: float) -> str:
    """A short, rounded duration: "12 s", "4 min", "2 h 5 min"."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"
