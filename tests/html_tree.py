"""A strict little HTML reader for tests: every element closed in order, or it fails."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"}


@dataclass
class Element:
    """One element: its tag, attributes, children and the text directly inside it."""

    tag: str
    attrs: dict[str, str]
    children: list[Element] = field(default_factory=list)
    text: str = ""

    def walk(self) -> Iterator[Element]:
        """This element and everything under it, in document order."""
        yield self
        for child in self.children:
            yield from child.walk()

    def find_all(self, match: Callable[[Element], bool]) -> list[Element]:
        """Every element under this one (itself included) that matches."""
        return [element for element in self.walk() if match(element)]

    def all_text(self) -> str:
        """The text of this element and everything under it."""
        return self.text + "".join(child.all_text() for child in self.children)

    def title(self) -> str:
        """The text of its ``<title>`` child (an SVG tooltip), or ''."""
        return next((c.all_text() for c in self.children if c.tag == "title"), "")


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]
        self.errors: list[str] = []
        self.doctype = ""

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Element(tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if len(self.stack) < 2 or self.stack[-1].tag != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1].tag}> at {self.getpos()}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].text += data


def parse(page: str) -> Element:
    """The document's tree; AssertionError if an element is left open or closed out of order."""
    reader = _Reader()
    reader.feed(page)
    reader.close()
    assert reader.doctype.lower() == "doctype html", reader.doctype
    assert not reader.errors, reader.errors[:5]
    assert len(reader.stack) == 1, f"unclosed: {[e.tag for e in reader.stack[1:]]}"
    return reader.root
