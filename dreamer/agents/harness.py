"""What a coding agent's harness adds to a session, and what of it a memory keeps.

Claude Code and Codex put their own text around the person's words: IDE blocks naming the open
file (with its absolute path), system reminders, command and bash markup, hook output, and
tool results (file contents, command output, fetched pages). None of it is anyone's words
(DESIGN.md, "Who said what"). ``clean`` takes the markup out of a prompt or an answer and makes
machine paths relative (the project's folder, the user's home); ``outcome`` reduces a tool's
output to what it established ("3 failed, 41 passed", "error: …"), never a dump; ``promise``
tells the assistant's promises ("I'll …", "Let me …") from what it established.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Markup blocks a harness wraps around or inside a prompt: gone with what they hold.
_BLOCKS = re.compile(
    r"<(ide_[a-z_]+|system-reminder|local-command-(?:stdout|stderr|caveat)|bash-(?:stdout|stderr)"
    r"|user-prompt-submit-hook|environment_context|user_instructions|persisted-output"
    r"|command-message|task-notification)>.*?</\1>",
    re.DOTALL,
)
_LEFT_TAGS = re.compile(r"</?(?:ide_[a-z_]+|system-reminder|command-[a-z]+|bash-input)>")
_HOME = re.compile(r"(?<![\w/])(?:/home|/Users)/[^/\s\"'`]+|(?<![\w\\])[A-Z]:\\Users\\[^\\\s\"']+")
_COUNTS = re.compile(
    r"\b(\d+) (passed|failed|errors?|skipped|xfailed|warnings?|tests? passed|tests? failed)\b", re.I
)
_FAILED = re.compile(r"^(?:error|fatal|traceback|exception|failed)\b[^\n]{0,100}", re.I | re.M)
_PROMISE = re.compile(
    r"^(?:i['’]ll|i will|i['’]m going to|i am going to|let me|let['’]s|next,? i['’]ll|now i['’]ll"
    r"|i can (?:also )?(?:help|do)|i['’]d be happy|would you like|shall i|want me to)\b",
    re.I,
)
OUTCOME_CHARS = 120


def clean(text: str, cwd: str | None = None) -> str:
    """``text`` without harness markup, the project folder and the user's home made relative."""
    text = _BLOCKS.sub("", text)
    text = _LEFT_TAGS.sub("", text)
    return relative(text, cwd).strip()


def relative(text: str, cwd: str | None = None) -> str:
    """Machine paths made relative: ``cwd``'s prefix dropped, a home folder written ``~``."""
    if cwd:
        for sep in ("/", "\\"):
            root = cwd.rstrip(sep)
            if sep in cwd and len(root) > 1:  # a Windows folder is not cut at a "/"
                text = _whole(text.replace(root + sep, ""), root, ".")
    home = str(Path.home())
    if len(home) > 1:
        text = _whole(text.replace(home + os.sep, "~" + os.sep), home, "~")
    return _HOME.sub("~", text)


def _whole(text: str, folder: str, into: str) -> str:
    """``text`` with ``folder`` written ``into`` where it stands whole: not the start of another
    name ("/srv/atlas" in "/srv/atlas-old"), a sentence's full stop after it allowed."""
    return re.sub(re.escape(folder) + r"(?![\w-]|\.\w)", lambda _: into, text)


def outcome(result: str, is_error: bool = False) -> str | None:
    """What a tool's output established, in a few words, or None when it says nothing short."""
    counts = [f"{n} {word.lower()}" for n, word in _COUNTS.findall(result)]
    if counts:
        return ", ".join(dict.fromkeys(counts))[:OUTCOME_CHARS]
    if is_error:
        first = next((line.strip() for line in result.splitlines() if line.strip()), "")
        return f"error: {first[:OUTCOME_CHARS]}" if first else "error"
    if failed := _FAILED.search(result):
        return failed.group(0).strip()[:OUTCOME_CHARS]
    return None


def promise(sentence: str) -> bool:
    """Whether a sentence of the assistant only promises or offers (nothing established)."""
    return bool(_PROMISE.match(sentence.strip()))
