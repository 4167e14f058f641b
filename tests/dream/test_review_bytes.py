"""`dream adopt` commits the candidate's bytes as the reviewer left them, never a re-rendering."""

from __future__ import annotations

from test_review import reviewed  # noqa: F401

from dreamer.cli import main
from dreamer.dream import review
from dreamer.dream.cycle import run
from dreamer.memory import state as wm


def test_adopt_writes_the_edited_candidate_byte_for_byte(reviewed, now, runner):  # noqa: F811
    run(reviewed, now=now)
    where = review.path(reviewed)
    text = where.read_text(encoding="utf-8")
    # What a reviewer's editor leaves: blank lines doubled, a trailing space, a line ending.
    edited = text.replace("\n\n", "\n\n\n", 1).replace("\n", " \n", 1) + "\n"
    where.write_bytes(edited.encode("utf-8"))
    assert wm.render(wm.parse(edited)) != edited  # a re-rendering would differ
    adopted = runner.invoke(main, ["adopt", "-w", str(reviewed.root)], catch_exceptions=False)
    assert adopted.exit_code == 0, adopted.output
    assert reviewed.memory_md.read_bytes() == edited.encode("utf-8")
