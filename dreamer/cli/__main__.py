"""``python -m dreamer.cli``: the dream command (hooks start their background work so)."""

from dreamer.cli import run

run()
