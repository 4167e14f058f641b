"""A quoted phrase in a forget query must appear as written: a crystal with every word of it
in another order is not selected (the words alone would select it)."""

from __future__ import annotations

from click.testing import CliRunner
from test_forget_search import notes

from dreamer import Workspace
from dreamer.cli import main
from dreamer.memory import forget_search

TEXTS = [
    "Ada's new address is 40 Avenida da Liberdade, Lisbon",
    "Avenida da Liberdade parking costs 40 euros a month",  # every word, not the phrase
    "Deploys happen on Tuesdays after the standup",
]


def test_a_quoted_phrase_selects_only_the_crystal_that_holds_it_as_written(tmp_path, now):
    root = notes(tmp_path, now, TEXTS)
    with Workspace.open(root, create=False) as ws:
        words = forget_search.select(ws.store, "40 Avenida Liberdade")
        assert [m.crystal.text for m in words] == TEXTS[:2]  # the words alone: both
        phrase = forget_search.select(ws.store, '"40 Avenida da Liberdade"')
        assert [m.crystal.text for m in phrase] == TEXTS[:1]
    result = CliRunner().invoke(
        main, ["forget", "--search", '"40  avenida DA liberdade"', "--yes", "-w", root]
    )
    assert result.exit_code == 0, result.output
    with Workspace.open(root, create=False) as ws:
        assert [c.text for c in ws.store.crystals.select(lifecycles=["generated"])] == TEXTS[1:]
