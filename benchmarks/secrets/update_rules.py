"""Turn gitleaks' default ruleset into the data dreamer's secret detector loads.

Run from the repository root with a gitleaks checkout's ``config/gitleaks.toml``::

    python benchmarks/secrets/update_rules.py path/to/gitleaks.toml --commit <sha> --date <iso>

It writes ``dreamer/support/secrets_rules.json``: every rule that matches text (rules that only
name a file path are left out), its keywords, entropy floor, secret group and allowlists, with
each Go RE2 pattern rewritten for Python's ``re`` (compiled with ``re.ASCII``, as RE2's ``\\w``,
``\\d``, ``\\s`` and ``\\b`` are ASCII):

- a flag group ``(?i)`` that is not at the start becomes ``(?i:...)`` around the rest of its
  group, each later alternative of the group wrapped alike (RE2 scopes it to the rest of the
  group; Python 3.11 refuses a global flag there);
- ``\\z`` becomes ``\\Z`` (both mean the very end of the text);
- POSIX classes such as ``[[:alnum:]]`` are spelled out;
- a ``[`` inside a character class is escaped (Python warns of nested sets);
- a leading ``[\\w.-]{0,50}?`` before a keyword is dropped and remembered as ``prefix_run``:
  it only widens the match, and Python's ``re`` would try it at every position; the detector
  restores the widened match where an allowlist looks at it.

gitleaks is MIT licensed (Copyright (c) 2019 Zachary Rice); the licence text ships beside the
data as ``dreamer/support/secrets_rules.LICENSE``. Kinds: a rule's id, except the ids below,
which keep the names dreamer's placeholders always had.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "dreamer" / "support" / "secrets_rules.json"

KINDS = {
    "aws-access-token": "aws-access-key",
    "anthropic-api-key": "anthropic-key",
    "anthropic-admin-api-key": "anthropic-key",
    "openai-api-key": "openai-key",
    "github-pat": "github-token",
    "github-fine-grained-pat": "github-token",
    "github-oauth": "github-token",
    "github-app-token": "github-token",
    "github-refresh-token": "github-token",
    "slack-webhook-url": "slack-webhook",
    "stripe-access-token": "stripe-key",
    "gcp-api-key": "google-api-key",
    "huggingface-access-token": "huggingface-token",
    "huggingface-organization-api-token": "huggingface-token",
    "npm-access-token": "npm-token",
    "pypi-upload-token": "pypi-token",
    "sendgrid-api-token": "sendgrid-key",
    "twilio-api-key": "twilio-key",
    "telegram-bot-api-token": "telegram-token",
    "mailchimp-api-key": "mailchimp-key",
    "square-access-token": "square-token",
    "square-secret": "square-token",
    "generic-api-key": "credential",
}
# The whole match is the secret where gitleaks' first group is only a marker inside it.
WHOLE_MATCH = {"jwt-base64"}
POSIX = {
    "alnum": "A-Za-z0-9",
    "alpha": "A-Za-z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
    "space": r" \t\r\n\v\f",
    "word": r"\w",
}
LEADING_RUN = r"[\w.-]{0,50}?"


def kind_of(rule_id: str) -> str:
    """The placeholder kind of a gitleaks rule."""
    if rule_id in KINDS:
        return KINDS[rule_id]
    if rule_id.startswith("gitlab-"):
        return "gitlab-token"
    if rule_id.startswith("slack-"):
        return "slack-token"
    if rule_id.startswith("discord-"):
        return "discord-token"
    return rule_id


def _group_end(pattern: str, at: int, *, bar: bool = False) -> int:
    """Index of the ``)`` closing the group that is open at ``at`` (len(pattern) if none);
    with ``bar``, of the first ``|`` of that group if it comes first."""
    depth, i, in_class = 0, at, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        elif c == "|" and bar and depth == 0:
            return i
        i += 1
    return len(pattern)


def _alternatives(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|``."""
    out, start = [], 0
    while True:
        end = _group_end(pattern, start, bar=True)
        out.append(pattern[start:end])
        if end >= len(pattern):
            return out
        start = end + 1


def to_python(pattern: str, *, nested: bool = False) -> str:
    """A Go RE2 pattern as a Python ``re`` pattern with the same meaning (``nested``: a part
    of a pattern, where even a leading flag group is scoped)."""
    for name, chars in POSIX.items():
        pattern = pattern.replace(f"[:{name}:]", chars)
    out: list[str] = []
    i, in_class, class_start = 0, False, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            pair = pattern[i : i + 2]
            out.append(r"\Z" if pair == r"\z" else pair)
            i += 2
            class_start = (
                False  # "[\r\n]": an escape is the class's first member, so its "]" ends it
            )
            continue
        if in_class:
            if c == "]" and not class_start:
                in_class = False
            elif c == "[":
                c = r"\["
            elif c in "&~|-" and pattern[i + 1 : i + 2] == c:
                c = "\\" + c
            class_start = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class, class_start = True, True
            out.append(c)
            i += 1
            if pattern[i : i + 1] == "^":
                out.append("^")
                i += 1
            continue
        flags = re.match(r"\(\?([imsU-]+)\)", pattern[i:])
        if flags and (i > 0 or nested):
            # RE2 scopes the flag to the rest of its group, later alternatives included:
            # "(?:a(?i)b|c)" is "(?:a(?i:b)|(?i:c))".
            start = i + len(flags.group())
            end = _group_end(pattern, start)
            out.append(
                "|".join(
                    f"(?{flags.group(1)}:{to_python(part, nested=True)})"
                    for part in _alternatives(pattern[start:end])
                )
            )
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _leading_run(pattern: str) -> tuple[str, int]:
    """Drop a leading ``[\\w.-]{0,50}?`` (after a leading ``(?i)``); return its length too."""
    head = "(?i)" if pattern.startswith("(?i)") else ""
    if pattern[len(head) :].startswith(LEADING_RUN):
        return head + pattern[len(head) + len(LEADING_RUN) :], 50
    return pattern, 0


def _allowlist(entry: dict[str, object]) -> dict[str, object] | None:
    condition = str(entry.get("condition", "OR")).upper()
    if condition == "AND" and entry.get("paths"):
        return None  # needs a file path: never true for a note
    regexes = [to_python(str(r)) for r in entry.get("regexes", [])]  # type: ignore[attr-defined]
    stopwords = [str(w).lower() for w in entry.get("stopwords", [])]  # type: ignore[attr-defined]
    if not regexes and not stopwords:
        return None  # paths or commits only
    return {
        "target": entry.get("regexTarget", "secret"),
        "condition": condition,
        "regexes": regexes,
        "stopwords": stopwords,
    }


def convert(config: dict[str, object], commit: str, date: str) -> dict[str, object]:
    """The data file's content."""
    rules = []
    for rule in config["rules"]:  # type: ignore[attr-defined]
        if "regex" not in rule:
            continue
        pattern, run = _leading_run(to_python(rule["regex"]))
        group = 0 if rule["id"] in WHOLE_MATCH else rule.get("secretGroup")
        allow = [a for a in map(_allowlist, rule.get("allowlists", [])) if a]
        rules.append(
            {
                "id": rule["id"],
                "kind": kind_of(rule["id"]),
                "regex": pattern,
                "prefix_run": run,
                "group": group,
                "entropy": rule.get("entropy", 0.0),
                "keywords": sorted({k.lower() for k in rule.get("keywords", [])}),
                "allow": allow,
            }
        )
    top = config.get("allowlist", {})
    return {
        "source": f"https://github.com/gitleaks/gitleaks/blob/{commit}/config/gitleaks.toml",
        "commit": commit,
        "date": date,
        "licence": "MIT, Copyright (c) 2019 Zachary Rice; see secrets_rules.LICENSE",
        "converted_by": "benchmarks/secrets/update_rules.py",
        "allow": [a for a in [_allowlist(top)] if a],  # type: ignore[arg-type]
        "rules": rules,
    }


def main() -> None:
    """Read gitleaks.toml, write dreamer/support/secrets_rules.json, check every rule compiles."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("toml", type=Path)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--date", required=True)
    args = parser.parse_args()
    data = convert(tomllib.loads(args.toml.read_text()), args.commit, args.date)
    for rule in data["rules"]:  # type: ignore[attr-defined]
        re.compile(rule["regex"], re.ASCII)
        for allow in rule["allow"]:
            for pattern in allow["regexes"]:
                re.compile(pattern, re.ASCII)
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(data['rules'])} rules to {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
