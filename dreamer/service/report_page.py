"""The report's page: one HTML document with its stylesheet inline, no script, no network.

Laid out for a phone first (one column, cards that wrap, charts that scale and enlarge their
text on narrow screens), wider on a desktop; light or dark as the reader's system prefers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from dreamer.config import HORMONES
from dreamer.memory.hormones import SPIKE_THRESHOLD
from dreamer.service import report_svg as svg
from dreamer.service.report_data import LISTED_DREAMS, ReportData
from dreamer.service.report_markdown import to_html
from dreamer.service.report_svg import dream_time, dream_tokens, esc, money, when
from dreamer.support.times import parse_iso

STYLE = """
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--muted:#5f6b7a;--line:#e3e7ec;--grid:#eef1f4;
--dopamine:#009e73;--cortisol:#d55e00;--oxytocin:#cc79a7;--committed:#2f9e44;--rejected:#e69f00;
--failed:#d6336c;--restored:#0072b2;--skipped:#adb5bd;--created:#56b4e9;--consolidated:#0072b2;
--archived:#8d96a0;--frozen:#7950f2;--add:#e6f6ea;--del:#fdecec;--hunk:#e8f1fb;--accent:#3b5bdb}
@media (prefers-color-scheme:dark){:root{--bg:#12151a;--card:#1b1f26;--ink:#e6e9ee;
--muted:#9aa5b1;--line:#2c323b;--grid:#242a32;--add:#16351f;--del:#3d1d1d;--hunk:#1a2a3d;
--skipped:#5c6670;--accent:#91a7ff}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:980px;margin:0 auto;padding:16px 12px 40px}
header h1{font-size:1.45rem;margin:.2rem 0 .1rem;letter-spacing:-.01em}
header p{margin:0;color:var(--muted);font-size:.88rem;overflow-wrap:anywhere}
nav{display:flex;flex-wrap:wrap;gap:6px;margin:12px 0 4px}
nav a{font-size:.82rem;padding:3px 10px;border-radius:999px;background:var(--card);
border:1px solid var(--line);color:var(--ink);text-decoration:none}
section{background:var(--card);border:1px solid var(--line);border-radius:14px;
padding:14px 14px 10px;margin:14px 0}
h2{font-size:1.08rem;margin:0 0 .5rem}
h3.sub{font-size:.95rem;margin:14px 0 2px}
.health{border:1px solid #c0392b;border-radius:12px;padding:8px 12px;margin:0 0 10px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(210px,46%),1fr));gap:10px}
.card{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:10px 12px}
.card .k{font-size:.75rem;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.card .v{font-size:1.35rem;font-weight:650;line-height:1.25;margin:2px 0}
.card .s{font-size:.8rem;color:var(--muted)}
.meters{display:grid;grid-template-columns:auto 1fr auto;gap:2px 8px;align-items:center;
font-size:.8rem;margin-top:4px}
.meter{width:100%;height:8px;border-radius:4px;display:block}
.meter .track{fill:var(--grid)}
.muted{color:var(--muted)}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:.82rem;color:var(--muted);
margin:2px 0 6px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:3px;margin-right:5px;
vertical-align:-1px}
svg.chart{display:block;overflow:visible;margin:4px 0}
svg.chart text{font-size:11.5px;fill:var(--muted)}
svg.chart .lab{fill:var(--ink);font-weight:600;font-size:12px;paint-order:stroke;
stroke:var(--card);stroke-width:3px;stroke-linejoin:round}
svg.chart .lab .tick{font-weight:400}
svg.chart .grid{stroke:var(--grid);stroke-width:1}
svg.chart .lane{stroke:var(--line);stroke-width:1}
svg.chart .spike{stroke:var(--muted);stroke-dasharray:4 4;stroke-width:1}
svg.chart .line{fill:none;stroke-width:1.8;stroke-linejoin:round}
svg.chart .stim{stroke:var(--card);stroke-width:1}
svg.chart .rug{stroke-width:1.5;opacity:.8}
svg.chart .rug.h-dopamine{stroke:var(--dopamine)}svg.chart .rug.h-cortisol{stroke:var(--cortisol)}
svg.chart .rug.h-oxytocin{stroke:var(--oxytocin)}
svg.chart .dot{stroke:var(--card);stroke-width:1}
svg.chart a .dot{cursor:pointer}
svg.chart .cost{fill:none;stroke:var(--accent);stroke-width:2}
svg.chart .area{fill:var(--accent);opacity:.12}
svg.chart .bar{shape-rendering:crispEdges}
svg.chart .narrow{display:none}
@media (max-width:560px){svg.chart .wide{display:none}svg.chart .narrow{display:inline}}
.h-dopamine{stroke:var(--dopamine);fill:var(--dopamine)}
.h-cortisol{stroke:var(--cortisol);fill:var(--cortisol)}
.h-oxytocin{stroke:var(--oxytocin);fill:var(--oxytocin)}
polyline.h-dopamine,polyline.h-cortisol,polyline.h-oxytocin{fill:none}
.o-committed{fill:var(--committed);background:var(--committed)}
.o-rejected{fill:var(--rejected);background:var(--rejected)}
.o-failed{fill:var(--failed);background:var(--failed)}
.o-restored{fill:var(--restored);background:var(--restored)}
.o-skipped{fill:var(--skipped);background:var(--skipped)}
.l-created{fill:var(--created);background:var(--created)}
.l-consolidated{fill:var(--consolidated);background:var(--consolidated)}
.l-archived{fill:var(--archived);background:var(--archived)}
.l-frozen{fill:var(--frozen);background:var(--frozen)}
i.h-dopamine{background:var(--dopamine)}i.h-cortisol{background:var(--cortisol)}
i.h-oxytocin{background:var(--oxytocin)}
.badge{display:inline-block;font-size:.72rem;font-weight:600;color:#fff;border-radius:999px;
padding:0 8px;line-height:1.6}
.badge.o-skipped{color:#222}
details.dream{border-top:1px solid var(--line);padding:6px 0}
details.dream summary{cursor:pointer;font-size:.9rem}
details.dream summary .m{color:var(--muted);font-size:.82rem}
details.dream:has(:target){background:var(--hunk);border-radius:8px}
.why{font-size:.85rem;color:var(--muted);margin:4px 0}
pre{margin:6px 0;padding:8px;background:var(--bg);border-radius:8px;overflow-x:auto;
font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre .a{background:var(--add);display:block}pre .d{background:var(--del);display:block}
pre .h{background:var(--hunk);display:block;color:var(--muted)}
table{border-collapse:collapse;width:100%;font-size:.88rem}
th,td{text-align:left;padding:6px 6px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:.75rem;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
td code,.memory code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
background:var(--bg);padding:1px 4px;border-radius:4px;overflow-wrap:anywhere}
.ok{color:var(--committed);font-weight:700}.no{color:var(--failed);font-weight:700}
td.ok,td.no{white-space:nowrap}
.memory{overflow-wrap:anywhere}
.memory h3{font-size:1.15rem;margin:.4rem 0}.memory h4{font-size:1rem;margin:1rem 0 .3rem;
padding-top:.6rem;border-top:1px solid var(--line)}
.memory ul,.memory ol{padding-left:1.25rem;margin:.3rem 0}.memory p{margin:.35rem 0}
.memory blockquote{margin:.4rem 0;padding-left:10px;border-left:3px solid var(--line);
color:var(--muted)}
footer{color:var(--muted);font-size:.8rem;text-align:center;margin-top:18px}
"""


def _ago(moment: datetime, now: datetime) -> str:
    seconds = (now - moment).total_seconds()
    ahead = seconds < 0
    seconds = abs(seconds)
    if seconds < 90:
        text = "now" if not ahead else "in a moment"
        return text
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            amount = f"{seconds / size:.0f} {unit}"
            return f"in {amount}" if ahead else f"{amount} ago"
    return "now"


def plural(count: int, noun: str) -> str:
    """``1 dream``, ``2 dreams``, with thousands separated."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _card(key: str, value: str, sub: str = "", extra: str = "") -> str:
    return (
        f'<div class="card"><div class="k">{esc(key)}</div><div class="v">{value}</div>'
        + (f'<div class="s">{sub}</div>' if sub else "")
        + extra
        + "</div>"
    )


def _tokens(totals: dict[str, Any]) -> int:
    return int(totals.get("input_tokens") or 0) + int(totals.get("output_tokens") or 0)


def summary(data: ReportData) -> str:
    """The cards at the top: the state of the memory now."""
    crystals = data.crystals
    live = sum(crystals.values())
    stages = " · ".join(f"{n:,} {stage}" for stage, n in crystals.items() if n)
    last = data.last_dream
    if last:
        at = dream_time(last)
        last_value = f'<span class="badge o-{esc(last["outcome"])}">{esc(last["outcome"])}</span>'
        last_sub = f"#{last['id']} · {esc(_ago(at, data.now))} · {esc(when(at))}"
        committed = [d for d in data.dreams if d["outcome"] == "committed"]
        if last["outcome"] != "committed" and committed:
            wrote = dream_time(committed[-1])
            last_sub += f"<br>last written: #{committed[-1]['id']}, {esc(_ago(wrote, data.now))}"
    else:
        last_value, last_sub = "none yet", "run <code>dream run</code>"
    if data.next_dream is None:
        next_value, next_sub = "off", "memory.dream.enabled = false"
    else:
        next_value = esc(_ago(data.next_dream, data.now))
        ready = data.pending >= data.min_chunks
        next_sub = esc(when(data.next_dream)) + (
            "" if ready else f" · skips unless {data.min_chunks} notes wait"
        )
    totals = data.totals
    cache = int(totals.get("cache_read_tokens") or 0) + int(totals.get("cache_write_tokens") or 0)
    meters = "".join(
        f"<span>{esc(name)}</span>{svg.level_bar(name, level)}<span>{level:.2f}</span>"
        for name, level in data.levels.items()
    )
    removed = data.removed
    cards = [
        _card("crystals", f"{live:,}", esc(stages) or "none yet"),
        _card(
            "waiting for a dream",
            f"{data.pending:,}",
            f"{data.scratch_notes:,} in the scratch · dreams at {data.min_chunks}",
        ),
        _card("last dream", last_value, last_sub),
        _card("next dream", next_value, next_sub),
        _card(
            "LLM cost to date",
            esc(money(totals.get("cost_usd"))),
            f"{_tokens(totals):,} tokens ({int(totals.get('input_tokens') or 0):,} in, "
            f"{int(totals.get('output_tokens') or 0):,} out"
            + (f", {cache:,} cache" if cache else "")
            + f") · {plural(int(totals.get('dreams') or 0), 'dream')}",
        ),
        _card("hormones now", esc(data.mood), extra=f'<div class="meters">{meters}</div>'),
        _card(
            "forgotten · redacted",
            f"{removed.get('forgotten', 0):,} · {removed.get('redacted', 0):,}",
            "counts only; the texts are gone",
        ),
        _card(
            "pointers that lead",
            f"{sum(p.retrieves for p in data.pointers)} / {len(data.pointers)}",
            "their keywords still find the topic" if data.pointers else "none in MEMORY.md yet",
        ),
    ]
    warnings = "".join(f'<p class="health">{esc(line)}</p>' for line in data.health)
    return warnings + '<div class="cards">' + "".join(cards) + "</div>"


def hormone_section(data: ReportData) -> str:
    """Levels over time with stimuli marked, and the strongest stimuli."""
    legend = "".join(
        f'<span><i class="h-{name}"></i>{name} {data.levels[name]:.2f}</span>' for name in HORMONES
    )
    stimuli = sum(mark.count for mark in data.stimuli)
    where = "ticks under the lines" if len(data.stimuli) > svg.MARKS_ON_LINES else "▲▼ on the lines"
    noun = "stimulus" if stimuli == 1 else "stimuli"
    legend += f"<span>{stimuli:,} {noun}: {where}</span>"
    chart = svg.hormone_chart(
        data.hormone_series, data.stimuli, data.period.since, data.period.until, SPIKE_THRESHOLD
    )
    rows = "".join(
        f"<tr><td>{esc(when(parse_iso(row['at'])))}</td>"
        f'<td><i class="h-{esc(row["hormone"])}"></i>{esc(row["hormone"])} {row["delta"]:+.2f}'
        f"</td><td>{esc(row['source'] or '')}</td><td>{esc(row['reason'] or '')}</td></tr>"
        for row in data.strongest
    )
    table = (
        "<details><summary>Strongest stimuli of the period</summary><table><tr><th>when</th>"
        f"<th>stimulus</th><th>from</th><th>why</th></tr>{rows}</table></details>"
        if rows
        else '<p class="muted">No stimuli in this period.</p>'
    )
    return (
        f'<section id="hormones"><h2>Hormones</h2><div class="legend">{legend}</div>'
        f"{chart}{table}</section>"
    )


def _dream_entry(dream: dict[str, Any], diff: str | None) -> str:
    at = dream_time(dream)
    tokens = dream_tokens(dream)
    head = (
        f'<span class="badge o-{esc(dream["outcome"])}">{esc(dream["outcome"])}</span> '
        f"<b>#{dream['id']}</b> {esc(when(at))} "
        f'<span class="m">· {tokens:,} tokens · {esc(money(dream["cost_usd"]))} · '
        f"{dream['revisions']} revision(s) · {dream['consumed']} consumed"
        f"{' · ' + esc(dream['synthesizer']) if dream.get('synthesizer') else ''}</span>"
    )
    reason = f'<p class="why">{esc(dream["reason"])}</p>' if dream.get("reason") else ""
    if diff:
        body = "".join(_diff_line(line) for line in diff.splitlines())
        inner = f"<pre>{body}</pre>"
    elif diff == "":
        inner = '<p class="why">MEMORY.md did not change.</p>'
    elif dream["has_text"]:
        inner = (
            '<p class="why">Its diff did not fit in this page: '
            f"<code>dream diff {dream['id']}</code></p>"
        )
    else:
        inner = '<p class="why">This dream wrote no candidate state.</p>'
    return (
        f'<details class="dream"><summary>{head}</summary>'
        f'<div id="dream-{dream["id"]}">{reason}{inner}</div></details>'
    )


def _diff_line(line: str) -> str:
    kind = (
        "h"
        if line.startswith("@@")
        else "a"
        if line.startswith("+") and not line.startswith("+++")
        else "d"
        if line.startswith("-") and not line.startswith("---")
        else ""
    )
    return f'<span class="{kind}">{esc(line)}\n</span>' if kind else esc(line) + "\n"


def dream_section(data: ReportData) -> str:
    """The dream timeline, the cost to date, and each dream with its diff."""
    dreams = data.dreams
    linked = {dream_id for dream_id, text in data.diffs.items() if text}
    in_period = sum(float(d["cost_usd"] or 0) for d in dreams)
    before = max(0.0, float(data.totals.get("cost_usd") or 0) - in_period)
    legend = "".join(
        f'<span><i class="o-{o}"></i>{o}</span>'
        for o in svg.OUTCOMES
        if any(d["outcome"] == o for d in dreams)
    )
    parts = [
        '<section id="dreams"><h2>Dreams</h2>',
        f'<div class="legend">{legend}<span>dot size: tokens · tap a dot for its diff</span></div>'
        if dreams
        else '<p class="muted">No dreams in this period.</p>',
        svg.dream_chart(dreams, linked, data.period.since, data.period.until),
    ]
    if any(d["cost_usd"] for d in dreams) or before:
        parts.append('<h3 class="sub">LLM cost to date</h3>')
        parts.append(svg.cost_chart(dreams, before, data.period.since, data.period.until))
    else:
        parts.append(
            '<p class="muted">No LLM cost in this period: dreams were written offline.</p>'
        )
    listed = [d for d in dreams if d["outcome"] != "skipped"]
    skipped = len(dreams) - len(listed)
    shown = list(reversed(listed))[:LISTED_DREAMS]
    parts.append(
        f'<p class="muted">{plural(len(listed), "dream")} wrote or tried a state'
        + (f"; {skipped:,} skipped (too few new notes)" if skipped else "")
        + (f"; the newest {len(shown)} are listed" if len(shown) < len(listed) else "")
        + ".</p>"
    )
    parts.extend(_dream_entry(d, data.diffs.get(d["id"])) for d in shown)
    parts.append("</section>")
    return "".join(parts)


def lifecycle_section(data: ReportData) -> str:
    """Crystals created, consolidated, archived and frozen over time."""
    legend = "".join(
        f'<span><i class="l-{event}"></i>{label}</span>' for event, label in svg.LIFECYCLE_ROWS
    )
    unit = "day" if data.lifecycle_days == 1 else "week"
    chart = svg.lifecycle_chart(
        data.lifecycle, data.lifecycle_days, data.period.since, data.period.until
    )
    return (
        f'<section id="crystals"><h2>Crystal lifecycle</h2><div class="legend">{legend}'
        f"<span>per {unit}, each row on its own scale</span></div>{chart}</section>"
    )


def pointer_section(data: ReportData) -> str:
    """The crystal pointers of MEMORY.md, each with whether it still retrieves."""
    if not data.pointers:
        body = '<p class="muted">MEMORY.md has no crystal pointers yet.</p>'
    else:
        rows = "".join(
            f"<tr><td>{esc(p.topic)}</td><td><code>{esc(p.keywords)}</code></td>"
            + (
                '<td class="ok" data-retrieves="yes">✓ retrieves</td>'
                if p.retrieves
                else '<td class="no" data-retrieves="no">✗ finds nothing</td>'
            )
            + "</tr>"
            for p in data.pointers
        )
        body = f"<table><tr><th>topic</th><th>search</th><th>leads?</th></tr>{rows}</table>"
    return f'<section id="pointers"><h2>Crystal pointers</h2>{body}</section>'


def memory_section(data: ReportData) -> str:
    """MEMORY.md as it is now, rendered."""
    body = (
        to_html(data.memory_md)
        if data.memory_md.strip()
        else '<p class="muted">No MEMORY.md yet: the first dream writes it.</p>'
    )
    return f'<section id="memory"><h2>MEMORY.md</h2><div class="memory">{body}</div></section>'


def render(data: ReportData) -> str:
    """The whole page."""
    period = f"{when(data.period.since)} – {when(data.period.until)}"
    nav = "".join(
        f'<a href="#{anchor}">{label}</a>'
        for anchor, label in (
            ("hormones", "Hormones"),
            ("dreams", "Dreams"),
            ("crystals", "Crystals"),
            ("pointers", "Pointers"),
            ("memory", "MEMORY.md"),
        )
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>dreamer report · {esc(data.workspace)}</title>"
        f"<style>{STYLE}</style></head><body><main>"
        "<header><h1>dreamer · memory report</h1>"
        f"<p>{esc(data.workspace)}</p><p>{esc(period)}</p></header>"
        f"<nav>{nav}</nav>"
        f"{summary(data)}{hormone_section(data)}{dream_section(data)}{lifecycle_section(data)}"
        f"{pointer_section(data)}{memory_section(data)}"
        f"<footer>Written by <code>dream report</code> at {esc(when(data.now))}. "
        "This page needs no network.</footer>"
        "</main></body></html>\n"
    )
