"""`forget --search` and the memory_forget tool select exactly what holds the words, and log
nothing; crystal ids are typed."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from dreamer import Workspace
from dreamer.agents import tools
from dreamer.cli import main
from dreamer.errors import CrystalNotFound, UsageError
from dreamer.support.resources import schema

ADA = [
    "Ada's old address was 12 Rua Augusta, Lisbon, until March",
    "Ada's new address is 40 Avenida da Liberdade, Lisbon",
    "Ada's office address is 7 Praça do Comércio, second floor",
    "Deploys happen on Tuesdays after the standup",
    "Mia likes jazz and plays the saxophone on weekends",
    "The quarterly report is due on April 3",
]


def notes(tmp_path, now, texts=ADA) -> str:
    root = tmp_path / "ws"
    with Workspace.open(root) as ws:
        for i, text in enumerate(texts):
            ws.note(text, at=now - timedelta(minutes=len(texts) - i))
    return str(root)


def found(root: str, query: str) -> list[str]:
    result = CliRunner().invoke(main, ["search", query, "--json", "-w", root])
    assert result.exit_code == 0, result.output
    return [hit["text"] for hit in json.loads(result.output)]


def live(root: str) -> list[str]:
    with Workspace.open(root) as ws:
        return [crystal.text for crystal in ws.store.crystals.select()]


@pytest.mark.slow
def test_forget_search_forgets_the_old_address_only(tmp_path, now):
    root = notes(tmp_path, now)
    result = CliRunner().invoke(main, ["forget", "--search", "old address", "--yes", "-w", root])
    assert result.exit_code == 0, result.output
    assert "Forgot 1 crystal(s) (#1)" in result.output
    assert live(root) == ADA[1:]
    assert ADA[1] in found(root, "new address")
    assert ADA[2] in found(root, "office address")
    assert ADA[3] in found(root, "deploys Tuesdays")
    assert all("Rua Augusta" not in text for text in found(root, "Rua Augusta address"))


def test_a_rare_word_forgets_the_one_note_that_holds_it(tmp_path, now):
    root = notes(tmp_path, now)
    result = CliRunner().invoke(main, ["forget", "--search", "saxophone", "--yes", "-w", root])
    assert result.exit_code == 0, result.output
    assert live(root) == [text for text in ADA if "saxophone" not in text]


def test_a_word_no_crystal_holds_forgets_nothing(tmp_path, now):
    root = notes(tmp_path, now)
    result = CliRunner().invoke(main, ["forget", "--search", "trombone", "--yes", "-w", root])
    assert result.exit_code == 2
    assert result.output.startswith("Error: no crystal holds every word of 'trombone'")
    assert result.output.count("\n") == 1
    assert live(root) == ADA  # not even the jazz note, a neighbour by meaning


def test_every_word_must_be_there_and_word_forms_count_when_asked(tmp_path, now):
    root = notes(tmp_path, now)
    # "addresses" is "address" stemmed; "Ada" and "Lisbon" are in two notes, "old" in one.
    args = ["forget", "--search", "Lisbon addresses old", "--yes", "-w", root]
    kept = CliRunner().invoke(main, args)
    assert kept.exit_code == 2  # another form only: shown, and --yes alone does not take it
    assert "#1  Ada's [old] [address] was 12 Rua Augusta, [Lisbon]" in kept.output
    assert kept.output.splitlines()[-1].startswith(
        "Error: no crystal holds every word of 'Lisbon addresses old' as written; 1 hold "
        "another form of a word (#1)"
    )
    assert live(root) == ADA
    result = CliRunner().invoke(main, [*args, "--forms"])
    assert result.exit_code == 0, result.output
    assert live(root) == ADA[1:]


def test_a_quoted_phrase_must_appear_as_written(tmp_path, now):
    texts = [*ADA, "Liberdade 40 is where the new office will be"]
    root = notes(tmp_path, now, texts)
    result = CliRunner().invoke(
        main, ["forget", "--search", '"40 Avenida da Liberdade"', "--yes", "-w", root]
    )
    assert result.exit_code == 0, result.output
    assert live(root) == [text for text in texts if text != ADA[1]]


def test_the_listing_marks_the_matched_words(tmp_path, now):
    root = notes(tmp_path, now)
    result = CliRunner().invoke(main, ["forget", "--search", "old addresses", "-w", root])
    assert result.exit_code == 2 and "pass --yes" in result.output
    assert "#1  Ada's [old] [address] was 12 Rua Augusta" in result.output
    assert "#2" not in result.output and "#3" not in result.output
    assert live(root) == ADA  # shown, not forgotten


def test_yes_with_more_than_a_few_hits_needs_all(tmp_path, now):
    deploys = [f"Deploy {i}: the billing deploy ran on host {i}" for i in range(5)]
    root = notes(tmp_path, now, [*deploys, *ADA])
    args = ["forget", "--search", "billing deploy", "--yes", "-w", root]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 2
    last = refused.output.strip().splitlines()[-1]
    assert last.startswith("Error: 5 crystals hold every word of 'billing deploy'")
    assert "--all" in last and "narrow the query" in last
    assert [line for line in refused.output.splitlines() if line.startswith("Error:")] == [last]
    assert live(root) == [*deploys, *ADA]
    done = CliRunner().invoke(main, [*args, "--all"])
    assert done.exit_code == 0, done.output
    assert "Forgot 5 crystal(s)" in done.output
    assert live(root) == ADA


def test_forgetting_logs_neither_the_query_nor_an_access(tmp_path, now):
    root = notes(tmp_path, now)
    for query in ("old address", "trombone"):  # found, and found nothing
        CliRunner().invoke(main, ["forget", "--search", query, "--yes", "-w", root])
    with Workspace.open(root) as ws:
        assert ws.store.search.search_queries("2000-01-01T00:00:00Z") == []
        assert ws.store.search.open_gaps("2000-01-01T00:00:00Z", 10) == []
        assert all(crystal.access_count == 0 for crystal in ws.store.crystals.select())


def test_the_memory_forget_tool_lists_a_query_and_forgets_only_the_ids(ws, now):
    for text in [*ADA, "Ada's parents kept her first address in Porto"]:
        ws.note(text, at=now)

    def call(arguments):
        result = tools.handle(ws, {"id": "t", "name": "memory_forget", "input": arguments}, now=now)
        return result["is_error"], result["content"]

    count = len(ADA) + 1
    is_error, content = call({"query": "address"})
    listed = json.loads(content)
    assert not is_error and listed["forgotten"] == [] and listed["confirm_ids"] == [1, 2, 3, 7]
    assert [m["id"] for m in listed["matches"]] == [1, 2, 3, 7]
    assert (
        listed["matches"][0]["text"]
        == "Ada's old [address] was 12 Rua Augusta, Lisbon, until March"
    )
    assert "call memory_forget with ids [1, 2, 3, 7]" in listed["done"]
    assert len(list(ws.store.crystals.select())) == count  # listed, not forgotten
    is_error, content = call({"query": "trombone"})
    assert is_error and "nothing was forgotten" in content
    is_error, content = call({"ids": [1], "reason": "user asked"})
    assert not is_error, content
    done = json.loads(content)
    assert (
        done["forgotten"] == [1]
        and "crystals 1 emptied (#1); a tombstone keeps each id" in (done["receipt"])
    )
    is_error, content = call({"ids": [4], "query": "deploys"})
    assert is_error and "ids or query" in content
    is_error, content = call({"query": "Ada address", "all": True})
    assert is_error and "all" in content  # the old shortcut is gone: a query only lists
    assert ws.store.search.search_queries("2000-01-01T00:00:00Z") == []


def test_the_tool_lists_at_most_what_one_forget_takes(ws, now):
    for i in range(51):
        ws.note(f"Deploy {i}: the billing deploy ran on host {i}", at=now)
    result = tools.handle(
        ws, {"id": "t", "name": "memory_forget", "input": {"query": "billing"}}, now=now
    )
    assert result["is_error"] and "51 memories hold every word of 'billing'" in result["content"]
    assert "narrow the query" in result["content"]


def test_the_tool_asks_which_kofi_and_shows_other_forms_apart(ws, now):
    for text in [*KOFIS, *PETS]:
        ws.note(text, at=now)

    def call(arguments):
        result = tools.handle(ws, {"id": "t", "name": "memory_forget", "input": arguments}, now=now)
        assert not result["is_error"], result["content"]
        return json.loads(result["content"])

    kofi = call({"query": "Kofi phone"})
    jsonschema.validate(kofi, schema("tools/outputs")["memory_forget"])
    assert kofi["names"] == {"Kofi Boateng": [2], "Kofi Mensah": [1]}
    assert kofi["done"].startswith("Nothing forgotten: 'kofi' is part of 2 names")
    cats = call({"query": "cats"})
    assert cats["confirm_ids"] == [4, 6] and [m["id"] for m in cats["other_forms"]] == [5]
    assert len(list(ws.store.crystals.select())) == len(KOFIS) + len(PETS)


@pytest.mark.parametrize("ids", ["12", b"12", [1.0], [True], [None], ["1"], [0], 12])
def test_workspace_forget_takes_typed_ids(ws, now, ids):
    for text in ADA:
        ws.note(text, at=now)
    with pytest.raises(UsageError, match="crystal id"):
        ws.forget(ids, now=now)
    assert len(list(ws.store.crystals.select())) == len(ADA)  # crystals 1 and 2 still there
    assert ws.get(1).text == ADA[0]


def test_workspace_forget_by_int_ids(ws, now):
    for text in ADA:
        ws.note(text, at=now)
    assert ws.forget([1, 2], now=now).forgotten == [1, 2]
    with pytest.raises(CrystalNotFound):
        ws.get(2)


@pytest.mark.parametrize("bad", ["abc", "1.5", "0"])
def test_the_cli_checks_ids_with_one_error_line(tmp_path, now, bad):
    root = notes(tmp_path, now)
    result = CliRunner().invoke(main, ["forget", "1", bad, "-w", root])
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: {bad!r} is not a crystal id")
    assert result.output.count("\n") == 1
    assert live(root) == ADA


@pytest.mark.slow
def test_the_mcp_server_forgets_by_query_with_the_same_rule(tmp_path, now):
    from mcp import ClientSession
    from mcp_session import run_session, text_of

    parents = "Ada's parents kept her first address in Porto"
    root = notes(tmp_path, now, [*ADA, parents, *KOFIS])
    seen: dict = {}

    async def scenario(session: ClientSession) -> None:
        listed = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
        seen["properties"] = set(listed["memory_forget"]["properties"])
        steps = ({"query": "address"}, {"query": "Kofi phone"}, {"query": "old address"})
        for step in (*steps, {"ids": [1]}):
            result = await session.call_tool("memory_forget", step)
            seen[json.dumps(step)] = (result.is_error, text_of(result))

    run_session(tmp_path, Path(root), scenario)
    assert {"ids", "query"} <= seen["properties"]
    is_error, text = seen['{"query": "address"}']
    assert not is_error and json.loads(text)["confirm_ids"] == [1, 2, 3, 7]
    is_error, text = seen['{"query": "Kofi phone"}']
    assert not is_error and json.loads(text)["names"] == {"Kofi Boateng": [9], "Kofi Mensah": [8]}
    is_error, text = seen['{"query": "old address"}']
    assert not is_error and json.loads(text)["forgotten"] == []
    is_error, text = seen['{"ids": [1]}']
    assert not is_error and json.loads(text)["forgotten"] == [1]
    assert live(root) == [*ADA[1:], parents, *KOFIS]


def _on_a_terminal(root: str, query: str, answer: bytes) -> tuple[int, str]:
    """`dream forget --search QUERY` with a terminal for stdin, answering the question."""
    import os
    import subprocess
    import sys

    leader, follower = os.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "dreamer.cli", "forget", "--search", query, "-w", root],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        os.write(leader, answer)
        out, _ = process.communicate(timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    return process.returncode, out.decode()


@pytest.mark.slow
def test_declining_the_question_forgets_nothing_and_is_no_error(tmp_path, now):
    root = notes(tmp_path, now)
    code, out = _on_a_terminal(root, "old address", b"n\n")
    assert code == 0, out
    assert "Error" not in out and "Aborted" not in out
    assert out.rstrip().endswith("Nothing forgotten.")
    assert any("Rua Augusta" in text for text in found(root, "Rua Augusta"))
    code, out = _on_a_terminal(root, "old address", b"y\n")
    assert code == 0 and "Forgot 1 crystal(s)" in out, out


PETS = [
    "Our two cats sleep on the red sofa",
    "The neighbour's cat climbs the fence at night",
    "Feed the cats at seven",
]


def test_yes_takes_the_words_as_written_and_shows_other_forms(tmp_path, now):
    root = notes(tmp_path, now, PETS)
    result = CliRunner().invoke(main, ["forget", "--search", "cats", "--yes", "-w", root])
    assert result.exit_code == 0, result.output
    assert "Forgot 2 crystal(s) (#1, #3)" in result.output
    assert "hold only another form of a word" in result.output
    assert "#2  The neighbour's [cat] climbs" in result.output  # shown, not taken
    assert live(root) == [PETS[1]]


KOFIS = [
    "Kofi Mensah's phone number is 024 555 0101",
    "Kofi Boateng's phone number is 020 777 0202",
    "Ama's phone number is 027 999 0303",
]


def test_a_first_name_two_people_share_forgets_nothing_with_yes(tmp_path, now):
    root = notes(tmp_path, now, KOFIS)
    result = CliRunner().invoke(main, ["forget", "--search", "Kofi phone", "--yes", "-w", root])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: 'kofi' is part of 2 names here (Kofi Boateng, Kofi Mensah); nothing was "
        "forgotten: say which one, e.g. --search 'Kofi Boateng phone'"
    ]
    assert live(root) == KOFIS
    result = CliRunner().invoke(
        main, ["forget", "--search", "Kofi Mensah phone", "--yes", "-w", root]
    )
    assert result.exit_code == 0, result.output
    assert live(root) == KOFIS[1:]


def at_a_terminal(args: list[str], answers: str) -> tuple[int, str]:
    """Run ``dream`` with a terminal as stdin (as a person does), typing ``answers``."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "200"}
    with subprocess.Popen(
        [sys.executable, "-m", "dreamer.cli", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
    ) as process:
        os.close(slave)
        os.write(master, answers.encode())
        chunks = []
        while select.select([master], [], [], 60)[0]:  # a prompt left waiting fails the test
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        else:
            process.kill()
        code = process.wait(timeout=60)
    os.close(master)
    return code, b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")


@pytest.mark.slow
def test_asked_which_name_it_forgets_only_the_one_chosen(tmp_path, now):
    root = notes(tmp_path, now, KOFIS)
    code, output = at_a_terminal(["forget", "--search", "Kofi phone", "-w", root], "1\ny\n")
    assert code == 0, output
    assert "'kofi' is part of 2 names:" in output and "1) Kofi Boateng" in output
    assert live(root) == [KOFIS[0], KOFIS[2]]


def test_a_word_inside_a_secret_placeholder_never_counts(tmp_path, now):
    texts = [
        "Deploy key for staging: [secret:github-pat#1a2b]",
        "Keep the secret recipe for the Friday pie",
        "Billing runs nightly",
    ]
    root = notes(tmp_path, now, texts)
    result = CliRunner().invoke(main, ["forget", "--search", "secret", "--yes", "-w", root])
    assert result.exit_code == 0, result.output
    assert "Forgot 1 crystal(s) (#2)" in result.output and "#1" not in result.output
    assert live(root) == [texts[0], texts[2]]
    missed = CliRunner().invoke(main, ["forget", "--search", "github pat", "--yes", "-w", root])
    assert missed.exit_code == 2 and live(root) == [texts[0], texts[2]]


@pytest.mark.slow
def test_at_the_prompt_another_form_is_taken_only_on_yes(tmp_path, now):
    root = notes(tmp_path, now, [PETS[1], PETS[2]])  # "cat", and "cats" as written
    args = ["forget", "--search", "cats", "-w", root]
    code, output = at_a_terminal(args, "n\ny\n")  # not the neighbour's cat; yes to the rest
    assert code == 0, output
    assert "Forgot 1 crystal(s) (#2)" in output and live(root) == [PETS[1]]
    code, output = at_a_terminal(["forget", "--search", "dogs", "-w", root], "")
    assert code == 2 and live(root) == [PETS[1]]  # nothing holds it: nothing asked
    code, output = at_a_terminal(args, "n\n")
    assert code == 0, output
    assert "Nothing chosen; nothing forgotten." in output and live(root) == [PETS[1]]
    code, output = at_a_terminal(args, "y\ny\n")
    assert code == 0, output
    assert "Forgot 1 crystal(s) (#1)" in output and live(root) == []
