"""Issues 22 and 23: a secret a model writes is committed as a placeholder, whatever the backend.

The ``claude`` backend is covered in test_secrets_answers.py; here the same adversarial answer
(an AWS key id, a GitHub token and an Anthropic key written into The Bond) comes back from an
OpenAI-compatible endpoint (tool calling and a JSON-schema response) and from the real Claude
Code CLI, each through ``dream run --force`` as a user runs it. MEMORY.md, the journal, the
bootstrap and every byte under the workspace hold placeholders only.
"""

from __future__ import annotations

import json

import pytest
from claude_cli import cli_path, isolate
from fake_anthropic import FakeAnthropic
from fake_openai import MODEL, FakeOpenAI
from test_dream_claude import dreamt, fake  # noqa: F401
from test_secrets_answers import INJECTED, SECRETS

from dreamer.cli import main
from dreamer.dream.synth.prompt import TOOL_NAME


def _assert_nothing_landed(runner, ws) -> None:
    """No secret (nor a long piece of one) in MEMORY.md, the journal, the bootstrap or on disk."""
    memory = ws.memory_md.read_text()
    assert "[secret:aws-access-key#" in memory
    assert "[secret:github-token#" in memory
    assert "[secret:anthropic-key#" in memory
    assert "works from Lisbon" in memory  # only the secrets went
    outputs = [
        runner.invoke(main, ["log", "--json", "-w", str(ws.root)]).output,
        runner.invoke(main, ["bootstrap", "-w", str(ws.root)]).output,
    ]
    entry_id = json.loads(outputs[0])[0]["id"]
    shown = runner.invoke(main, ["show", str(entry_id), "--json", "-w", str(ws.root)])
    outputs.append(shown.output)
    for text in [memory, *outputs]:
        for value in SECRETS:
            assert value not in text and value[4:24] not in text
    for path in ws.root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(value.encode() in data for value in SECRETS), path


@pytest.mark.slow
@pytest.mark.parametrize("answer_format", ["tools", "json_schema"])
def test_an_openai_compatible_answer_with_keys_lands_as_placeholders(
    dreamt,  # noqa: F811
    runner,
    monkeypatch,
    answer_format,
):
    server = FakeOpenAI()
    if answer_format == "json_schema":
        monkeypatch.setenv("DREAM_OPENAI_FORMAT", "json_schema")
        server.content(json.dumps(INJECTED))
    else:
        server.tool_call(TOOL_NAME, INJECTED)
    monkeypatch.setenv("DREAM_SYNTHESIZER", "openai")
    monkeypatch.setenv("DREAM_MODEL", MODEL)
    with server.serve() as base_url:
        monkeypatch.setenv("OPENAI_BASE_URL", base_url + "/v1")
        result = runner.invoke(main, ["run", "--force", "-w", str(dreamt.root)])
    assert result.exit_code == 0, result.output
    _assert_nothing_landed(runner, dreamt)


@pytest.mark.cli
def test_a_claude_code_answer_with_keys_lands_as_placeholders(
    dreamt,  # noqa: F811
    runner,
    monkeypatch,
    tmp_path,
):
    monkeypatch.setenv("DREAM_CLAUDE_CLI", cli_path())
    api = FakeAnthropic()
    api.structured_output(INJECTED)
    (dreamt.root / "dreamer.toml").write_text(
        '[memory.dream]\nsynthesizer = "claude-code"\n', encoding="utf-8"
    )
    with api.serve() as base_url:
        isolate(monkeypatch, tmp_path / "home", base_url)
        result = runner.invoke(main, ["run", "--force", "-w", str(dreamt.root)])
    assert result.exit_code == 0, result.output
    assert "claude-code" in result.output
    _assert_nothing_landed(runner, dreamt)
