"""Issues 22 and 23: the timeout and tries of a model call are settings, a timed-out dream says
how long it waited in all, and a 200 whose body is not an answer ends in one ``Error:`` line.

Through ``dream run`` against the fake Messages API served on 127.0.0.1: MEMORY.md stays byte
for byte what it was, the notes are back in the scratch, and the raw body is in the journal.
"""

from __future__ import annotations

import re

import pytest
from fake_anthropic import FakeAnthropic
from test_dream_claude import LATER_NOTES, dreamt, fake, scratch_texts  # noqa: F401

from dreamer.cli import main
from dreamer.dream.synth import Draft, Usage
from dreamer.dream.synth.calls import attempt
from dreamer.errors import ModelOutputInvalid, ModelOverloaded, ModelTimeout
from dreamer.memory.state import WorkingMemory


def run_cli(runner, ws, monkeypatch, base_url, *extra):
    """`dream run` with the Claude synthesizer pointed at the fake over HTTP."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", base_url)
    return runner.invoke(main, ["run", "-w", str(ws.root), *extra])


def one_error(output: str) -> str:
    """The single Error: line of a command's output (fails on none, two, or a traceback)."""
    lines = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    "body",
    [
        b'{"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "tool_u',
        b"",
        b"null",
    ],
    ids=["truncated", "empty", "null"],
)
def test_a_200_that_is_not_an_answer_fails_in_one_line_with_nothing_lost(
    dreamt,  # noqa: F811
    fake: FakeAnthropic,  # noqa: F811
    runner,
    monkeypatch,
    body,
):
    before = dreamt.memory_md.read_bytes()
    fake.raw(body)
    with fake.serve() as base_url:
        result = run_cli(runner, dreamt, monkeypatch, base_url, "--force")
    assert result.exit_code == 1
    line = one_error(result.output)
    assert "Messages response" in line or "not JSON" in line
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES
    entry = dreamt.store.journal.get_dream(dreamt.store.journal.dream_entries(1)[0]["id"])
    assert entry["outcome"] == "failed"
    assert body.decode() in (entry["raw"] or "")  # the body as it came, for the journal


@pytest.mark.slow
def test_a_timed_out_dream_says_how_many_tries_and_how_long_in_all(
    dreamt,  # noqa: F811
    fake: FakeAnthropic,  # noqa: F811
    runner,
    monkeypatch,
):
    before = dreamt.memory_md.read_bytes()
    for _ in range(2):
        fake.timeout(delay=3)  # answers only after the client gave up
    monkeypatch.setenv("DREAM_TIMEOUT_SECONDS", "0.5")
    monkeypatch.setenv("DREAM_RETRIES", "1")
    sent = len(fake.requests)  # the first dream's
    with fake.serve() as base_url:
        result = run_cli(runner, dreamt, monkeypatch, base_url, "--force")
    assert result.exit_code == 1
    line = one_error(result.output)
    assert "did not answer within 0.5 s" in line
    assert "2 tries took" in line and "memory.dream.retries = 1" in line
    said = float(re.search(r"took (\d+) s in all", line).group(1))
    assert said >= 1  # the two tries' time in all (2 x 0.5 s and the pause), not one try's limit
    assert len(fake.requests) == sent + 2  # the setting, not the SDK's own retries, decides
    assert dreamt.memory_md.read_bytes() == before
    assert scratch_texts(dreamt) == LATER_NOTES


@pytest.mark.slow
def test_retries_zero_makes_one_try(dreamt, fake: FakeAnthropic, runner, monkeypatch):  # noqa: F811
    fake.error(529, retry=True)
    fake.error(529, retry=True)
    monkeypatch.setenv("DREAM_RETRIES", "0")
    sent = len(fake.requests)
    with fake.serve() as base_url:
        result = run_cli(runner, dreamt, monkeypatch, base_url, "--force")
    assert "overloaded" in one_error(result.output)
    assert len(fake.requests) == sent + 1


@pytest.mark.slow
def test_an_overload_is_tried_again_and_the_dream_commits(
    dreamt,  # noqa: F811
    fake: FakeAnthropic,  # noqa: F811
    runner,
    monkeypatch,
):
    from test_dream_claude import GOOD

    from dreamer.dream.synth.claude import TOOL_NAME

    fake.error(529, retry=True)
    fake.tool_use(TOOL_NAME, GOOD)
    sent = len(fake.requests)
    with fake.serve() as base_url:
        result = run_cli(runner, dreamt, monkeypatch, base_url, "--force")
    assert result.exit_code == 0, result.output
    assert len(fake.requests) == sent + 2
    entry = dreamt.store.journal.get_dream(dreamt.store.journal.dream_entries(1)[0]["id"])
    assert entry["outcome"] == "committed"
    assert entry["inputs"]["synthesis"]["tries"] == 2


def test_the_server_s_no_retry_is_honoured():
    calls: list[int] = []

    def refused() -> Draft:
        calls.append(1)
        error = ModelOverloaded("overloaded")
        error.retry = False
        raise error

    with pytest.raises(ModelOverloaded):
        attempt(refused, timeout=1, retries=3, sleep=lambda s: None)
    assert len(calls) == 1


def test_an_unusable_answer_is_not_tried_again_and_keeps_its_time():
    clock = iter([0.0, 4.0])

    def bad() -> Draft:
        raise ModelOutputInvalid("bad", "{", Usage(input_tokens=5))

    with pytest.raises(ModelOutputInvalid) as caught:
        attempt(bad, timeout=1, retries=3, sleep=lambda s: None, clock=lambda: next(clock))
    assert caught.value.usage.seconds == 4.0 and caught.value.usage.tries == 1
    assert caught.value.usage.input_tokens == 5


def test_tries_add_their_waits_and_the_last_timeout_tells_the_total():
    ticks = iter([0.0, 10.0, 20.0, 30.0])
    slept: list[float] = []

    def slow() -> Draft:
        raise ModelTimeout("the model did not answer within 10 s")

    with pytest.raises(ModelTimeout) as caught:
        attempt(slow, timeout=10, retries=2, sleep=slept.append, clock=lambda: next(ticks))
    assert "3 tries took 10 s in all" in str(caught.value)
    assert slept == [0.5, 1.0]
    assert caught.value.usage.tries == 3


def test_a_draft_carries_its_time_and_tries():
    ticks = iter([0.0, 2.5])
    draft = attempt(
        lambda: Draft(WorkingMemory({}), "{}", Usage()),
        timeout=5,
        retries=0,
        clock=lambda: next(ticks),
    )
    assert draft.usage.seconds == 2.5 and draft.usage.tries == 1
