"""The scratch write-ahead log: seed format, exact round trips, stray lines, rotation, crashes."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreamer import Workspace
from dreamer.errors import ScratchError
from dreamer.memory import scratch

AT = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)
HEADER = "# Scratch Buffer (Working Memory WAL)\n"


@pytest.fixture
def path(tmp_path):
    return tmp_path / "scratch.md"


def texts(parsed: scratch.Parsed) -> list[str]:
    return [note.text for note in parsed.notes]


def test_seed_format_byte_for_byte(path):
    scratch.append(path, scratch.Note(text="User prefers dark mode", at=AT, importance=0.8))
    scratch.append(
        path, scratch.Note(text="Deadline moved", at=AT + timedelta(minutes=5), importance=0.75)
    )
    scratch.append(path, scratch.Note(text="Pinned", at=AT + timedelta(hours=1), importance=1.0))
    assert path.read_bytes() == (
        b"# Scratch Buffer (Working Memory WAL)\n"
        b"\n"
        b"- [2026-03-12T14:30:00Z] (importance: 0.8) User prefers dark mode\n"
        b"- [2026-03-12T14:35:00Z] (importance: 0.75) Deadline moved\n"
        b"- [2026-03-12T15:30:00Z] (importance: 1.0) Pinned\n"
    )


def test_seed_file_written_by_hand_parses(path):
    path.write_text(
        HEADER + "\n- [2026-03-12T14:30:00Z] (importance: 0.8) User prefers dark mode\n"
        "- [2026-03-12T09:00:00Z] (importance: 1) Ship on Friday\n",
        encoding="utf-8",
    )
    parsed = scratch.parse(path)
    assert [(n.at, n.importance, n.text) for n in parsed.notes] == [
        (AT, 0.8, "User prefers dark mode"),
        (datetime(2026, 3, 12, 9, tzinfo=UTC), 1.0, "Ship on Friday"),
    ]
    assert parsed.stray == []


def test_multi_line_note_is_indented(path):
    scratch.append(
        path, scratch.Note(text="line one\nline two\n\nafter a blank", at=AT, importance=0.5)
    )
    assert path.read_text(encoding="utf-8").endswith(
        "- [2026-03-12T14:30:00Z] (importance: 0.5) line one\n  line two\n  \n  after a blank\n"
    )


# Text that must survive: any Unicode (hypothesis excludes lone surrogates, which are not text),
# biased toward the characters that could confuse the format.
_TRICKY = st.sampled_from(
    [
        "\n",
        "\r",
        "\r\n",
        "\u2028",
        "\u2029",
        "\x85",
        "\x0b",
        "\x0c",
        " ",
        "  ",
        "\t",
        "- [",
        "- [2026-03-12T14:30:00Z] (importance: 0.8) ",
        HEADER,
        "# ",
        "(importance: 1)",
        "\ufeff",
        "\x00",
        "é",
        "🦀",
        "  - ",
    ]
)
note_text = (
    st.lists(st.one_of(st.text(), _TRICKY), min_size=1, max_size=8)
    .map("".join)
    .filter(lambda text: text.strip() != "")
)


@pytest.mark.slow
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(first=note_text, second=note_text)
def test_any_text_round_trips_exactly(tmp_path, first, second):
    path = tmp_path / "roundtrip.md"
    path.unlink(missing_ok=True)
    scratch.append(path, scratch.Note(text=first, at=AT, importance=0.3))
    scratch.append(path, scratch.Note(text=second, at=AT, importance=0.9))
    parsed = scratch.parse(path)
    assert texts(parsed) == [first, second]
    assert parsed.stray == []


@settings(max_examples=100, deadline=None)
@given(text=note_text)
def test_render_then_parse_text_is_identity(text):
    parsed = scratch.parse_text(
        HEADER + "\n" + scratch.render_note(scratch.Note(text=text, at=AT, importance=0.7))
    )
    assert texts(parsed) == [text] and parsed.stray == []


def test_human_lines_are_kept_and_reported(path):
    scratch.append(path, scratch.Note(text="first note", at=AT, importance=0.8))
    with path.open("a", encoding="utf-8") as handle:
        handle.write("a line a human typed\n- [yesterday] (importance: high) mangled entry\n")
    scratch.append(path, scratch.Note(text="second note", at=AT, importance=0.6))
    parsed = scratch.parse(path)
    assert texts(parsed) == ["first note", "second note"]
    assert parsed.stray == [
        (4, "a line a human typed"),
        (5, "- [yesterday] (importance: high) mangled entry"),
    ]
    assert "a line a human typed\n" in path.read_text(encoding="utf-8")


def test_bad_date_in_entry_shape_is_stray_not_dropped(path):
    path.write_text(
        HEADER + "\n- [2026-13-45T99:99:99Z] (importance: 0.5) impossible date\n", encoding="utf-8"
    )
    parsed = scratch.parse(path)
    assert parsed.notes == []
    assert parsed.stray == [(3, "- [2026-13-45T99:99:99Z] (importance: 0.5) impossible date")]


def test_header_elsewhere_than_line_one_is_reported(path):
    path.write_text("intro\n" + HEADER, encoding="utf-8")
    assert scratch.parse(path).stray == [(1, "intro"), (2, HEADER.rstrip("\n"))]


def test_hand_edit_without_trailing_newline_is_not_merged(path):
    path.write_text(
        HEADER + "\n- [2026-03-12T14:30:00Z] (importance: 0.8) typed by hand", encoding="utf-8"
    )
    scratch.append(path, scratch.Note(text="appended", at=AT, importance=0.5))
    parsed = scratch.parse(path)
    assert texts(parsed) == ["typed by hand", "appended"]
    with path.open("a", encoding="utf-8") as handle:
        handle.write("a stray with no newline")
    scratch.append(path, scratch.Note(text="third", at=AT, importance=0.5))
    parsed = scratch.parse(path)
    assert texts(parsed) == ["typed by hand", "appended", "third"]
    assert parsed.stray == [(5, "a stray with no newline")]


def test_torn_append_never_swallows_the_next_note(path):
    """A crash mid-write leaves part of an entry, cut inside a UTF-8 character."""
    scratch.append(path, scratch.Note(text="safe", at=AT, importance=0.5))
    torn = scratch.render_note(
        scratch.Note(text="cut in the middle of é and more", at=AT, importance=0.5)
    ).encode("utf-8")
    cut = torn.index("é".encode()) + 1
    with path.open("ab") as handle:
        handle.write(torn[:cut])
    scratch.append(path, scratch.Note(text="after the crash", at=AT, importance=0.5))
    parsed = scratch.parse(path)  # does not raise on the broken byte
    assert texts(parsed) == ["safe", "after the crash"]
    assert [number for number, _ in parsed.stray] == [4]
    # The damaged bytes are kept exactly, through rotate and restore as well.
    scratch.rotate(path)
    scratch.restore(path)
    assert torn[:cut] + b"\n" in path.read_bytes()
    assert texts(scratch.parse(path)) == ["safe", "after the crash"]


def test_missing_file_is_an_empty_scratch(path):
    assert scratch.parse(path) == scratch.Parsed([], [])
    assert scratch.rotate(path) == scratch.Parsed([], [])
    assert scratch.restore(path) == 0


def test_scratch_that_is_a_folder_raises_scratch_error(path):
    path.mkdir()
    with pytest.raises(ScratchError, match="cannot"):
        scratch.append(path, scratch.Note(text="x", at=AT, importance=0.5))


# --- rotate / restore ------------------------------------------------------------------------


def test_notes_after_rotate_land_in_the_fresh_file(path):
    scratch.append(path, scratch.Note(text="before one", at=AT, importance=0.5))
    scratch.append(path, scratch.Note(text="before two", at=AT, importance=0.5))
    moved = scratch.rotate(path)
    assert texts(moved) == ["before one", "before two"]
    assert path.read_text(encoding="utf-8") == HEADER + "\n"
    scratch.append(path, scratch.Note(text="during the dream", at=AT, importance=0.5))
    assert texts(scratch.parse(path)) == ["during the dream"]
    assert texts(scratch.parse(scratch.rotated_path(path))) == ["before one", "before two"]
    scratch.settle(path, lambda note: False)
    assert not scratch.rotated_path(path).exists()
    assert texts(scratch.parse(path)) == ["during the dream"]


def test_restore_puts_rotated_notes_back_in_front_in_order(path):
    for i in range(3):
        scratch.append(
            path,
            scratch.Note(
                text=f"old {i}\nsecond line {i}", at=AT + timedelta(minutes=i), importance=0.5
            ),
        )
    scratch.rotate(path)
    scratch.append(path, scratch.Note(text="new 0", at=AT, importance=0.5))
    scratch.append(path, scratch.Note(text="new 1", at=AT, importance=0.5))
    assert scratch.restore(path) == 3
    assert texts(scratch.parse(path)) == [
        "old 0\nsecond line 0",
        "old 1\nsecond line 1",
        "old 2\nsecond line 2",
        "new 0",
        "new 1",
    ]
    assert not scratch.rotated_path(path).exists()
    assert path.read_text(encoding="utf-8").startswith(HEADER + "\n- [")


def test_rotate_refuses_to_overwrite_an_earlier_rotation(path):
    scratch.append(path, scratch.Note(text="one", at=AT, importance=0.5))
    scratch.rotate(path)
    scratch.append(path, scratch.Note(text="two", at=AT, importance=0.5))
    with pytest.raises(ScratchError, match="interrupted dream"):
        scratch.rotate(path)
    assert texts(scratch.parse(path)) == ["two"]
    assert texts(scratch.parse(scratch.rotated_path(path))) == ["one"]


def test_stray_lines_survive_rotate_and_restore(path):
    path.write_text(HEADER + "\n  an indented line a human typed\n", encoding="utf-8")
    scratch.append(path, scratch.Note(text="note one", at=AT, importance=0.5))
    with path.open("a", encoding="utf-8") as handle:
        handle.write("human remark\n")
    moved = scratch.rotate(path)
    assert texts(moved) == ["note one"]
    # The dream never consumes a human's lines: they stay in the fresh scratch.
    fresh = scratch.parse(path)
    assert [line for _, line in fresh.stray] == ["  an indented line a human typed", "human remark"]
    scratch.append(path, scratch.Note(text="note two", at=AT, importance=0.5))
    scratch.restore(path)
    parsed = scratch.parse(path)
    assert texts(parsed) == ["note one", "note two"]
    assert [line for _, line in parsed.stray] == [
        "  an indented line a human typed",
        "human remark",
    ]


def test_crash_after_rotate_copied_loses_and_doubles_nothing(path):
    """rotate copies the scratch aside before emptying it; a crash in between is recovered."""
    scratch.append(path, scratch.Note(text="one", at=AT, importance=0.5))
    with path.open("a", encoding="utf-8") as handle:
        handle.write("human line\n")
    scratch.append(path, scratch.Note(text="two", at=AT, importance=0.5))
    before = path.read_bytes()
    scratch.rotated_path(path).write_bytes(before)  # the state right after the copy
    assert scratch.restore(path) == 0
    parsed = scratch.parse(path)
    assert texts(parsed) == ["one", "two"]
    assert [line for _, line in parsed.stray] == ["human line"]


def test_crash_after_restore_wrote_does_not_double_notes(path):
    scratch.append(path, scratch.Note(text="one", at=AT, importance=0.5))
    scratch.rotate(path)
    scratch.append(path, scratch.Note(text="two", at=AT, importance=0.5))
    aside = scratch.rotated_path(path).read_bytes()
    scratch.restore(path)
    scratch.rotated_path(path).write_bytes(aside)  # the copy was not deleted yet
    assert scratch.restore(path) == 0
    assert texts(scratch.parse(path)) == ["one", "two"]


def test_identical_notes_are_all_restored(path):
    scratch.append(path, scratch.Note(text="same", at=AT, importance=0.5))
    scratch.append(path, scratch.Note(text="same", at=AT, importance=0.5))
    scratch.rotate(path)
    assert scratch.restore(path) == 2
    assert texts(scratch.parse(path)) == ["same", "same"]


# --- permissions -----------------------------------------------------------------------------


def test_files_are_owner_only(tmp_path):
    ws = Workspace.open(tmp_path / "ws")
    try:
        ws.note("a note so every file exists", at=AT)
        scratch.rotate(ws.scratch_path)
        with ws.lock():
            pass
        memory = ws.memory_dir
        assert stat.S_IMODE(memory.stat().st_mode) == 0o700
        names = set(os.listdir(memory))
        assert {
            "scratch.md",
            "crystals.db",
            "crystals.db-wal",
            "crystals.db-shm",
            "dream.lock",
            scratch.rotated_path(ws.scratch_path).name,
        } <= names
        for name in names:
            mode = stat.S_IMODE((memory / name).stat().st_mode)
            assert mode == 0o600, f"{name} has mode {oct(mode)}"
    finally:
        ws.close()


def test_workspace_note_is_in_scratch_and_a_crystal_before_returning(ws):
    crystal_id = ws.note("The build server is ci-3", importance=0.6, at=AT)
    assert texts(scratch.parse(ws.scratch_path)) == ["The build server is ci-3"]
    crystal = ws.get(crystal_id)
    assert crystal.text == "The build server is ci-3"
    assert (crystal.source, crystal.importance, crystal.created_at) == (
        "scratch",
        0.6,
        "2026-03-12T14:30:00Z",
    )


@settings(max_examples=200, deadline=None)
@given(
    at=st.datetimes(
        min_value=datetime(1, 1, 1),
        max_value=datetime(9999, 12, 31, 23, 59, 59),
        timezones=st.just(UTC),
    ),
    importance=st.floats(min_value=0.0, max_value=1.0),
)
def test_time_and_importance_round_trip(at, importance):
    note = scratch.parse_text(
        scratch.render_note(scratch.Note(text="x", at=at, importance=importance))
    ).notes[0]
    assert note.at == at.replace(microsecond=0)
    assert note.importance == pytest.approx(importance, abs=0.0005)


def test_entry_with_importance_above_one_is_stray(path):
    path.write_text(
        HEADER + "\n- [2026-03-12T14:30:00Z] (importance: 8) very very important\n"
        "  its second line\n",
        encoding="utf-8",
    )
    parsed = scratch.parse(path)
    assert parsed.notes == []
    assert [line for _, line in parsed.stray] == [
        "- [2026-03-12T14:30:00Z] (importance: 8) very very important",
        "  its second line",
    ]


def test_failed_append_takes_back_what_it_wrote(path):
    """The disk fills up mid-note (a file-size limit stands in for a full disk)."""
    scratch.append(path, scratch.Note(text="already here", at=AT, importance=0.5))
    before = path.read_bytes()
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from datetime import datetime, UTC
        from pathlib import Path
        from dreamer.memory import scratch
        from dreamer.errors import ScratchError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG instead of being killed
        resource.setrlimit(resource.RLIMIT_FSIZE, ({len(before)} + 100, resource.RLIM_INFINITY))
        try:
            scratch.append(Path(sys.argv[1]), scratch.Note(datetime.now(UTC), 0.5, "x" * 5000))
        except ScratchError as e:
            print("refused:", e)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.startswith("refused: cannot append"), result.stderr
    assert path.read_bytes() == before
    scratch.append(path, scratch.Note(text="after the failure", at=AT, importance=0.5))
    assert texts(scratch.parse(path)) == ["already here", "after the failure"]


_human_line = st.one_of(
    # What an editor can save: UTF-8 text, so no lone surrogates (they cannot be encoded).
    st.text(
        alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=30
    ),
    st.sampled_from(
        [
            "  indented",
            "- [2026-03-12T14:30:00Z] (importance: 0.5)",
            "- [x] todo",
            HEADER.rstrip("\n"),
            "   ",
            "\r",
            "- [2026-03-12T14:30:00Z] (importance: 0.5) hand-written note",
        ]
    ),
)


@pytest.mark.slow
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    before=st.lists(
        st.one_of(note_text.map(lambda t: ("note", t)), _human_line.map(lambda t: ("human", t))),
        max_size=6,
    ),
    during=st.lists(note_text, max_size=3),
)
def test_rotate_then_restore_keeps_every_note_and_line(tmp_path, before, during):
    path = tmp_path / "property.md"
    path.unlink(missing_ok=True)
    scratch.rotated_path(path).unlink(missing_ok=True)
    for kind, text in before:
        if kind == "note":
            scratch.append(path, scratch.Note(text=text, at=AT, importance=0.5))
        else:
            with path.open("a", encoding="utf-8", newline="") as handle:
                handle.write(text + "\n")
    original = scratch.parse(path)
    moved = scratch.rotate(path)
    assert texts(moved) == texts(original)
    for text in during:
        scratch.append(path, scratch.Note(text=text, at=AT + timedelta(hours=1), importance=0.5))
    assert scratch.restore(path) == len(original.notes)
    final = scratch.parse(path)
    assert texts(final) == texts(original) + during
    assert [line for _, line in final.stray] == [line for _, line in original.stray]
