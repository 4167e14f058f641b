"""``dates.names_a_date``: the cheap check that spares a rule looking up when a line was
written. Where it says no, ``mentioned`` finds no date whatever day the text was written."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamer.dream import dates

WORDS = [
    "meet", "on", "the", "every", "next", "to", "until", "-", "–", ",", ".", "review", "s",
    "Feb", "February", "Sept", "may", "March", "monday", "Fridays", "tomorrow", "tonight",
    "next week", "today", "weekly", "29", "31", "2nd", "1st", "12", "2026-02-29", "2024-02-29",
    "2025-13-01", "0", "99", "2023", "a", "any", "mon", "dec.",
]  # fmt: skip
DAYS = [date(2023, 3, 1), date(2024, 2, 29), date(2025, 12, 31), date(2026, 6, 15)]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=8), st.sampled_from(["", " "]))
def test_no_date_named_means_none_found_on_any_day(words, glue):
    text = glue.join(words) if glue else " ".join(words)
    if not dates.names_a_date(text):
        assert all(dates.mentioned(text, day) == [] for day in DAYS)


def test_it_sees_each_kind_of_date():
    for text in [
        "due 2026-03-04",
        "on March 4",
        "on 4 March",
        "next Friday",
        "tomorrow at 9",
        "the week of Feb 2 to 6",
    ]:
        assert dates.names_a_date(text), text
        assert dates.mentioned(text, date(2026, 3, 1)), text
    for text in ["the build server moved to port 8080", "Priya owns the migration"]:
        assert not dates.names_a_date(text), text
