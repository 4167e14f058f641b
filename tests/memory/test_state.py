"""The working-memory document: render∘parse is stable, and hand edits parse tolerantly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamer.memory import state as wm

FULL = """# Working Memory State

_Last dream: 2026-03-12T14:30:00Z | Mood: steady, calm_

## The Phenotype
- Curious, terse

## The Bond
- User prefers dark mode

## The Niche
- Role: billing assistant

## Active Context
- Task: ship the report

## Crystal Pointers
- Past: Kitchen renovation → search: `kitchen renovation quotes`

## Curiosity Gaps
- What timezone is the client in?

## Emerging Skills
- Deploying staging → Confidence: 65% | Occurrences: 3
"""


def test_render_of_parse_is_the_same_text():
    assert wm.render(wm.parse(FULL)) == FULL


def test_parse_reads_status_line_pointers_and_skills():
    state = wm.parse(FULL)
    assert state.last_dream == "2026-03-12T14:30:00Z"
    assert state.mood == "steady, calm"
    assert state.pointers() == [wm.Pointer("Kitchen renovation", "kitchen renovation quotes")]
    assert state.skills() == [wm.Skill("Deploying staging", 65, 3)]


def test_hand_edits_are_tolerated():
    edited = (
        "My own notes up here.\n\n# Working Memory State\n\n"
        "## active context\n- edited by hand\n\n"
        "## The Bond\nUser likes tea\n\n"
        "## My Extra Section\nkeep me\n\n"
        "## crystal pointers\n* Past: Old thing -> search: `old thing`\n"
    )
    state = wm.parse(edited)
    assert state.preamble == "My own notes up here."
    assert state.body("active_context") == "- edited by hand"
    assert state.body("bond") == "User likes tea"
    assert state.extra == [("My Extra Section", "keep me")]
    assert state.pointers() == [wm.Pointer("Old thing", "old thing")]
    once = wm.render(state, include_preamble=True)
    assert wm.render(wm.parse(once), include_preamble=True) == once
    assert once.index("## The Bond") < once.index("## Active Context") < once.index("## My Extra")


def test_a_hand_written_file_without_the_title_is_all_preamble():
    state = wm.parse("# Notes\n\nUser is Maya.\n")
    assert state.preamble == "# Notes\n\nUser is Maya."
    assert state.substance() == ""


_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="#_`"),
    max_size=60,
)
_body = st.lists(_text.map(lambda t: "- " + t.strip()), max_size=4).map("\n".join)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.sampled_from(wm.section_keys()), _body),
    st.one_of(st.none(), _text.filter(lambda t: "|" not in t and t.strip())),
)
def test_render_parse_is_a_fixed_point_after_one_round(bodies, mood):
    state = wm.WorkingMemory(
        bodies=bodies, last_dream="2026-03-12T14:30:00Z", mood=mood.strip() if mood else None
    )
    once = wm.render(wm.parse(wm.render(state)))
    assert wm.render(wm.parse(once)) == once
    for key in bodies:
        assert wm.parse(once).body(key) == wm.parse(wm.render(state)).body(key)


def test_a_heading_inside_a_synthesized_body_cannot_split_the_section():
    state = wm.from_fields({"bond": "- Maya\n## The Niche\n- sneaky", "niche": "- real niche"})
    text = wm.render(state)
    back = wm.parse(text)
    assert back.body("niche") == "- real niche"
    assert "### The Niche" in back.body("bond")
    assert wm.render(back) == text


def test_one_reader_for_memory_md_names_the_fix_for_a_non_utf8_file(tmp_path, runner):
    from dreamer.cli import main
    from dreamer.errors import WorkspaceError
    from dreamer.memory.state import read_memory

    assert read_memory(tmp_path / "absent.md") == ""
    broken = tmp_path / "MEMORY.md"
    broken.write_bytes(b"# Working Memory State\n\ncaf\xe9 in Latin-1\n")
    with pytest.raises(WorkspaceError, match="not UTF-8 text .* save it as UTF-8"):
        read_memory(broken)
    assert "caf\ufffd" in read_memory(broken, errors="replace")
    ws = tmp_path / "ws"
    runner.invoke(main, ["note", "-w", str(ws), "a note"])
    (ws / "MEMORY.md").write_bytes(b"caf\xe9\n")
    for command in (["bootstrap"], ["run", "--force"]):
        result = runner.invoke(main, [*command, "-w", str(ws)])
        assert result.exit_code == 1, result.output
        assert result.output.count("Error:") == 1 and "save it as UTF-8" in result.output
        assert (ws / "MEMORY.md").read_bytes() == b"caf\xe9\n"  # nothing lost


def test_restore_mends_a_non_utf8_memory_md(tmp_path, runner):
    from dreamer.cli import main

    ws = tmp_path / "ws"
    for text in ("first note", "second note"):
        runner.invoke(main, ["note", "-w", str(ws), text])
    assert runner.invoke(main, ["run", "-w", str(ws), "--force"]).exit_code == 0
    good = (ws / "MEMORY.md").read_text(encoding="utf-8")
    (ws / "MEMORY.md").write_bytes(b"\xff\xfe broken by hand")
    result = runner.invoke(main, ["restore", "-w", str(ws), "1"])
    assert result.exit_code == 0, result.output
    assert (ws / "MEMORY.md").read_text(encoding="utf-8") == good
