"""`dream report`: one self-contained page whose charts carry the workspace's own numbers."""

from __future__ import annotations

import hashlib
import re
import stat
from datetime import timedelta

import pytest
import report_fixture
from html_tree import Element, parse
from report_fixture import BILLED, NOW, START, WASTED

from dreamer import Workspace
from dreamer.cli import main
from dreamer.service import report, report_data, report_svg
from dreamer.service.report_markdown import to_html
from dreamer.service.serve import Service

LOADERS = {"script", "link", "img", "iframe", "object", "embed", "source", "audio", "video"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The fixture workspace, and its report as text and as a tree."""
    facts = report_fixture.build(tmp_path_factory.mktemp("report") / "ws")
    with Workspace.open(facts.root, create=False, environ={}) as ws:
        page = report.build(ws, NOW)
    return facts, page, parse(page)


def _by(tree: Element, **attrs: str) -> list[Element]:
    return tree.find_all(
        lambda e: all(e.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())
    )


def _chart(tree: Element, name: str) -> Element:
    [chart] = _by(tree, data_chart=name)
    return chart


@pytest.mark.slow
def test_the_page_is_one_well_formed_html_document(built):
    _, page, tree = built
    [html] = [e for e in tree.children if e.tag == "html"]
    assert [c.tag for c in html.children] == ["head", "body"]
    assert {"hormones", "dreams", "crystals", "pointers", "memory"} <= {
        e.attrs["id"] for e in tree.walk() if e.tag == "section"
    }
    assert page.count('<svg class="chart"') == 4


@pytest.mark.slow
def test_the_page_loads_nothing_from_outside(built):
    _, page, tree = built
    assert "http://" not in page and "https://" not in page
    assert not [e.tag for e in tree.walk() if e.tag in LOADERS]
    links = [e.attrs["href"] for e in tree.walk() if "href" in e.attrs]
    assert links and all(link.startswith("#") for link in links)
    assert not [e for e in tree.walk() if "src" in e.attrs or "style" in e.attrs]
    [style] = [e for e in tree.walk() if e.tag == "style"]
    assert "url(" not in style.text and "@import" not in style.text


def test_every_link_leads_to_a_diff_inside_the_page(built):
    facts, _, tree = built
    ids = {e.attrs["id"]: e for e in tree.walk() if "id" in e.attrs}
    targets = [e.attrs["href"][1:] for e in tree.walk() if e.tag == "a"]
    dream_links = [t for t in targets if t.startswith("dream-")]
    assert f"dream-{facts.billed_dream}" in dream_links
    assert f"dream-{facts.rejected_dream}" in dream_links
    for target in targets:
        assert target in ids, f"#{target} leads nowhere"
    diff = ids[f"dream-{facts.billed_dream}"].find_all(lambda e: e.tag == "pre")[0]
    lines = diff.all_text().splitlines()
    assert lines[0].startswith("--- MEMORY.md before dream")
    assert any(line.startswith("+") for line in lines[2:])


def test_the_summary_counts_cost_tokens_and_what_was_removed(built):
    facts, _, tree = built
    cards = {
        card.children[0].all_text(): card.all_text()
        for card in tree.find_all(lambda e: e.attrs.get("class") == "card")
    }
    spent = BILLED.cost_usd + 3 * WASTED.cost_usd  # the rejected dream: three empty drafts
    assert report_svg.money(spent) in cards["LLM cost to date"]
    tokens = (
        BILLED.input_tokens
        + BILLED.output_tokens
        + 3 * (WASTED.input_tokens + WASTED.output_tokens)
    )
    assert f"{tokens:,} tokens" in cards["LLM cost to date"]
    # The forget's journal row is no dream, nor is the skip (it ran nothing).
    assert "4 dreams" in cards["LLM cost to date"]
    assert "1 · 1" in cards["forgotten · redacted"]
    assert "skipped" in cards["last dream"]
    assert f"last written: #{facts.free_dreams[-1]}" in cards["last dream"]
    assert "1 frozen" in cards["crystals"] and "1 archived" in cards["crystals"]
    pointers = _by(tree, id="pointers")[0].find_all(lambda e: "data-retrieves" in e.attrs)
    leading = sum(e.attrs["data-retrieves"] == "yes" for e in pointers)
    assert f"{leading} / {len(pointers)}" in cards["pointers that lead"]


def test_the_dream_chart_carries_each_dreams_numbers(built):
    facts, _, tree = built
    dreams = _chart(tree, "dreams")
    dots = {e.attrs["data-id"]: e for e in dreams.walk() if "data-id" in e.attrs}
    billed = dots[str(facts.billed_dream)]
    assert (billed.attrs["data-outcome"], billed.attrs["data-tokens"]) == ("committed", "1500")
    assert (billed.attrs["data-cost"], billed.attrs["data-revisions"]) == ("0.012300", "1")
    assert "$0.0123" in billed.title() and "1 revision(s)" in billed.title()
    rejected = dots[str(facts.rejected_dream)]
    assert rejected.attrs["data-outcome"] == "rejected"
    assert rejected.attrs["data-cost"] == f"{3 * WASTED.cost_usd:.6f}"
    assert rejected.attrs["data-revisions"] == "2"
    assert {dots[str(i)].attrs["data-cost"] for i in facts.free_dreams} == {"0.000000"}
    assert len(dots) == 4  # the skipped dream is grouped, the forget's journal row is no dream
    [skipped] = dreams.find_all(lambda e: "o-skipped" in e.attrs.get("class", ""))
    assert skipped.attrs["data-count"] == "1"
    lanes = {
        e.attrs["data-outcome"]: e.attrs["data-count"] for e in _by(dreams, **{"class": "lab"})
    }
    assert lanes == {"committed": "3", "rejected": "1", "skipped": "1"}
    cost = _chart(tree, "cost")
    [line] = cost.find_all(lambda e: e.attrs.get("class") == "cost")
    assert float(line.attrs["data-total"]) == pytest.approx(BILLED.cost_usd + 3 * WASTED.cost_usd)


def test_the_lifecycle_chart_counts_each_day(built):
    facts, _, tree = built
    chart = _chart(tree, "lifecycle")
    bars = {
        (e.attrs["data-event"], e.attrs["data-day"]): int(e.attrs["data-count"])
        for e in chart.walk()
        if e.tag == "rect"
    }
    created = {day: n for (event, day), n in bars.items() if event == "created"}
    assert created == facts.notes_per_day
    assert bars[("frozen", facts.frozen_day)] == 1
    assert bars[("archived", facts.archived_day)] == 1
    totals = {
        e.attrs["data-event"]: int(e.attrs["data-total"]) for e in _by(chart, **{"class": "lab"})
    }
    assert totals["created"] == sum(facts.notes_per_day.values())
    assert totals["frozen"] == totals["archived"] == 1
    assert totals["consolidated"] == sum(
        n for (event, _), n in bars.items() if event == "consolidated"
    )


def test_the_hormone_chart_draws_levels_and_marks_stimuli(built):
    _, _, tree = built
    chart = _chart(tree, "hormones")
    marks = [e for e in chart.walk() if "stim" in e.attrs.get("class", "")]
    cortisol = [m for m in marks if m.attrs["data-hormone"] == "cortisol"]
    outage = [m for m in cortisol if "production outage" in m.title()]
    assert outage and outage[0].attrs["data-delta"] == "0.500"
    assert any(m.attrs["data-hormone"] == "dopamine" for m in marks)  # "shipped" in a note
    [line] = [
        e for e in chart.walk() if e.attrs.get("data-hormone") == "cortisol" and e.tag == "polyline"
    ]
    levels = [(200 - float(point.split(",")[1])) / 184 for point in line.attrs["points"].split()]
    assert len(levels) == report.HORMONE_BUCKETS + 1
    assert 0.5 <= max(levels) <= 0.6  # rest 0.02, then +0.5
    assert min(levels) == pytest.approx(0.02, abs=0.01)


def test_pointers_are_checked_without_changing_the_memory(built):
    _, _, tree = built
    [section] = _by(tree, id="pointers")
    rows = {
        row.children[0].all_text(): row.children[2].attrs.get("data-retrieves")
        for row in section.find_all(lambda e: e.tag == "tr")
        if row.children[0].tag == "td"
    }
    assert rows["Lisbon trip"] == "yes"
    assert rows["zebra migration"] == "no"


def test_memory_md_is_rendered_and_nothing_in_it_runs(built):
    _, page, tree = built
    assert "<script" not in page and "onerror=" not in page.replace("onerror=&quot;", "")
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page  # a stimulus reason
    [memory] = _by(tree, **{"class": "memory"})
    headings = [e.all_text() for e in memory.walk() if e.tag in ("h3", "h4")]
    assert headings[:2] == ["Working Memory State", "The Phenotype"]
    assert "Notes by hand" in headings
    assert "<strong>bold</strong> with <code>code</code>" in page


@pytest.mark.slow
def test_making_a_report_changes_nothing(tmp_path):
    facts = report_fixture.build(tmp_path / "ws")
    files = [facts.root / "MEMORY.md", *sorted((facts.root / "memory").glob("*"))]

    def snapshot():
        return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in files}

    with Workspace.open(facts.root, create=False, environ={}) as ws:
        before = (
            snapshot(),
            ws.store.search.search_queries("2000-01-01"),
            ws.store.records.audit_entries(),
        )
        report.build(ws, NOW)
        after = (
            snapshot(),
            ws.store.search.search_queries("2000-01-01"),
            ws.store.records.audit_entries(),
        )
    assert after == before


def test_since_narrows_the_charts_but_not_the_totals(built):
    facts, _, _ = built
    since = START + timedelta(days=3)  # after the billed dream, before the rejected one
    with Workspace.open(facts.root, create=False, environ={}) as ws:
        tree = parse(report.build(ws, NOW, since=since))
    ids = {e.attrs["data-id"] for e in _chart(tree, "dreams").walk() if "data-id" in e.attrs}
    assert str(facts.rejected_dream) in ids and str(facts.billed_dream) not in ids
    [line] = _chart(tree, "cost").find_all(lambda e: e.attrs.get("class") == "cost")
    assert float(line.attrs["data-total"]) == pytest.approx(BILLED.cost_usd + 3 * WASTED.cost_usd)


def test_diffs_past_the_budget_say_how_to_see_them(built, monkeypatch):
    facts, _, _ = built
    monkeypatch.setattr(report, "DIFF_BUDGET_CHARS", 10)
    with Workspace.open(facts.root, create=False, environ={}) as ws:
        page = report.build(ws, NOW)
    assert 'href="#dream-' not in page
    assert f"<code>dream diff {facts.billed_dream}</code>" in page


def test_a_fresh_workspace_has_a_report_too(ws, now):
    ws.init()
    tree = parse(report.build(ws, now))
    assert "No dreams in this period." in tree.all_text()
    assert "MEMORY.md has no crystal pointers yet." in tree.all_text()


@pytest.mark.slow
def test_dream_report_writes_an_owner_only_page(runner, tmp_path):
    facts = report_fixture.build(tmp_path / "ws")
    result = runner.invoke(main, ["report", "-w", str(facts.root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    page = facts.root / "memory" / "report.html"
    assert f"Report written to {page}" in result.output
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    parse(page.read_text(encoding="utf-8"))
    elsewhere = tmp_path / "out.html"
    result = runner.invoke(main, ["report", "-w", str(facts.root), "-o", str(elsewhere)])
    assert result.exit_code == 0 and stat.S_IMODE(elsewhere.stat().st_mode) == 0o600
    printed = runner.invoke(
        main, ["report", "-w", str(facts.root), "-o", "-", "--since", "2026-03-10"]
    )
    assert printed.exit_code == 0 and printed.output.startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    "since, message",
    [("last tuesday", "is not a date; use e.g. 2026-03-01"), ("2999-01-01", "is not before now")],
)
def test_a_bad_since_is_a_usage_error(runner, ws, since, message):
    ws.init()
    result = runner.invoke(main, ["report", "-w", str(ws.root), "--since", since])
    assert result.exit_code == 2
    assert result.output.startswith("Error: --since") and message in result.output


def test_a_report_never_creates_a_workspace(runner, tmp_path):
    result = runner.invoke(main, ["report", "-w", str(tmp_path / "nowhere")])
    assert result.exit_code != 0 and "Error:" in result.output
    assert not (tmp_path / "nowhere").exists()


def test_serve_rewrites_the_report_after_every_n_dreams(tmp_path, now):
    root = tmp_path / "ws"
    with Workspace.open(root, environ={}) as ws:
        ws.init()
    clock = [now]
    service = Service(
        [root], clock=lambda: clock[0], environ={"DREAM_SYNTHESIZER": "offline"}, report_every=2
    )
    page = root / "memory" / "report.html"
    for round_number in range(3):
        with Workspace.open(root, environ={}) as ws:
            for i in range(5):
                ws.note(f"Round {round_number} note {i}: the kiln firing log", at=clock[0])
        service._fire(str(root), "dream")
        clock[0] += timedelta(hours=2)  # serve dreams once per interval, whoever fires it
        assert page.exists() == (round_number >= 1)
        if round_number == 1:
            first = page.read_text(encoding="utf-8")
            assert stat.S_IMODE(page.stat().st_mode) == 0o600
    with Workspace.open(root, create=False, environ={}) as ws:
        assert [row["outcome"] for row in ws.store.journal.dream_entries()] == ["committed"] * 3
    assert page.read_text(encoding="utf-8") == first  # the third dream alone is not enough
    service._fire(str(root), "dream")  # skipped: too few notes, does not count
    assert page.read_text(encoding="utf-8") == first


def test_markdown_subset_escapes_everything():
    html = to_html(
        "# Title\n\n- one **bold**\n  - nested `<b>`\n- two _em_\n\n1. first\n2. second\n\n"
        "```\n<script>x</script>\n```\n> quoted\n[link](javascript:alert(1)) <i>raw</i>\n---"
    )
    assert html.startswith("<h3>Title</h3>")
    assert (
        "<ul><li>one <strong>bold</strong><ul><li>nested <code>&lt;b&gt;</code></li></ul>" in html
    )
    assert "</li><li>two <em>em</em></li></ul>" in html
    assert "<ol><li>first</li><li>second</li></ol>" in html
    assert "<pre><code>&lt;script&gt;x&lt;/script&gt;</code></pre>" in html
    assert "<blockquote>quoted</blockquote>" in html
    assert "[link](javascript:alert(1)) &lt;i&gt;raw&lt;/i&gt;" in html
    assert html.endswith("<hr>")
    assert "<a" not in html and "<i>" not in html
    assert re.fullmatch(r"(?s).*", to_html(""))


def test_many_stimuli_become_ticks_under_the_lines(now):
    since = now - timedelta(days=30)
    marks = [
        report_data.StimulusMark("cortisol", since + timedelta(hours=6 * i), 0.4, 1, 0.3, ["bug"])
        for i in range(report_svg.MARKS_ON_LINES + 1)
    ]
    tree = parse(
        "<!DOCTYPE html>" + report_svg.hormone_chart({"cortisol": []}, marks, since, now, 0.7)
    )
    ticks = tree.find_all(lambda e: "rug" in e.attrs.get("class", ""))
    assert len(ticks) == len(marks) and ticks[0].tag == "line"
    assert ticks[0].attrs["data-delta"] == "0.300" and "bug" in ticks[0].title()


@pytest.mark.parametrize(
    "days, wide, narrow",
    [
        (
            3,
            ["Mar 10", "12:00", "Mar 11", "12:00", "Mar 12", "12:00"],
            ["Mar 10", "Mar 11", "Mar 12"],
        ),
        (
            90,
            ["Dec 22", "Jan 05", "Jan 19", "Feb 02", "Feb 16", "Mar 02"],
            ["Jan 2026", "Feb", "Mar"],
        ),
        (365, ["May", "Jul", "Sep", "Nov", "Jan 2026", "Mar"], ["Jul", "Jan 2026"]),
    ],
)
def test_time_axis_labels_fit_a_phone_and_a_desktop(now, days, wide, narrow):
    # At most seven labels for a desktop, three for a phone; weeks start on Monday.
    axis = report_svg.TimeAxis(now - timedelta(days=days), now)
    assert [label for _, label in axis.ticks(7)] == wide
    assert [label for _, label in axis.ticks(3)] == narrow
