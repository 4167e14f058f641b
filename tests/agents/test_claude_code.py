"""Reading Claude Code project folders: exchanges, filtering, growing files, replaced files."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from claude_code_fixture import (
    EXPECTED,
    FORBIDDEN,
    SESSION,
    Session,
    build_project,
    main_session,
    text_block,
    tool_block,
)

from dreamer.agents.claude_code import (
    Cursor,
    Exchange,
    UnreadableTranscript,
    project_sessions,
    read_session,
)


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Any]:
    return build_project(tmp_path)


def read_all(folder: Path, final: bool = True) -> list[Exchange]:
    return [x for path in project_sessions(folder) for x in read_session(path, final=final)[0]]


def find(exchanges: list[Exchange], phrase: str) -> list[Exchange]:
    return [x for x in exchanges if phrase in x.user]


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def roundtrip(cursor: Cursor) -> Cursor:
    return Cursor.from_dict(json.loads(json.dumps(cursor.to_dict())))


# --- the project folder -------------------------------------------------------------------


def test_project_lists_sessions_and_subagents_but_no_index_meta_dump_or_compaction(project):
    assert project_sessions(project["folder"]) == sorted(
        [project["main"], project["second"], project["subagent"]], key=str
    )


def test_the_whole_project_is_read_without_an_error(project):
    for path in project_sessions(project["folder"]):
        read_session(path)
        read_session(path, final=True)


@pytest.mark.parametrize("expected", EXPECTED, ids=[e["phrase"] for e in EXPECTED])
def test_each_expected_exchange_is_found_once_with_its_answer(project, expected):
    [exchange] = find(read_all(project["folder"]), expected["phrase"])
    assert exchange.session_id == expected["session_id"]
    assert exchange.subagent == expected["subagent"]
    for piece in expected["assistant"]:
        assert piece in exchange.assistant
    for piece in expected.get("user", []):
        assert piece in exchange.user
    if not expected["assistant"]:
        assert exchange.assistant == ""


def test_only_the_expected_exchanges_are_found(project):
    assert len(read_all(project["folder"])) == len(EXPECTED)


def test_no_markup_errors_summaries_dumps_thinking_or_reminders_are_kept(project):
    kept = "\n".join(x.text() for x in read_all(project["folder"]))
    for text in FORBIDDEN:
        assert text not in kept


def test_tool_calls_are_short_one_liners(project):
    calls = [
        line
        for x in read_all(project["folder"])
        for line in x.assistant.splitlines()
        if line.startswith("[tool:")
    ]
    assert '[tool: Bash "pytest -q tests/test_retry.py"]' in calls
    assert len(calls) == 6
    for call in calls:
        assert re.fullmatch(r'\[tool: \w+( "[^\n]{1,80}")?\]', call)
        assert "old_string" not in call and "Retry backoff is capped" not in call


def test_long_tool_arguments_are_clipped_to_one_line(tmp_path):
    s = Session(SESSION, "main")
    s.user("Run the long pipeline")
    s.reply("m1", tool_block("t1", "Bash", command="set -e\n" + "echo step && " * 40))
    s.reply("m2", text_block("Done."), stop="end_turn")
    [x], _ = read_session(s.write(tmp_path / "s.jsonl"), final=True)
    call = x.assistant.splitlines()[0]
    assert call.startswith('[tool: Bash "set -e echo step') and call.endswith('…"]')
    assert len(call) <= 100


def test_metadata_is_kept(project):
    first = find(read_all(project["folder"]), "flaky retry test")[0]
    assert first.session_id == SESSION
    assert first.cwd == project["cwd"] and first.git_branch == project["branch"]
    assert first.at == datetime(2026, 3, 12, 14, 0, 7, 250000, tzinfo=UTC)
    assert first.at.utcoffset() is not None
    [delegated] = find(read_all(project["folder"]), "DELEGATED-PROMPT")
    assert delegated.subagent_task == "Find retry callers"


def test_a_subagents_prompt_is_not_presented_as_the_user(project):
    [delegated] = find(read_all(project["folder"]), "DELEGATED-PROMPT")
    assert delegated.text().startswith("Task for subagent Explore: List every call site")
    assert "\nSubagent Explore: " in delegated.text()
    assert "User:" not in delegated.text()


def test_a_main_exchange_renders_as_user_and_assistant(project):
    [second] = find(read_all(project["folder"]), "Python versions")
    assert second.text() == (
        "User: Which Python versions does orbit support?\n"
        "Assistant: Python 3.11 and newer, per pyproject.toml."
    )


def test_an_open_last_exchange_waits_for_a_final_read(project):
    open_read = read_all(project["folder"], final=False)
    for expected in EXPECTED:
        assert len(find(open_read, expected["phrase"])) == (0 if expected.get("final_only") else 1)


# --- a file that is still being written ---------------------------------------------------


def test_a_growing_file_emits_each_exchange_exactly_once(tmp_path, project):
    lines = lines_of(project["main"])
    whole, whole_cursor = read_session(project["main"], final=True)
    by_uuid = {x.uuid: x for x in whole}
    path = tmp_path / "growing.jsonl"
    cursor: Cursor | None = None
    emitted: list[Exchange] = []
    steps = {8: [], 10: [], 14: ["flaky retry test"], 24: ["changelog entry", "for the README"]}
    for count, phrases in steps.items():
        # the next line is half written, as when a hook fires during a write
        path.write_bytes(b"".join(lines[:count]) + lines[count][:25])
        new, cursor = read_session(path, cursor)
        cursor = roundtrip(cursor)
        assert [p for p in phrases] == [p for x in new for p in phrases if p in x.user]
        assert len(new) == len(phrases)
        for x in new:
            assert x == by_uuid[x.uuid]  # never a partial answer
        emitted += new
    path.write_bytes(b"".join(lines))
    new, cursor = read_session(path, cursor)
    emitted += new
    new, cursor = read_session(path, cursor, final=True)
    emitted += new
    assert [x.uuid for x in emitted] == [x.uuid for x in whole]
    assert emitted == whole
    assert read_session(path, cursor, final=True)[0] == []
    assert (cursor.malformed, cursor.skipped) == (whole_cursor.malformed, whole_cursor.skipped)


def test_a_partly_written_line_is_not_consumed(tmp_path, project):
    lines = lines_of(project["second"])
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:1]) + lines[1][:40])
    new, cursor = read_session(path)
    assert new == [] and cursor.offset == 0 and cursor.malformed == 0
    path.write_bytes(b"".join(lines))
    [x], cursor = read_session(path, cursor)
    assert "3.11 and newer" in x.assistant and cursor.malformed == 0


def test_a_reply_written_block_by_block_is_not_cut_at_its_stop_reason(tmp_path):
    s = Session(SESSION, "main")
    s.user("Explain the cache")
    s.reply("m1", text_block("The cache keeps the last hundred keys"), stop="end_turn")
    s.reply("m1", text_block("and evicts the oldest first."), stop="end_turn")
    s.system("turn_duration", durationMs=900)
    written = [json.dumps(e).encode() + b"\n" for e in s.lines]
    path = tmp_path / "s.jsonl"
    cursor = None
    for count in (2, 3):
        path.write_bytes(b"".join(written[:count]))
        new, cursor = read_session(path, cursor)
        assert new == []
    path.write_bytes(b"".join(written))
    [x], _ = read_session(path, cursor)
    assert x.assistant.endswith("and evicts the oldest first.")


def test_a_later_line_after_end_turn_closes_the_exchange(tmp_path):
    s = Session(SESSION, "main")
    s.user("Explain the cache")
    s.reply("m1", text_block("It is an LRU."), stop="end_turn")
    s.raw({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}})
    [x], cursor = read_session(s.write(tmp_path / "s.jsonl"))
    assert x.assistant == "It is an LRU." and cursor.offset == (tmp_path / "s.jsonl").stat().st_size


# --- a file that was truncated or replaced ------------------------------------------------


def test_a_replaced_file_with_more_lines_emits_only_what_is_new(tmp_path, project):
    path = tmp_path / "s.jsonl"
    lines = lines_of(project["main"])
    path.write_bytes(b"".join(lines[:30]))
    first, cursor = read_session(path)
    assert [x.user.split("\n")[0][:14] for x in first][-1] == "Second attempt"
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(b"".join(lines))
    os.replace(replacement, path)  # a new inode, as when a file is restored or copied over
    new, cursor = read_session(path, roundtrip(cursor))
    assert cursor.restarts == 1
    assert [x.user for x in new] == [
        "Find callers of retry() across the code base",
        "Also look in the tests folder for callers",
    ]


def test_a_truncated_file_is_read_again_without_repeating_an_exchange(tmp_path, project):
    path = tmp_path / "s.jsonl"
    lines = lines_of(project["main"])
    path.write_bytes(b"".join(lines))
    before, cursor = read_session(path)
    path.write_bytes(b"".join(lines[:14]))  # same inode, shorter than the cursor's offset
    new, cursor = read_session(path, cursor)
    assert new == [] and cursor.restarts == 1
    s = Session(SESSION, "main", start=600)
    s.user("A new question after the truncation")
    s.reply("m9", text_block("A new answer."), stop="end_turn")
    s.system("turn_duration", durationMs=500)
    with path.open("ab") as fh:
        fh.write(b"".join(json.dumps(e).encode() + b"\n" for e in s.lines))
    new, cursor = read_session(path, cursor)
    assert [x.user for x in new] == ["A new question after the truncation"]
    assert read_session(path, cursor, final=True)[0] == []
    assert len(before) == 6


def test_a_file_rewritten_in_place_is_detected_by_its_mark(tmp_path, project):
    path = tmp_path / "s.jsonl"
    path.write_bytes(project["second"].read_bytes())
    _, cursor = read_session(path)
    inode = path.stat().st_ino
    s = Session("another-session", "main", start=900)
    for n in range(6):
        s.user(f"Rewritten question {n}")
        s.reply(f"r{n}", text_block(f"Rewritten answer {n}."), stop="end_turn")
        s.system("turn_duration", durationMs=100)
    with path.open("r+b") as fh:  # same inode, at least as long: only the mark can tell
        fh.write(b"".join(json.dumps(e).encode() + b"\n" for e in s.lines))
    assert path.stat().st_ino == inode and path.stat().st_size >= cursor.offset
    new, cursor = read_session(path, cursor)
    assert cursor.restarts == 1
    assert [x.user for x in new] == [f"Rewritten question {n}" for n in range(6)]


# --- malformed and unreadable input -------------------------------------------------------


def test_malformed_lines_are_skipped_and_counted(tmp_path, project):
    lines = lines_of(project["main"])
    junk = [
        b"not json at all\n",
        b'{"type": "user", "message": \n',
        b"[1, 2, 3]\n",
        b"\xff\xfe\x00 binary junk\n",
        b'{"type": "assistant", "message": "not an object"}\n',
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[:5] + junk[:2] + lines[5:20] + junk[2:] + lines[20:]))
    exchanges, cursor = read_session(path, final=True)
    assert cursor.malformed == 5
    assert [x.text() for x in exchanges] == [
        x.text() for x in read_session(project["main"], final=True)[0]
    ]


def test_an_unreadable_file_raises_the_modules_error(tmp_path):
    with pytest.raises(UnreadableTranscript, match="cannot read it"):
        read_session(tmp_path / "missing.jsonl")
    with pytest.raises(UnreadableTranscript):
        read_session(tmp_path)
    with pytest.raises(UnreadableTranscript, match="not a folder"):
        project_sessions(tmp_path / "nowhere")


def test_a_bad_meta_file_only_loses_the_label(project):
    project["meta"].write_text("{not json")
    [x], _ = read_session(project["subagent"], final=True)
    assert x.subagent == "a1b2c3d" and x.subagent_task is None


def test_the_cursor_round_trips_through_json(project):
    _, cursor = read_session(project["main"])
    assert roundtrip(cursor) == cursor
    assert Cursor.from_dict({"offset": 3, "unknown": 1}) == Cursor(offset=3)


# --- turns that are not the person speaking -----------------------------------------------


def test_a_task_notification_turn_is_not_an_exchange(tmp_path):
    s = Session(SESSION, "main")
    s.user(
        "<task-notification>\n<task-id>b7636e2</task-id>\n<status>completed</status>\n"
        "</task-notification>\nRead the output file to retrieve the result"
    )
    s.reply("m1", text_block("The background tests passed."))
    s.user("Good, now commit")
    s.reply("m2", text_block("Committed."), stop="end_turn")
    exchanges, cursor = read_session(s.write(tmp_path / "s.jsonl"), final=True)
    assert [x.user for x in exchanges] == ["Good, now commit"]
    assert cursor.skipped["notification"] == 1 and cursor.skipped["unprompted"] == 1


def test_an_answered_slash_command_is_kept_without_its_markup(tmp_path):
    s = Session(SESSION, "main")
    s.user(
        "<command-message>review is running…</command-message>\n"
        "<command-name>/review</command-name>\n<command-args>PR 12</command-args>"
    )
    s.user("Review the pull request below and list the risks.", isMeta=True)
    s.reply("m1", text_block("PR 12 changes the retry cap; the risk is slower failures."))
    [x], _ = read_session(s.write(tmp_path / "s.jsonl"), final=True)
    assert x.user == "/review PR 12" and "<" not in x.text()
    assert "list the risks" not in x.text()


def test_sidechain_lines_inside_a_main_session_are_skipped(tmp_path):
    s = Session(SESSION, "main")
    s.user("Look around")
    s.entry("user", isSidechain=True, message={"role": "user", "content": "inner prompt"})
    s.reply("m1", text_block("Looked."), stop="end_turn")
    exchanges, cursor = read_session(s.write(tmp_path / "s.jsonl"), final=True)
    assert [x.user for x in exchanges] == ["Look around"] and cursor.skipped["sidechain"] == 1


def test_output_after_an_ended_turn_is_counted_as_orphaned(tmp_path):
    s = Session(SESSION, "main")
    s.user("Fix the test")
    s.reply("m1", text_block("Fixed."), stop="end_turn")
    s.system("stop_hook_summary", hookCount=1, preventedContinuation=False)
    s.reply("m2", text_block("The Stop hook asked for more, so I also ran lint."))
    exchanges, cursor = read_session(s.write(tmp_path / "s.jsonl"), final=True)
    assert [x.assistant for x in exchanges] == ["Fixed."] and cursor.skipped["orphaned"] == 1


def test_a_prompt_queued_mid_turn_survives_a_cursor_between_enqueue_and_hand_over(tmp_path):
    s = Session(SESSION, "main")
    s.user("Run the slow suite")
    s.reply("m1", tool_block("t1", "Bash", command="pytest -q --slow"))
    s.raw(s.queue("enqueue", content="and then push the branch"))
    s.raw(s.queue("enqueue", content="<task-notification>a shell finished</task-notification>"))
    s.tool_result("t1", "120 passed")
    s.raw(s.queue("remove"))
    s.reply("m2", tool_block("t2", "Bash", command="git push"))
    s.tool_result("t2", "pushed")
    s.reply("m3", text_block("All 120 pass and the branch is pushed."), stop="end_turn")
    s.system("turn_duration", durationMs=5000)
    written = [json.dumps(e).encode() + b"\n" for e in s.lines]
    path = tmp_path / "s.jsonl"
    cursor, emitted = None, []
    for count in range(1, len(written) + 1):
        path.write_bytes(b"".join(written[:count]))
        new, cursor = read_session(path, cursor)
        cursor = roundtrip(cursor)
        emitted += new
    assert [(x.user, x.assistant) for x in emitted] == [
        ("Run the slow suite", '[tool: Bash "pytest -q --slow"]'),
        (
            "and then push the branch",
            '[tool: Bash "git push"]\nAll 120 pass and the branch is pushed.',
        ),
    ]
    assert emitted[1].cwd == emitted[0].cwd and emitted[1].at > emitted[0].at
    assert cursor.queue == [] and cursor.skipped["queue-operation"] == 2


def test_a_queued_command_attachment_is_a_prompt(tmp_path):
    s = Session(SESSION, "main")
    s.user("Refactor the parser")
    s.reply("m1", tool_block("t1", "Edit", file_path="/home/ada/projects/orbit/parser.py"))
    s.entry(
        "attachment",
        attachment={
            "type": "queued_command",
            "commandMode": "prompt",
            "prompt": "keep the public names",
        },
    )
    s.reply("m2", text_block("Done, and the public names are unchanged."), stop="end_turn")
    s.system("turn_duration", durationMs=900)
    exchanges, _ = read_session(s.write(tmp_path / "s.jsonl"))
    assert [x.user for x in exchanges] == ["Refactor the parser", "keep the public names"]
    assert exchanges[1].assistant == "Done, and the public names are unchanged."


def test_a_prompt_typed_as_blocks_keeps_its_text_and_drops_reminders(tmp_path):
    s = Session(SESSION, "main")
    s.user([text_block("<system-reminder>only a reminder</system-reminder>")])
    s.user([text_block("Rename the module"), text_block("<system-reminder>x</system-reminder>")])
    s.reply("m1", text_block("Renamed."), stop="end_turn")
    exchanges, cursor = read_session(s.write(tmp_path / "s.jsonl"), final=True)
    assert [x.user for x in exchanges] == ["Rename the module"]
    assert cursor.skipped["empty"] == 1


def test_the_fixture_session_is_long_enough_for_the_growing_test():
    assert len(main_session().lines) > 24
