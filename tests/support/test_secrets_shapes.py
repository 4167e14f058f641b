"""The table of shapes ``dreamer.support.secrets`` builds at import, built again inside a test.

``_shape`` runs while the module is imported, so a test that only calls ``redact`` never runs it
again: a bug there would change every shape at once, and mutation testing (which forks after the
first test run) could not see it. These tests call it with every argument and read back what a
shape then finds in a note.
"""

from __future__ import annotations

import re

from dreamer.support import secrets
from dreamer.support.secrets_words import ALNUM


def _digits(value: str) -> bool:
    return any(c.isdigit() for c in value)


def test_a_shape_keeps_every_argument_it_is_built_with():
    run = (frozenset("xy"), 1, 3)
    shape = secrets._shape(
        "demo-key",
        r"demo_(\w+)",
        re.IGNORECASE,
        group=1,
        check=_digits,
        not_after=ALNUM,
        run_before=run,
        hint=("demo_",),
    )
    assert (shape.kind, shape.group, shape.check, shape.not_after, shape.run_before) == (
        "demo-key",
        1,
        _digits,
        ALNUM,
        run,
    )
    assert shape.hint == ("demo_",)
    assert (shape.pattern.source, shape.pattern.flags) == (r"demo_(\w+)", re.IGNORECASE)


def test_a_shape_built_with_its_defaults_takes_the_whole_match_anywhere():
    shape = secrets._shape("demo-key", r"demo_\w+", hint=("demo_",))
    assert (shape.group, shape.check, shape.not_after, shape.run_before) == (
        0,
        None,
        frozenset(),
        None,
    )
    assert shape.pattern.flags == 0
    note = "key: demo_abc1 and DEMO_abc2"
    assert [note[s:e] for s, e, _ in shape.spans(note)] == ["demo_abc1"]


def test_a_shape_finds_what_its_arguments_say():
    shape = secrets._shape(
        "demo-key",
        r"demo_(\w+)",
        re.IGNORECASE,
        group=1,
        check=_digits,
        hint=("demo_",),
    )
    note = "DEMO_abc1 demo_nodigits demo_zz9"
    assert [(note[s:e], kind) for s, e, kind in shape.spans(note)] == [
        ("abc1", "demo-key"),
        ("zz9", "demo-key"),
    ]


def test_every_shipped_shape_is_built_with_its_own_kind_pattern_and_hints():
    for shape in (*secrets._SHAPES, secrets._AWS_KEY_ID):
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", shape.kind), shape.kind
        assert shape.hint and all(h == h.lower() for h in shape.hint), shape.kind
        assert isinstance(shape.pattern.compiled, re.Pattern), shape.kind
