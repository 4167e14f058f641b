"""Issue 23, item 5: the rules a dream request states, and the credentials it never carries,
read from the request the real Anthropic SDK sent to the local fake Messages API."""

from __future__ import annotations

from datetime import timedelta

from fake_anthropic import FakeAnthropic

from dreamer.dream.cycle import run
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer

NOTES = [
    "Staging DB login: username maya_ops, password: Tr0ub4dor&3x",
    "The Grafana account is ops@acme.io with password hunter22Xq",
    "Maya changed her username to mayo on the forum",
    "Wrote the dbt staging models for orders",
    "Please forget the dentist appointment",
]


def request(ws, now) -> tuple[str, str]:
    for i, text in enumerate(NOTES):
        ws.note(text, importance=0.7, at=now - timedelta(hours=5 - i))
    fake = FakeAnthropic()
    fake.tool_use(
        TOOL_NAME,
        {
            "active_context": "- Staging DB and Grafana set up for the orders pipeline.",
            "bond": "- Maya runs the data platform and writes dbt models.",
        },
    )
    result = run(
        ws, now=now, force=True, synthesizer=ClaudeSynthesizer(ws.settings, client=fake.client())
    )
    assert result.committed, result.reason
    body = fake.last.json
    return body["system"][0]["text"], body["messages"][0]["content"][0]["text"]


def test_no_username_goes_beside_a_redacted_password(ws, now):
    _, user = request(ws, now)
    assert "maya_ops" not in user and "ops@acme.io" not in user
    notes = user.split("<notes", 1)[1].split("</notes>", 1)[0]
    assert notes.count("[withheld]") == 2 and notes.count("[secret:password#") == 2
    assert "Tr0ub4dor" not in user and "hunter22Xq" not in user
    assert "changed her username to mayo" in user  # no secret beside it: a plain fact


def test_the_rules_do_not_mislead(ws, now):
    system, user = request(ws, now)
    # Current value only; the history goes to a pointer.
    assert "Write the value that\n  holds now" in system and "Crystal Pointer" in system
    assert "say what changed" not in system
    # One rule for the counts, stated once; no "reject any that is wrong" beside it.
    assert system.count("never count or estimate") == 1
    assert "reject any that is wrong" not in user and "base the counts" not in system
    assert "counts follow\nthe **Counts** rule of your instructions" in user
    # Sensitive details and credentials; the model cannot delete.
    assert "only when the user asked for them to be remembered" in system
    assert "nor the username, account\n  or address that goes with a redacted secret" in system
    assert "You cannot delete" in system and "never restate the request" in system
    assert "one question per bullet" in system
    # The forget request itself is not in the data.
    assert "dentist" not in user.lower()


def test_a_withheld_username_is_in_no_other_part_of_the_request(ws, now):
    # The login beside a redacted password, then the same login in notes of its own: the
    # insights make topics and keywords of it, and the request withholds it there too.
    for i in range(4):
        ws.note(f"maya_ops ran the orders backfill, batch {i}", at=now - timedelta(hours=9 - i))
    _, user = request(ws, now)
    assert "maya_ops" not in user.lower()
