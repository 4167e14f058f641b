"""A revision replays its draft to the model: every backend redacts it, even when the draft is
handed to ``synthesize`` directly (not through the dream's Redacting wrapper)."""

from __future__ import annotations

import dataclasses

import pytest
from fake_anthropic import FakeAnthropic
from fake_openai import MODEL, FakeOpenAI
from test_synth_claude import GOOD, OLD, make_inputs, synth

from dreamer.config import Settings
from dreamer.dream.synth import Draft
from dreamer.dream.synth.claude import TOOL_NAME
from dreamer.dream.synth.claude_code import ClaudeCodeSynthesizer
from dreamer.dream.synth.openai_compat import OpenAISynthesizer

TOKEN = "ghp_" + "R8kD2mQ7vX4bN9cL1tY6wH3sJ5pF0gZa8eUq"


def leaky_draft() -> Draft:
    """A draft whose state holds a secret in a section it changed."""
    bodies = {**OLD.bodies, "active_context": f"- CI pushes with the token {TOKEN} for now."}
    return Draft(state=dataclasses.replace(OLD, bodies=bodies), raw="{}")


def test_the_anthropic_backend_redacts_a_replayed_draft(now):
    fake = FakeAnthropic().tool_use(TOOL_NAME, GOOD)
    synth(fake).synthesize(make_inputs(now), critique=["Bond drift"], previous=leaky_draft())
    sent = fake.last.body.decode()
    assert TOKEN not in sent and "[secret:github-token#" in sent


@pytest.mark.parametrize("form", ["tools", "json_schema"])
def test_the_openai_backend_redacts_a_replayed_draft(now, form):
    server = FakeOpenAI()
    server.tool_call(TOOL_NAME, GOOD) if form == "tools" else server.content('{"bond": ""}')
    settings = Settings(openai_base_url="http://127.0.0.1:9/v1", model=MODEL, openai_format=form)
    settings.sources["model"] = "test"  # as a user who named the model
    synthesizer = OpenAISynthesizer(settings, transport=server.transport)
    synthesizer.synthesize(make_inputs(now), critique=["Bond drift"], previous=leaky_draft())
    sent = server.last.body.decode()
    assert TOKEN not in sent and "[secret:github-token#" in sent


@pytest.mark.slow
def test_the_claude_code_backend_redacts_a_replayed_draft(now, tmp_path):
    stdin = tmp_path / "stdin"
    cli = tmp_path / "claude"
    cli.write_text(f"#!/bin/sh\ncat > {stdin}\necho not-json\n")
    cli.chmod(0o755)
    synthesizer = ClaudeCodeSynthesizer(Settings(claude_cli=str(cli)))
    with pytest.raises(Exception, match="not with a JSON result"):
        synthesizer.synthesize(make_inputs(now), critique=["Bond drift"], previous=leaky_draft())
    sent = stdin.read_text(encoding="utf-8")
    assert "CI pushes with the token" in sent  # the draft was replayed...
    assert TOKEN not in sent and "[secret:github-token#" in sent  # ...without the secret
