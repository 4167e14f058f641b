"""Issue 23: dreams written by any OpenAI-compatible endpoint (Ollama, llama.cpp, vLLM, LM Studio).

``dream run`` against a fake chat-completions server on 127.0.0.1: a dream commits through a
forced tool call and through a JSON-schema response format, a revision replays the draft, what
goes out is redacted, and every way the endpoint can fail (an answer that is not one, a 500, a
timeout, a refused connection) ends in one ``Error:`` line with MEMORY.md byte for byte what it
was and the notes back in the scratch; never an offline dream instead.
"""

from __future__ import annotations

import json

import pytest
from fake_openai import MODEL, FakeOpenAI
from test_dream_claude import COLLAPSED, GOOD, LATER_NOTES, dreamt, fake, scratch_texts  # noqa: F401

from dreamer.cli import main
from dreamer.dream.synth.prompt import TOOL_NAME

pytestmark = pytest.mark.slow

GITHUB_TOKEN = "ghp_" + "R8kD2mQ7vX4bN9cL1tY6wH3sJ5pF0gZa8eUq"


@pytest.fixture
def server() -> FakeOpenAI:
    """A fresh scripted chat-completions server."""
    return FakeOpenAI()


def dream(runner, ws, monkeypatch, base_url: str, *extra: str):
    """`dream run --force` with the openai synthesizer at base_url (as the user would set it)."""
    monkeypatch.setenv("DREAM_SYNTHESIZER", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", base_url + "/v1")
    monkeypatch.setenv("DREAM_MODEL", MODEL)
    return runner.invoke(main, ["run", "--force", "-w", str(ws.root), *extra])


def one_error(output: str) -> str:
    """The single Error: line of a command's output (fails on none, two, or a traceback)."""
    lines = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


def last_entry(ws) -> dict:
    """The newest journal entry, every field."""
    return ws.store.journal.get_dream(ws.store.journal.dream_entries(1)[0]["id"])


def test_a_dream_commits_through_a_forced_tool_call(dreamt, server, runner, monkeypatch):  # noqa: F811
    monkeypatch.setenv("DREAM_REDACT_SECRETS", "false")  # stored raw: the request must redact
    dreamt.note(f"CI pushes with the token {GITHUB_TOKEN} for now", importance=0.6)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
    server.tool_call(TOOL_NAME, GOOD)
    with server.serve() as base_url:
        result = dream(runner, dreamt, monkeypatch, base_url)
    assert result.exit_code == 0, result.output
    assert "openai/" + MODEL in result.output
    request = server.last
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-local-test-key"
    body = request.json
    assert body["model"] == MODEL
    assert body["tool_choice"] == {"type": "function", "function": {"name": TOOL_NAME}}
    assert body["tools"][0]["function"]["parameters"]["properties"].keys() >= GOOD.keys()
    sent = json.dumps(body["messages"])
    assert GITHUB_TOKEN not in sent and "[secret:github-token#" in sent
    assert "Maya moved the Acme report deadline" in sent  # the data went out, redacted
    assert "Lisbon" in dreamt.memory_md.read_text()
    entry = last_entry(dreamt)
    assert (entry["synthesizer"], entry["model"]) == ("openai", MODEL)
    assert (entry["input_tokens"], entry["output_tokens"]) == (1200, 300)
    assert entry["cost_usd"] == 0  # a local model costs no money unless prices are set
    log = runner.invoke(main, ["log", "-w", str(dreamt.root)]).output
    assert "openai" in log and "1200/300 tok" in log
    shown = runner.invoke(main, ["show", str(entry["id"]), "-w", str(dreamt.root)]).output
    assert "synthesizer: openai" in shown and "over 1 call(s)" in shown


def test_arguments_sent_as_an_object_are_taken_as_they_are(dreamt, server, runner, monkeypatch):  # noqa: F811
    server.tool_call(TOOL_NAME, GOOD, as_text=False)  # some servers do not encode them
    with server.serve() as base_url:
        result = dream(runner, dreamt, monkeypatch, base_url)
    assert result.exit_code == 0, result.output
    assert "Lisbon" in dreamt.memory_md.read_text()


def test_a_dream_commits_through_a_json_schema_response(dreamt, server, runner, monkeypatch):  # noqa: F811
    monkeypatch.setenv("DREAM_OPENAI_FORMAT", "json_schema")
    monkeypatch.setenv("DREAM_OPENAI_INPUT_PRICE", "0.5")
    monkeypatch.setenv("DREAM_OPENAI_OUTPUT_PRICE", "1.5")
    server.content(json.dumps(GOOD))
    with server.serve() as base_url:
        result = dream(runner, dreamt, monkeypatch, base_url)
    assert result.exit_code == 0, result.output
    body = server.last.json
    assert "tools" not in body and "tool_choice" not in body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"].keys() >= GOOD.keys()
    assert "Lisbon" in dreamt.memory_md.read_text()
    assert last_entry(dreamt)["cost_usd"] == pytest.approx((1200 * 0.5 + 300 * 1.5) / 1e6)


def test_a_revision_replays_the_draft_as_the_tool_call_it_was(dreamt, server, runner, monkeypatch):  # noqa: F811
    server.tool_call(TOOL_NAME, COLLAPSED)
    server.tool_call(TOOL_NAME, GOOD)
    with server.serve() as base_url:
        result = dream(runner, dreamt, monkeypatch, base_url)
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 2
    replay = server.requests[1].json["messages"]
    assert [m["role"] for m in replay] == ["system", "user", "assistant", "tool"]
    call = replay[2]["tool_calls"][0]
    assert replay[3]["tool_call_id"] == call["id"]
    assert json.loads(call["function"]["arguments"])["bond"] == ""  # the collapsed draft
    assert "guards rejected" in replay[3]["content"]
    entry = last_entry(dreamt)
    assert entry["outcome"] == "committed" and len(entry["critiques"]) == 1
    assert entry["inputs"]["synthesis"]["tries"] == 2  # one draft, one revision


def test_a_json_schema_revision_sends_the_critiques_as_the_next_user_message(
    dreamt,  # noqa: F811
    server,
    runner,
    monkeypatch,
):
    monkeypatch.setenv("DREAM_OPENAI_FORMAT", "json_schema")
    server.content(json.dumps(COLLAPSED))
    server.content(json.dumps(GOOD))
    with server.serve() as base_url:
        result = dream(runner, dreamt, monkeypatch, base_url)
    assert result.exit_code == 0, result.output
    replay = server.requests[1].json["messages"]
    assert [m["role"] for m in replay] == ["system", "user", "assistant", "user"]
    assert json.loads(replay[2]["content"])["bond"] == ""
    assert "guards rejected" in replay[3]["content"]


def script_truncated(server: FakeOpenAI) -> None:
    server.raw(b'{"id": "chatcmpl-1", "choices": [{"message": {"role": "assist')


def script_empty(server: FakeOpenAI) -> None:
    server.raw(b"")


def script_no_tool_call(server: FakeOpenAI) -> None:
    server.content("Here is the new memory: Maya is great.")


def script_schema_invalid(server: FakeOpenAI) -> None:
    server.tool_call(TOOL_NAME, {"emerging_skills": "not a list"})


def script_arguments_not_json(server: FakeOpenAI) -> None:
    server.tool_call(TOOL_NAME, '{"bond": "- Maya', as_text=False)


def script_500(server: FakeOpenAI) -> None:
    for _ in range(2):
        server.error(500, "model crashed")


def script_timeout(server: FakeOpenAI) -> None:
    for _ in range(2):
        server.timeout(delay=3)


@pytest.mark.parametrize(
    "script, says",
    [
        (script_truncated, "not JSON"),
        (script_empty, "not JSON"),
        (script_no_tool_call, 'memory.dream.openai.format = "json_schema"'),
        (script_schema_invalid, "does not fit the working-memory schema"),
        (script_arguments_not_json, "not valid JSON (Unterminated string starting at: line 1"),
        (script_500, "the endpoint failed (500: model crashed)"),
        (script_timeout, "did not answer within 0.5 s"),
    ],
    ids=["truncated", "empty", "no-tool-call", "schema", "arguments", "500", "timeout"],
)
def test_a_failing_endpoint_ends_in_one_line_with_nothing_lost(
    dreamt,  # noqa: F811
    server,
    runner,
    monkeypatch,
    script,
    says,
):
    before = dreamt.memory_md.read_bytes()
    monkeypatch.setenv("DREAM_TIMEOUT_SECONDS", "0.5")
    monkeypatch.setenv("DREAM_RETRIES", "1")
    script(server)
    with server.serve() as base_url:
        result = dream(runner, dreamt, monkeypatch, base_url)
    assert result.exit_code == 1
    assert says in one_error(result.output)
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    entry = last_entry(dreamt)
    assert (entry["outcome"], entry["synthesizer"]) == ("failed", "openai")
    if script in (script_500, script_timeout):
        assert "2 tries took" in entry["error"]  # transient: tried again, the total told
    else:
        assert entry["raw"] is not None  # what came back is kept for the journal (even "")
        assert len(server.requests) == 1  # an unusable answer is not asked for twice


def test_a_model_that_cannot_answer_in_json_is_named_with_the_fix(
    dreamt,  # noqa: F811
    server,
    runner,
    monkeypatch,
):
    monkeypatch.setenv("DREAM_OPENAI_FORMAT", "json_schema")
    server.content("Sure! Here is the updated memory. Maya leads the Acme report.")
    with server.serve() as base_url:
        result = dream(runner, dreamt, monkeypatch, base_url)
    assert result.exit_code == 1
    line = one_error(result.output)
    assert "the model cannot answer in structured JSON" in line
    assert "does not enforce the JSON-schema response format" in line
    assert 'memory.dream.openai.format = "tools"' in line
    assert "dream run' again" not in line  # asking again gets the same answer
    assert len(server.requests) == 1


def test_a_refused_connection_fails_in_one_line_and_never_dreams_offline(
    dreamt,  # noqa: F811
    runner,
    monkeypatch,
):
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    before = dreamt.memory_md.read_bytes()
    result = dream(runner, dreamt, monkeypatch, f"http://127.0.0.1:{port}")
    assert result.exit_code == 1
    line = one_error(result.output)
    assert "could not reach the openai endpoint" in line and "OPENAI_BASE_URL" in line
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    assert last_entry(dreamt)["synthesizer"] == "openai"


def test_without_a_model_the_error_names_the_setting(dreamt, runner, monkeypatch):  # noqa: F811
    monkeypatch.setenv("DREAM_SYNTHESIZER", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    result = runner.invoke(main, ["run", "--force", "-w", str(dreamt.root)])
    assert result.exit_code == 2
    assert "DREAM_MODEL" in one_error(result.output)
    assert scratch_texts(dreamt) == LATER_NOTES


def test_without_an_endpoint_the_error_names_the_setting(dreamt, runner, monkeypatch):  # noqa: F811
    monkeypatch.setenv("DREAM_SYNTHESIZER", "openai")
    monkeypatch.setenv("DREAM_MODEL", MODEL)
    result = runner.invoke(main, ["run", "--force", "-w", str(dreamt.root)])
    assert result.exit_code == 2
    assert "OPENAI_BASE_URL" in one_error(result.output)


def test_only_the_openai_module_imports_an_http_client():
    from pathlib import Path

    package = Path(__file__).resolve().parents[2] / "dreamer"
    importers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if any(
            line.split()[:2] in (["import", "httpx2"], ["from", "httpx2"], ["import", "openai"])
            for line in path.read_text().splitlines()
        )
    )
    assert importers == ["dream/synth/openai_compat.py"]
