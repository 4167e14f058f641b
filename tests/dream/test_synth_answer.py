"""A model's answer is read up to answer.MAX_BYTES: past it the dream fails in one line, keeps
MEMORY.md and the notes, and the journal holds a bounded head of the answer (every backend;
the claude CLI's case is in test_synth_claude_code.py)."""

from __future__ import annotations

import anthropic
import httpx2
import pytest
from fake_anthropic import TEST_KEY
from fake_openai import MODEL, FakeOpenAI
from test_dream_claude import LATER_NOTES, dreamt, fake, scratch_texts  # noqa: F401
from test_synth_openai import last_entry

from dreamer.dream.cycle import run
from dreamer.dream.synth.answer import KEPT_CHARS, MAX_BYTES, Capped, excerpt
from dreamer.dream.synth.claude import ClaudeSynthesizer
from dreamer.dream.synth.openai_compat import OpenAISynthesizer
from dreamer.errors import ModelOutputInvalid, ModelTimeout

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


class _Runaway:
    """A body of ``total`` bytes made as it is read, counting how many bytes were read."""

    def __init__(self, total: int, chunk: int = 64 * 1024):
        self.total, self.chunk, self.pulled = total, chunk, 0

    def __iter__(self):
        yield b'{"id": "'
        while self.pulled < self.total:
            self.pulled += self.chunk
            yield b"r" * self.chunk


def test_the_anthropic_sdk_path_reads_no_more_of_an_answer_than_the_limit(dreamt, now):  # noqa: F811
    body = _Runaway(50_000_000)

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=body)

    http = anthropic.DefaultHttpxClient(transport=httpx2.MockTransport(answer))
    client = anthropic.Anthropic(api_key=TEST_KEY, http_client=http, max_retries=0)
    synthesizer = ClaudeSynthesizer(dreamt.settings, client=client)
    with pytest.raises(ModelOutputInvalid, match="the Anthropic API answered more than 1 MB"):
        run(dreamt, now=now, synthesizer=synthesizer)
    assert body.pulled <= MAX_BYTES + 2 * body.chunk  # not the 50 MB the server would send


def test_an_anthropic_answer_that_breaks_off_fails_the_dream_in_one_line(dreamt, now):  # noqa: F811
    before = dreamt.memory_md.read_bytes()

    def broken():
        yield b'{"id": "msg_'
        raise httpx2.ReadError("connection reset by peer")

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "application/json"}, content=broken())

    http = anthropic.DefaultHttpxClient(transport=httpx2.MockTransport(answer))
    client = anthropic.Anthropic(api_key=TEST_KEY, http_client=http, max_retries=0)
    synthesizer = ClaudeSynthesizer(dreamt.settings, client=client)
    with pytest.raises(ModelTimeout, match="the Anthropic API's answer broke off \\(ReadError\\)"):
        run(dreamt, now=now, synthesizer=synthesizer)
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
