"""Prompts are Markdown files in ``prompts/`` with ``{named}`` placeholders, rendered strictly.

A placeholder with no value, or a value with no placeholder, is an error: a prompt never goes
out half-filled. Literal braces are written ``{{`` and ``}}``.
"""

from __future__ import annotations

import string
from typing import Any

from dreamer.support.resources import resource_dir


def template(name: str) -> str:
    """The raw text of ``prompts/{name}.md``."""
    path = resource_dir("prompts") / f"{name}.md"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"prompt {name!r} is missing ({path}); reinstall dreamer") from None


def placeholders(text: str) -> set[str]:
    """The names of the placeholders in a template."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def render(name: str, **values: Any) -> str:
    """Fill ``prompts/{name}.md``; every placeholder needs a value and every value a placeholder."""
    text = template(name)
    wanted = placeholders(text)
    missing = wanted - set(values)
    extra = set(values) - wanted
    if missing or extra:
        raise KeyError(
            f"prompt {name!r}: missing values {sorted(missing)}, unexpected values {sorted(extra)}"
        )
    return text.format(**values)
