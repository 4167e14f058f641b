"""A small, safe Markdown subset for showing MEMORY.md in the report.

Headings, bullet and numbered lists (nested by indentation), paragraphs (line breaks kept: a
state is written line by line), fenced code, block quotes, rules, and inline ``code``,
**strong** and *emphasis*. Every character of the source is escaped before any tag is added,
so no raw HTML, script or link in MEMORY.md reaches the page; links stay plain text.
"""

from __future__ import annotations

import re
from html import escape

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)(?:([-*+])|(\d{1,9})[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_QUOTE = re.compile(r"^\s*>\s?(.*)$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(
    r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])|(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)"
)


def inline(text: str) -> str:
    """One line's inline Markdown as HTML, escaped."""
    parts = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        parts.append(_emphasis(escape(text[last : match.start()])))
        parts.append(f"<code>{escape(match.group(2).strip())}</code>")
        last = match.end()
    parts.append(_emphasis(escape(text[last:])))
    return "".join(parts)


def _emphasis(escaped: str) -> str:
    escaped = _STRONG.sub(lambda m: f"<strong>{m.group(2)}</strong>", escaped)
    return _EMPHASIS.sub(lambda m: f"<em>{m.group(1) or m.group(2)}</em>", escaped)


class _Writer:
    """Accumulates HTML while tracking the open paragraph and lists."""

    def __init__(self, heading_offset: int):
        self.out: list[str] = []
        self.paragraph: list[str] = []
        self.lists: list[tuple[int, str]] = []  # (indent, "ul" | "ol")
        self.offset = heading_offset

    def close_paragraph(self) -> None:
        if self.paragraph:
            self.out.append("<p>" + "<br>".join(self.paragraph) + "</p>")
            self.paragraph = []

    def close_lists(self, below: int = -1) -> None:
        while self.lists and self.lists[-1][0] > below:
            self.out.append(f"</li></{self.lists.pop()[1]}>")

    def close_all(self) -> None:
        self.close_paragraph()
        self.close_lists()

    def heading(self, level: int, text: str) -> None:
        self.close_all()
        tag = f"h{min(6, level + self.offset)}"
        self.out.append(f"<{tag}>{inline(text)}</{tag}>")

    def item(self, indent: int, tag: str, text: str) -> None:
        self.close_paragraph()
        while self.lists and indent < self.lists[-1][0]:
            self.out.append(f"</li></{self.lists.pop()[1]}>")
        if self.lists and indent == self.lists[-1][0] and tag != self.lists[-1][1]:
            self.out.append(f"</li></{self.lists.pop()[1]}>")
        if self.lists and indent == self.lists[-1][0]:
            self.out.append("</li><li>")
        else:
            self.out.append(f"<{tag}><li>")
            self.lists.append((indent, tag))
        self.out.append(inline(text))


def to_html(text: str, *, heading_offset: int = 2) -> str:
    """Markdown text as escaped HTML; ``#`` becomes ``h(1 + heading_offset)``."""
    writer = _Writer(heading_offset)
    code: list[str] | None = None
    for line in text.replace("\r\n", "\n").split("\n"):
        if code is not None:
            if _FENCE.match(line):
                writer.out.append("<pre><code>" + escape("\n".join(code)) + "</code></pre>")
                code = None
            else:
                code.append(line)
            continue
        if _FENCE.match(line):
            writer.close_all()
            code = []
        elif not line.strip():
            writer.close_all()
        elif heading := _HEADING.match(line):
            writer.heading(len(heading.group(1)), heading.group(2))
        elif _RULE.match(line):
            writer.close_all()
            writer.out.append("<hr>")
        elif item := _ITEM.match(line):
            indent = len(item.group(1).expandtabs(4))
            writer.item(indent, "ul" if item.group(2) else "ol", item.group(4))
        elif quote := _QUOTE.match(line):
            writer.close_all()
            writer.out.append(f"<blockquote>{inline(quote.group(1))}</blockquote>")
        elif writer.lists:
            writer.out.append(" " + inline(line.strip()))  # a list item's continuation
        else:
            writer.paragraph.append(inline(line.strip()))
    if code is not None:  # an unclosed fence: show what there is
        writer.out.append("<pre><code>" + escape("\n".join(code)) + "</code></pre>")
    writer.close_all()
    return "".join(writer.out)
