"""The scratch's safety promises, observed at the file layer (``disk_faults``).

- an append is on disk (fsynced) before it returns, and is made under the scratch lock;
- rotate, restore, settle and rewrite change the files only under that lock;
- a kill at any file call of rotate, restore or settle loses no note and, after the next
  start's recovery, doubles none.
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from disk_faults import Disk, Killed
from filelock import FileLock, Timeout

from dreamer.errors import ScratchError
from dreamer.memory import scratch
from dreamer.memory.scratch import Note
from dreamer.support import failures

AT = datetime(2026, 3, 12, 14, 30, tzinfo=UTC)
NOTES = [f"note {n}: the deploy of service {n} is on Thursday" for n in range(5)]


@pytest.fixture
def path(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    return folder / "scratch.md"


@pytest.fixture
def disk(monkeypatch):
    return Disk(monkeypatch)


def fill(path, notes=NOTES):
    for n, text in enumerate(notes):
        scratch.append(path, scratch.Note(text=text, at=AT + timedelta(minutes=n), importance=0.5))


def everything(path) -> Counter:
    """Every note still on disk: in the scratch or in its rotated copy."""
    return Counter(n.text for n in scratch.FileScratch(path).waiting())


def lock_is_free(path) -> bool:
    try:
        FileLock(path.with_name("scratch.lock"), timeout=0).acquire().lock.release()
    except Timeout:
        return False
    return True


@pytest.mark.parametrize("fresh", [True, False])
def test_an_append_is_synced_before_it_returns(path, disk, fresh):
    if not fresh:
        fill(path)
        disk.reset()
    scratch.append(
        path, scratch.Note(text="the note that must survive a power cut", at=AT, importance=0.8)
    )
    assert any(e.kind == "write" and e.path == str(path.resolve()) for e in disk.events)
    assert disk.unsynced() == set()
    if fresh:  # a new file's name is made durable too
        assert disk.events[-1].kind == "fsync" and disk.events[-1].path == str(path.parent)


def test_every_change_to_the_scratch_files_is_made_under_the_scratch_lock(path, disk):
    watched = {str(path.resolve()), str(scratch.rotated_path(path).resolve())}
    unlocked: list[str] = []

    def check(event):
        touches = {event.path, event.target} & watched
        if event.kind == "open" and not event.flags & (os.O_WRONLY | os.O_RDWR):
            return
        if touches and event.kind != "fsync" and lock_is_free(path):
            unlocked.append(f"{event.kind} {sorted(touches)}")

    disk.checks.append(check)
    fill(path)
    scratch.FileScratch(path).init()
    scratch.rotate(path)
    scratch.append(
        path,
        scratch.Note(text="written during the dream", at=AT + timedelta(hours=1), importance=0.5),
    )
    scratch.rewrite(path, lambda text: text.replace("Thursday", "Friday"))
    scratch.restore(path)
    scratch.rotate(path)
    scratch.settle(path, lambda note: note.text.endswith("Friday"))
    scratch.rotate(path)
    scratch.settle(path, lambda note: False)
    assert unlocked == []


def test_rotate_copies_the_notes_aside_before_it_empties_the_scratch(path, disk):
    fill(path)
    disk.reset()
    scratch.rotate(path)
    aside, main = str(scratch.rotated_path(path).resolve()), str(path.resolve())
    order = [e.target for e in disk.events if e.kind == "replace"]
    assert order == [aside, main]


OPERATIONS = {
    "rotate": lambda path: scratch.rotate(path),
    "restore": lambda path: scratch.restore(path),
    "settle": lambda path: scratch.settle(path, lambda note: note.text.endswith(("1", "3"))),
}
KINDS = ("write", "fsync", "replace", "unlink")


def _prepare(path, operation):
    fill(path)
    if operation != "rotate":
        scratch.rotate(path)
        scratch.append(
            path,
            scratch.Note(
                text="written during the dream", at=AT + timedelta(hours=1), importance=0.5
            ),
        )


def _calls(path, disk, operation) -> Counter:
    _prepare(path, operation)
    disk.reset()
    OPERATIONS[operation](path)
    return Counter(event.kind for event in disk.events if event.kind in KINDS)


@pytest.mark.slow
@pytest.mark.parametrize("operation", OPERATIONS)
def test_a_kill_at_any_file_call_loses_no_note_and_recovery_doubles_none(
    tmp_path, monkeypatch, operation
):
    counting = tmp_path / "count" / "scratch.md"
    counting.parent.mkdir()
    with monkeypatch.context() as m:
        calls = _calls(counting, Disk(m), operation)
    crashes = 0
    for kind in KINDS:
        for number in range(1, calls[kind] + 1):
            for after in (False, True):
                path = tmp_path / f"{kind}-{number}-{after}" / "scratch.md"
                path.parent.mkdir()
                _prepare(path, operation)
                before = everything(path)
                with monkeypatch.context() as m:
                    disk = Disk(m)
                    disk.crash_at(kind, number, after=after)
                    with pytest.raises(Killed):
                        OPERATIONS[operation](path)
                crashes += 1
                where = f"{operation}: killed {'after' if after else 'before'} {kind} #{number}"
                # Nothing lost: a settle may drop only the notes it was asked to drop.
                left = everything(path)
                dropped = before - left
                if operation == "settle":
                    assert all(not t.endswith(("1", "3")) for t in dropped), where
                else:
                    assert not dropped, where
                # The next start recovers; a note is then in the scratch once, none twice
                # (a settle the kill cut short may still bring the dropped notes back).
                scratch.restore(path)
                assert not scratch.rotated_path(path).exists(), where
                recovered = Counter(n.text for n in scratch.parse(path).notes)
                assert max(recovered.values()) == 1, where
                assert set(before) - set(dropped) <= set(recovered), where
    assert crashes >= 4  # the operation did reach the file layer


# --- rewriting in place (redaction, forgetting): exact bytes, exact counts ---------------------

HEAD = scratch.HEADER


def _entry(text, minutes, importance=0.5):
    return scratch.render_note(
        scratch.Note(text=text, at=AT + timedelta(minutes=minutes), importance=importance)
    )


def test_a_rewrite_changes_exactly_what_it_is_asked_and_counts_it(path):
    content = (
        HEAD
        + "\n"
        + _entry("keep me", 0)
        + "a stray line with a password\n"
        + _entry("change me\nsecond line of it", 1, 0.8)
        + _entry("drop me", 2)
        + _entry("last one", 3)
    )
    path.write_text(content, encoding="utf-8")

    def note(text):
        return None if text == "drop me" else text.replace("change me", "changed me")

    def stray(line):
        return line.replace("password", "[secret]")

    assert scratch.rewrite(path, note, stray, dry_run=True) == 3
    assert path.read_text(encoding="utf-8") == content  # a dry run writes nothing
    assert scratch.rewrite(path, note, stray) == 3
    assert path.read_text(encoding="utf-8") == (
        HEAD
        + "\n"
        + _entry("keep me", 0)
        + "a stray line with a [secret]\n"
        + _entry("changed me\nsecond line of it", 1, 0.8)
        + _entry("last one", 3)
    )
    assert scratch.rewrite(path, note, stray) == 0  # nothing left to change


def test_a_rewrite_keeps_the_header_and_a_file_without_a_final_newline(path):
    content = HEAD + "\n" + _entry("alpha", 0) + "a b\n" + _entry("beta", 1).rstrip("\n")
    path.write_text(content, encoding="utf-8")
    changed = scratch.rewrite(path, str.upper, lambda line: line.replace(" ", "_"))
    assert changed == 3  # two notes and the stray line; never the header
    assert path.read_text(encoding="utf-8") == (
        HEAD + "\n" + _entry("ALPHA", 0) + "a_b\n" + _entry("BETA", 1).rstrip("\n")
    )


def test_a_rewrite_reaches_the_rotated_copy_and_skips_a_missing_scratch(path):
    path.parent.mkdir(exist_ok=True)
    fill(path, NOTES[:2])
    scratch.rotate(path)
    path.unlink()
    assert scratch.rewrite(path, lambda text: None) == 2
    assert not path.exists()
    assert scratch.parse(scratch.rotated_path(path)).notes == []


def test_file_scratch_reads_and_changes_through_the_module(path):
    log = scratch.FileScratch(path)
    log.init()
    assert path.read_text(encoding="utf-8") == HEAD + "\n"
    before = log.stamp()
    log.append(Note(text="first note", at=AT, importance=0.5))
    assert log.stamp() != before and log.modified() is not None
    assert [n.text for n in log.notes()] == ["first note"]
    assert [n.text for n in log.rotate()] == ["first note"]
    log.append(Note(text="during the dream", at=AT, importance=0.5))
    assert [n.text for n in log.waiting()] == ["during the dream", "first note"]
    assert log.rewrite(lambda text: text + "!", dry_run=True) == 2
    assert log.rewrite(lambda text: text + "!") == 2
    assert log.restore() == 1
    assert log.text().splitlines()[2:] == [
        _entry("first note!", 0).rstrip("\n"),
        _entry("during the dream!", 0).rstrip("\n"),
    ]
    log.rotate()
    assert log.settle(lambda note: note.text.startswith("first")) == 1
    assert [n.text for n in log.notes()] == ["first note!"]
    path.write_bytes(path.read_bytes() + b"\xff\xfe torn\n")
    assert log.text().endswith("\ufffd\ufffd torn\n")  # shown, never a decode error


# --- the scratch's edges, from mutation testing ----------------------------------------------


def test_notes_know_their_line_and_the_last_one_needs_no_newline():
    content = HEAD + "\n" + _entry("one\ntwo", 0) + _entry("three", 1).rstrip("\n")
    parsed = scratch.parse_text(content)
    assert [(n.text, n.line) for n in parsed.notes] == [("one\ntwo", 3), ("three", 5)]
    assert parsed.stray == []


def test_an_importance_above_one_is_a_stray_line_however_small_the_excess():
    line = "- [2026-03-12T14:30:00Z] (importance: 1.5) hand-edited"
    assert scratch.parse_text(line + "\n").stray == [(1, line)]


def test_a_fresh_scratch_made_by_an_append_is_owner_only(path):
    scratch.append(path, scratch.Note(text="first", at=AT, importance=0.5))
    assert path.stat().st_mode & 0o777 == 0o600


def test_text_that_is_not_utf8_goes_back_byte_for_byte(path):
    scratch.append(
        path, scratch.Note(text="torn \udcff byte", at=AT, importance=0.5)
    )  # what undecodable input decodes to
    assert b"torn \xff byte" in path.read_bytes()


def test_the_rotated_file_has_the_documented_name(path):
    assert scratch.rotated_path(path).name == "scratch.dreaming.md"


@pytest.mark.parametrize(
    ("error", "where"),
    [
        (errno.EMFILE, "open"),
        (errno.ENOSPC, "write"),
        (errno.EISDIR, "open"),
        (errno.EINVAL, "write"),
    ],
)
def test_a_failed_append_names_the_cause_and_takes_back_what_it_wrote(
    path, monkeypatch, error, where
):
    fill(path, NOTES[:1])
    before = path.read_bytes()
    real = {"open": os.open, "write": os.write}

    def failing(*args, **kwargs):
        if str(args[0]) == str(path) or (where == "write" and isinstance(args[0], int)):
            if where == "write":
                real["write"](args[0], bytes(args[1][:7]))  # part of it lands first
            if where == "write":  # os.write names no file: the message must name the scratch
                raise OSError(error, os.strerror(error))
            raise OSError(error, os.strerror(error), str(path))
        return real[where](*args, **kwargs)

    monkeypatch.setattr(os, where, failing)
    with pytest.raises(ScratchError) as caught:
        scratch.append(path, scratch.Note(text="never half there", at=AT, importance=0.5))
    monkeypatch.undo()
    known = failures.explain_os_error(OSError(error, os.strerror(error)), path)
    message = str(caught.value)
    verb = "open" if where == "open" else "append to"
    assert message.startswith(f"cannot {verb} {path}")
    if known:
        assert message.endswith(str(known))
    elif where == "open":
        assert message.endswith(f"{os.strerror(error)}; make it a writable file")
    else:
        assert message.endswith(f"{os.strerror(error)}; check the disk and its permissions")
    assert path.read_bytes() == before


def test_an_unreadable_scratch_is_one_scratch_error(tmp_path):
    folder = tmp_path / "scratch.md"
    folder.mkdir()
    with pytest.raises(ScratchError, match=r"cannot read .*scratch\.md .*check its permissions"):
        scratch.parse(folder)


def test_restore_brings_back_only_the_copies_the_scratch_lacks(path):
    note = _entry("same words", 0)
    path.write_text(HEAD + "\n" + note, encoding="utf-8")  # a crash left one copy here
    scratch.rotated_path(path).write_text(HEAD + "\n" + note * 3, encoding="utf-8")
    assert scratch.restore(path) == 2
    assert [n.text for n in scratch.parse(path).notes] == ["same words"] * 3


def test_restore_keeps_a_scratch_without_the_header_and_a_line_starting_with_x(path):
    path.write_text("Xmas list, kept by hand\n" + _entry("written by hand", 5), encoding="utf-8")
    scratch.rotated_path(path).write_text(HEAD + "\n" + _entry("rotated", 0), encoding="utf-8")
    assert scratch.restore(path) == 1
    assert path.read_text(encoding="utf-8") == (
        HEAD
        + "\n"
        + _entry("rotated", 0)
        + "Xmas list, kept by hand\n"
        + _entry("written by hand", 5)
    )
    scratch.rotated_path(path).write_text(HEAD + "\n" + _entry("again", 0), encoding="utf-8")
    path.write_text(HEAD + "\nXmas list\n", encoding="utf-8")
    assert scratch.restore(path) == 1
    assert path.read_text(encoding="utf-8") == HEAD + "\n" + _entry("again", 0) + "Xmas list\n"


def test_settle_puts_back_exactly_the_kept_notes_in_order(path):
    assert scratch.settle(path, lambda note: True) == 0  # nothing rotated
    fill(path, NOTES[:4])
    scratch.rotate(path)
    scratch.append(path, scratch.Note(text="during", at=AT + timedelta(hours=1), importance=0.5))
    kept = {NOTES[1], NOTES[3]}
    assert scratch.settle(path, lambda note: note.text in kept) == 2
    assert path.read_text(encoding="utf-8") == (
        HEAD + "\n" + _entry(NOTES[1], 1) + _entry(NOTES[3], 3) + _entry("during", 60)
    )
    assert not scratch.rotated_path(path).exists()
    scratch.rotate(path)
    assert scratch.settle(path, lambda note: False) == 0
    assert not scratch.rotated_path(path).exists()
    assert scratch.parse(path).notes == []


def test_a_rewrite_keeps_notes_it_does_not_change_byte_for_byte(path):
    content = HEAD + "\n" + _entry("build X", 0) + _entry("padded ", 1) + _entry("other", 2)
    path.write_text(content, encoding="utf-8")
    assert scratch.rewrite(path, lambda text: text.replace("other", "changed")) == 1
    assert path.read_text(encoding="utf-8") == (
        HEAD + "\n" + _entry("build X", 0) + _entry("padded ", 1) + _entry("changed", 2)
    )


def test_a_rewrite_reaches_the_first_line_of_a_scratch_without_the_header(path):
    path.write_text("password hunter2 pasted by hand\n" + _entry("a note", 0), encoding="utf-8")
    log = scratch.FileScratch(path)
    assert log.rewrite(lambda text: text, lambda line: line.replace("hunter2", "[secret]")) == 1
    assert path.read_text(encoding="utf-8").startswith("password [secret] pasted by hand\n")
