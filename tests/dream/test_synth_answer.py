"""A model's answer is read up to answer.MAX_BYTES: past it the dream fails in one line, keeps
MEMORY.md and the notes, and the journal holds a bounded head of the answer (every backend;
the claude CLI's case is in test_synth_claude_code.py)."""

from __future__ import annotations

import anthropic
import pytest
from fake_anthropic import TEST_KEY
from fake_openai import MODEL, FakeOpenAI
from test_dream_claude import LATER_NOTES, dreamt, fake, scratch_texts  # noqa: F401
from test_synth_openai import last_entry

from dreamer.dream.cycle import run
from dreamer.dream.synth.answer import KEPT_CHARS, MAX_BYTES, Capped, excerpt
from dreamer.dream.synth.claude import ClaudeSynthesizer
from dreamer.dream.synth.openai_compat import OpenAISynthesizer
from dreamer.errors import ModelOutputInvalid

HUGE = b'{"id": "' + b"runaway answer " * 300_000 + b'"}'  # 4.5 MB


def bounded(raw: str) -> None:
    assert raw.startswith('{"id": "runaway answer') and len(raw) < KEPT_CHARS + 100
    assert raw.endswith("more characters of the answer not kept]")


@pytest.mark.slow
def test_the_anthropic_api_answering_megabytes_fails_the_dream(dreamt, fake, now):  # noqa: F811
    before = dreamt.memory_md.read_bytes()
    fake.raw(HUGE)
    with fake.serve() as base_url:  # over HTTP, as from a proxy that answers megabytes
        client = anthropic.Anthropic(api_key=TEST_KEY, base_url=base_url, max_retries=0)
        synthesizer = ClaudeSynthesizer(dreamt.settings, client=client)
        with pytest.raises(ModelOutputInvalid, match="the Anthropic API answered more than 1 MB"):
            run(dreamt, now=now, synthesizer=synthesizer)
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    bounded(last_entry(dreamt)["raw"])


@pytest.mark.slow
def test_an_openai_endpoint_answering_megabytes_fails_the_dream(dreamt, now):  # noqa: F811
    server = FakeOpenAI()
    before = dreamt.memory_md.read_bytes()
    server.raw(HUGE)
    settings = dreamt.settings.replace(
        openai_base_url="http://127.0.0.1:9/v1",
        model=MODEL,
        sources={**dreamt.settings.sources, "model": "test"},
    )
    synthesizer = OpenAISynthesizer(settings, transport=server.transport)
    with pytest.raises(ModelOutputInvalid, match=r"the endpoint \S+ answered more than 1 MB"):
        run(dreamt, now=now, synthesizer=synthesizer)
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    bounded(last_entry(dreamt)["raw"])


def test_capped_keeps_exactly_the_limit_and_says_when_there_was_more():
    assert not Capped(10).read([b"12345", b"67890"]).over
    read = Capped(10).read([b"12345", b"678901", b"never read"])
    assert read.over and bytes(read.data) == b"1234567890"
    assert excerpt("x" * KEPT_CHARS) == "x" * KEPT_CHARS
    assert excerpt("x" * (KEPT_CHARS + 5)).endswith("[… 5 more characters of the answer not kept]")
    assert MAX_BYTES >= 1_000_000
