"""Issue 36: `dream import` redacts what it brings in, as a note would be redacted.

An export file may hold secrets as they are: one written by a workspace with redaction off, by
an older version, or edited by hand. Here a hand edit puts an AWS secret access key into a
crystal's ``text`` and into MEMORY.md; the imported workspace stores placeholders only.
"""

from __future__ import annotations

import json
import re

from dreamer import Workspace
from dreamer.cli import main
from dreamer.support.secrets import placeholder

KEY_ID = "AKIAQ3EGUGWZ7RMPL42X"
SECRET_KEY = "Wq7zR2pX9Lm4Kd8Hs3Gf6Jb0Ca5EyTn1Vw9Zx4Rk"  # 40 characters, generated


def _placeholder_of(value: str) -> re.Pattern[str]:
    """A placeholder of any kind standing for ``value`` (its hash is the value's)."""
    digest = placeholder("any", value).split("#")[1]
    return re.compile(rf"\[secret:[a-z0-9-]+#{digest}")


def _export(runner, root, out) -> list[dict]:
    done = runner.invoke(main, ["export", "--all", "--to", str(out), "-w", str(root)])
    assert done.exit_code == 0, done.output
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_import_stores_a_placeholder_for_an_aws_secret_key_in_a_crystal(tmp_path, runner, now):
    with Workspace.open(tmp_path / "ws") as ws:
        ws.note("The backup job uses the deploy user's keys.", at=now)
        ws.note("Ada prefers tea to coffee in the afternoon.", at=now)
        ws.write_memory("# MEMORY\n\n- The backup job uses the deploy user's keys.\n", now)
    out = tmp_path / "all.jsonl"
    rows = _export(runner, tmp_path / "ws", out)
    leaked = f"aws_access_key_id={KEY_ID} aws_secret_access_key={SECRET_KEY}"
    for row in rows:  # the hand edit
        if row["type"] == "crystal" and "backup job" in row["text"]:
            row["text"] = f"The backup job uses {leaked}"
        if row["type"] == "memory":
            row["text"] = row["text"].replace("the deploy user's keys", leaked)
    out.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    done = runner.invoke(main, ["import", str(out), "-w", str(tmp_path / "new")])
    assert done.exit_code == 0, done.output

    with Workspace.open(tmp_path / "new", create=False) as ws:
        texts = [c.text for c in ws.store.crystals.select()]
        memory = ws.memory_md.read_text(encoding="utf-8")
    backup = next(text for text in texts if "backup job" in text)
    assert SECRET_KEY not in backup and KEY_ID not in backup
    assert _placeholder_of(SECRET_KEY).search(backup)
    assert SECRET_KEY not in memory and _placeholder_of(SECRET_KEY).search(memory)
    assert "Ada prefers tea to coffee in the afternoon." in texts  # the rest as it was
    for path in (tmp_path / "new").rglob("*"):
        if path.is_file():
            assert SECRET_KEY.encode() not in path.read_bytes(), path
