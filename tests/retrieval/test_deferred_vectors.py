"""A fresh `dream note` stores its note without a vector; search and ticks give it one.

The trade-off (docs/contributing/bench.md, cold start): the note process never loads the
embedder, so its words are searchable at once, and its meaning from the next search in any
process (which embeds waiting notes before it ranks) or the next consolidation tick.
"""

from __future__ import annotations

import pytest

from dreamer import Workspace
from dreamer.cli import main
from dreamer.retrieval import vectors
from dreamer.service import consolidation


def _note_by_cli(runner, root, text):
    result = runner.invoke(main, ["note", "-w", str(root), text], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return int(result.output.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_cli_note_has_no_vector_until_the_next_search_which_finds_it(runner, tmp_path):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        ws.init()
        ws.note("The invoice run for the bakery is every Friday")
    crystal_id = _note_by_cli(runner, root, "Ada is allergic to peanuts and shellfish")
    with Workspace.open(root, create=False) as ws:
        assert ws.get(crystal_id).embedder is None
        # (With the default sentence model, the API's note waits for its vector too.)
        assert crystal_id in [row[0] for row in ws.store.vectors.unembedded()]
        hits = ws.search("peanuts", limit=3)  # by its words, and embedded on the way
        assert hits[0].id == crystal_id
        assert ws.store.vectors.unembedded() == []
        assert ws.get(crystal_id).embedder == ws.embedder.name
        # ... and by its meaning alone: no word in common with the note
        by_meaning = ws.search("food intolerance nuts", limit=3)
        assert crystal_id in [hit.id for hit in by_meaning]


def test_an_index_built_before_the_vector_arrived_loads_it_without_a_reload(tmp_path):
    root = tmp_path / "ws"
    with Workspace.open(root) as long_running:
        long_running.init()
        long_running.note("The greenhouse vents open at 24 degrees")
        with Workspace.open(root) as agent:  # another process, in effect
            late = agent.note("Tomato seedlings moved to the cold frame", embed=False)
        index = vectors.index_for(long_running.store, long_running.embedder)
        assert late in index.waiting and late not in index.ids[: index.size]
        generation = index.generation
        with Workspace.open(root) as other:
            other.search("seedlings")  # embeds the waiting note in that process
        index = vectors.index_for(long_running.store, long_running.embedder)
        assert late in index.ids[: index.size] and not index.waiting
        assert index.generation == generation  # picked up, not reloaded


def test_a_consolidation_tick_embeds_waiting_notes(tmp_path, now):
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        ws.init()
        late = ws.note("Ship the kiln parts on Monday", embed=False, at=now)
        report = consolidation.tick(ws, now)
        assert report.reindexed >= 1 and ws.store.vectors.unembedded() == []
        assert ws.get(late).embedder == ws.embedder.name
