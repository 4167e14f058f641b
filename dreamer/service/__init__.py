"""Running jobs: the consolidation tick, the shared schedule, the runner, status."""
