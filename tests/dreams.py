"""A forced offline dream for the tests, and the MEMORY.md it leaves.

The rules tests (tests/dream/test_rules_*.py) write notes, dream at a given time with the offline
synthesizer, and read a section of the new state::

    from dreams import offline_dream

    state = offline_dream(ws, now + timedelta(hours=1))
    assert "Medilink" in state.body("curiosity_gaps")
"""

from __future__ import annotations

from datetime import datetime

from dreamer import Workspace
from dreamer.dream.cycle import run
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.memory.state import WorkingMemory, parse


def offline_dream(ws: Workspace, at: datetime) -> WorkingMemory:
    """Dream now (forced, offline synthesizer) as at `at`; return the MEMORY.md it leaves."""
    run(ws, now=at, force=True, synthesizer=OfflineSynthesizer())
    return parse(ws.memory_md.read_text(encoding="utf-8"))
