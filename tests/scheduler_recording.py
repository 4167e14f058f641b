"""An APScheduler executor that records what it is given, and a bounded wait for a condition."""

from __future__ import annotations

import threading

from apscheduler.executors.base import BaseExecutor


class Recording(BaseExecutor):
    """An executor that records what it is given and never finishes it (a job that hangs)."""

    def __init__(self):
        super().__init__()
        self.submitted: list[tuple[str, list]] = []

    def _do_submit_job(self, job, run_times):
        self.submitted.append((job.id, list(run_times)))


def _wait(predicate, seconds=5.0):
    event = threading.Event()
    for _ in range(int(seconds * 20)):
        if predicate():
            return
        event.wait(0.05)
    raise AssertionError("condition not met")
