"""Issue 22: a secret the synthesizer writes never lands, whichever synthesizer wrote it.

Notes and requests are redacted at the door; the answer is redacted where the dream receives it
(dreamer.dream.synth.Redacting), before the guards, the commit and the journal. A Claude answer
goes through the real SDK against the fake Messages API; the offline synthesizer is fed a
``niche.json`` (which no door redacts) holding a key.
"""

from __future__ import annotations

import json
import random
import string
from datetime import timedelta

import pytest
from fake_anthropic import FakeAnthropic

from dreamer.cli import main
from dreamer.dream.cycle import run
from dreamer.dream.synth.claude import TOOL_NAME, ClaudeSynthesizer
from dreamer.dream.synth.offline import OfflineSynthesizer
from dreamer.errors import ModelOutputInvalid

_RNG = random.Random(22)
_UPPER = string.ascii_uppercase + string.digits
_ALNUM = string.ascii_letters + string.digits


def _pick(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


# Synthetic values of the real shapes, made here: never real keys.
AWS = "AKIA" + _pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
GITHUB = "ghp_" + _pick(_ALNUM, 36)
ANTHROPIC = "sk-ant-api03-" + _pick(_ALNUM + "-_", 93) + "AA"
SECRETS = (AWS, GITHUB, ANTHROPIC)

NOTES = [
    "Maya is the product lead at Acme and prefers short, direct answers",
    "Maya works from Lisbon and prefers tea over coffee",
    "Deployed the staging build of the report generator; it worked first time",
]
INJECTED = {
    "phenotype": "- Careful, concise collaborator.",
    "bond": (
        "- Maya: product lead at Acme, works from Lisbon; prefers short answers.\n"
        f"- Maya's AWS key id is {AWS}, her GitHub token {GITHUB}.\n"
        f"- Maya's Anthropic key: {ANTHROPIC}"
    ),
    "niche": "",
    "active_context": "- Staging build of the report generator works.",
    "crystal_pointers": [],
    "curiosity_gaps": "",
    "emerging_skills": [],
}


@pytest.fixture
def fake() -> FakeAnthropic:
    return FakeAnthropic()


def _notes(ws, now) -> None:
    for i, text in enumerate(NOTES):
        ws.note(text, importance=0.7, at=now - timedelta(hours=5 - i))


def _assert_clean(text: str) -> None:
    for value in SECRETS:
        assert value not in text
    # Not even a long piece of one (a key cut by a budget is still a leak).
    for value in SECRETS:
        assert value[4:24] not in text


def test_keys_a_claude_answer_writes_into_the_bond_land_as_placeholders(ws, now, fake, runner):
    _notes(ws, now)
    fake.tool_use(TOOL_NAME, INJECTED)
    result = run(
        ws, now=now, synthesizer=ClaudeSynthesizer(ws.settings, client=fake.client()), force=True
    )
    assert result.committed

    memory = ws.memory_md.read_text()
    bond = memory.split("## The Bond\n", 1)[1].split("\n## ", 1)[0]
    _assert_clean(memory)
    assert "[secret:aws-access-key#" in bond
    assert "[secret:github-token#" in bond
    assert "[secret:anthropic-key#" in bond
    assert "works from Lisbon" in bond  # only the secrets went

    shown = runner.invoke(main, ["show", str(result.dream_id), "--json", "-w", str(ws.root)])
    assert shown.exit_code == 0, shown.output
    entry = json.loads(shown.output)
    assert "[secret:github-token#" in entry["draft"]
    assert "[secret:anthropic-key#" in entry["draft"]
    _assert_clean(shown.output)
    logged = runner.invoke(main, ["log", "--json", "-w", str(ws.root)])
    assert logged.exit_code == 0
    _assert_clean(logged.output)
    boot = runner.invoke(main, ["bootstrap", "-w", str(ws.root)])
    assert boot.exit_code == 0 and "[secret:aws-access-key#" in boot.output
    _assert_clean(boot.output)
    # Nor in any byte the workspace keeps on disk.
    for path in ws.root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(value.encode() in data for value in SECRETS), path


def test_the_raw_answer_of_an_unusable_output_is_journaled_redacted(ws, now, fake):
    _notes(ws, now)
    fake.tool_use(TOOL_NAME, {"bond": ["not", "text", GITHUB]})
    with pytest.raises(ModelOutputInvalid):
        run(
            ws,
            now=now,
            synthesizer=ClaudeSynthesizer(ws.settings, client=fake.client()),
            force=True,
        )
    entry = ws.store.journal.get_dream(ws.store.journal.dream_entries(1)[0]["id"])
    assert '"not"' in entry["raw"] and "[secret:github-token#" in entry["raw"]
    _assert_clean(entry["raw"])


def test_the_offline_synthesizer_goes_through_the_same_redaction(ws, now):
    _notes(ws, now)
    # niche.json is the user's file, read as is: the offline dream copies it into The Niche.
    ws.niche_json.write_text(json.dumps({"deploy_key": AWS, "ci": f"token {GITHUB}"}))
    result = run(ws, now=now, synthesizer=OfflineSynthesizer(), force=True)
    assert result.committed
    memory = ws.memory_md.read_text()
    niche = memory.split("## The Niche\n", 1)[1].split("\n## ", 1)[0]
    assert "[secret:aws-access-key#" in niche and "[secret:github-token#" in niche
    _assert_clean(memory)
    entry = ws.store.journal.get_dream(result.dream_id)
    _assert_clean(json.dumps(entry))


def test_with_redaction_off_the_answer_is_kept_as_written(tmp_path, now, monkeypatch):
    """memory.secrets.redact = false keeps what was said: the answer is treated like the input."""
    from dreamer import Workspace

    monkeypatch.setenv("DREAM_REDACT_SECRETS", "false")
    ws = Workspace.open(tmp_path / "raw")
    try:
        _notes(ws, now)
        ws.niche_json.write_text(json.dumps({"deploy_key": AWS}))
        assert run(ws, now=now, synthesizer=OfflineSynthesizer(), force=True).committed
        assert AWS in ws.memory_md.read_text()
    finally:
        ws.close()
