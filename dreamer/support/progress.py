"""Progress of long work: the hook the core calls as it goes, ``progress(done, total)``.

A long step (an import, a re-embedding, a scan) takes an optional ``progress`` callback and
calls it with how much of the work is done and how much there is in all, in units it names
in its docstring (records, crystals). Whether anything is shown, and how, is the caller's
business (the CLI draws a line on a terminal: ``dreamer.cli.progress``); the core never
prints and never imports click.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int], None]


def ignore(done: int, total: int) -> None:
    """A progress hook that shows nothing."""


def offset(progress: Progress | None, before: int, total: int) -> Progress:
    """A hook for a later part of one piece of work: its counts reported after ``before``
    units already done, out of ``total`` for the whole."""
    if progress is None:
        return ignore
    return lambda done, _part_total: progress(before + done, total)
