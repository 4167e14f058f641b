"""Commands that run dreamer by itself: serve, tick, status, consolidate, hormones, feel."""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path

import click

from dreamer.cli.common import (
    emit_json,
    interval_options,
    json_option,
    open_workspace,
    workspace_option,
)
from dreamer.config import DEFAULT_WARM_MINUTES, HORMONES, MAX_WARM_MINUTES
from dreamer.dream import journal
from dreamer.dream.synth.factory import explain
from dreamer.errors import EXIT_ERROR, EXIT_OK, exit_code
from dreamer.memory import hormone_summary
from dreamer.memory import hormones as hormone_levels
from dreamer.service import schedule as scheduler
from dreamer.service.serve import Service
from dreamer.support import search_wire
from dreamer.support.times import utc_now


def _log_to_stderr(verbose: bool) -> None:
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("apscheduler").setLevel(logging.INFO if verbose else logging.WARNING)


@click.command()
@click.option(
    "-w",
    "--workspace",
    "workspaces",
    multiple=True,
    type=click.Path(file_okay=False, path_type=str),
    envvar="DREAM_WORKSPACE",
    help="A workspace folder; repeat for several [default: $DREAM_WORKSPACE, "
    "else the current folder].",
)
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    help="Seconds a running job gets to finish after SIGINT/SIGTERM.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Jobs run at once, whatever the number of workspaces (each holds a few open files).",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Log APScheduler's own messages, and each search the door answers or declines, too.",
)
@click.option(
    "--report-every",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Rewrite <workspace>/memory/report.html (see 'dream report') after every N dreams "
    "that ran (skips do not count); 0 never.",
)
@click.option(
    "--no-door",
    is_flag=True,
    help="Do not answer 'dream search' of this user over the search door (a Unix socket in "
    "$XDG_RUNTIME_DIR/dreamer/, else in dreamer's cache folder); each search then runs in "
    "its own process.",
)
@interval_options
def serve(
    workspaces: tuple[str, ...],
    grace: float,
    workers: int,
    verbose: bool,
    report_every: int,
    no_door: bool,
    dream_interval_minutes: float | None,
    consolidation_interval_minutes: float | None,
) -> None:
    """Run consolidation and dreams on schedule until stopped (Ctrl-C or SIGTERM).

    Per workspace: a consolidation every memory.consolidation.intervalMinutes and a dream
    every memory.dream.intervalMinutes (none when memory.dream.enabled is false), each at a
    stable offset within its interval so many workspaces do not start together. The
    schedule continues from the journal after a restart and counts runs by 'dream tick',
    'dream run' or another serve. Every run is logged to stderr and to the runs table
    (see 'dream status').

    It also opens the search door: a fresh 'dream search' by the same user hands its query
    to this process, which has the embedder loaded, searches with that command's own
    settings and answers exactly what it would print by itself, several times sooner.
    Without a serve, or with another dreamer version, a search runs by itself: same output.

    \b
    Examples:
      dream serve -w ~/agents/ada
      dream serve -w ~/agents/ada --no-door    (every 'dream search' runs by itself)
      dream serve -w ~/agents/ada -w ~/agents/bob
      dream serve $(printf -- '-w %s ' ~/agents/*) --workers 8
      dream serve -w /tmp/try --consolidation-interval 0.1 --dream-interval 0.5
      dream serve -w ~/agents/ada --report-every 1    (a fresh report after each dream)
    """
    _log_to_stderr(verbose)
    overrides = {
        "dream_interval_minutes": dream_interval_minutes,
        "consolidation_interval_minutes": consolidation_interval_minutes,
    }
    roots = []
    for path in workspaces or (None,):
        with open_workspace(path, create=False, overrides=overrides) as ws:
            ws.init()
            roots.append(ws.root)
    service = Service(
        roots,
        grace_seconds=grace,
        overrides=overrides,
        report_every=report_every,
        workers=workers,
        door=None if no_door else search_wire.socket_path(),
    )
    sys.exit(service.serve())


@click.command("door")
@click.option(
    "-w",
    "--workspace",
    "workspaces",
    multiple=True,
    type=click.Path(file_okay=False, path_type=str),
    envvar="DREAM_WORKSPACE",
    help="Load this workspace's embedder before the first search (repeatable; the door "
    "answers searches of any workspace of this user either way) [default: $DREAM_WORKSPACE].",
)
@click.option(
    "--idle-minutes",
    type=click.FloatRange(min=0, max=MAX_WARM_MINUTES),
    default=DEFAULT_WARM_MINUTES,
    show_default=True,
    help="Leave after this long without a search; 0 stays until stopped.",
)
@click.option("--stop", is_flag=True, help="Ask the door a search left open to leave, and exit.")
@click.option("-v", "--verbose", is_flag=True, help="Log each search answered or declined.")
@click.option("--background", is_flag=True, hidden=True)  # how 'dream search' starts one
def door_command(
    workspaces: tuple[str, ...], idle_minutes: float, stop: bool, verbose: bool, background: bool
) -> None:
    """Answer this user's 'dream search' from one warm process until idle.

    A fresh 'dream search' spends most of its time loading numpy and the embedder. Without a
    'dream serve' (whose door does this), a search that ran by itself starts this door in the
    background for memory.search.warmMinutes (0 turns that off), so the searches after it
    are answered several times sooner, each exactly as it would answer itself. The door
    leaves when idle, when another dreamer version asks (the next search starts a current
    one), when 'dream serve' starts (serve opens its own) and on --stop, Ctrl-C or SIGTERM.
    A door started by a search logs to door.log beside its socket.

    \b
    Examples:
      dream door                        (in the foreground, until idle for 15 minutes)
      dream door -w ~/agents/ada --idle-minutes 0 -v
      dream door --stop
      DREAM_SEARCH_WARM_MINUTES=0 dream search "editor theme"   (leaves no door)
    """
    from dreamer.service import search_server as search_door

    path = search_wire.socket_path()
    if stop:
        said = search_door.stop(path)
        click.echo(said[0].upper() + said[1:] + ".")
        return
    if background:
        _detach(path.parent / "door.log")
    else:
        _log_to_stderr(verbose)
    roots = [Path(workspace).expanduser().resolve() for workspace in workspaces]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # closes the door on the way out
    why = search_door.keep_open(path, idle=idle_minutes * 60, warm=roots)
    if why is None and not background:
        sys.exit(1)  # it logged why (another process answers there, or no door here)


def _detach(log_file: Path) -> None:
    """A door started by a search: no inherited descriptor kept, no working folder held,
    warnings and its comings and goings logged to ``log_file`` (kept under 256 KiB)."""
    import logging.handlers
    import os

    for fd in range(3, 256):
        try:
            if os.get_inheritable(fd):  # what dreamer opens itself is never inheritable
                os.close(fd)
        except OSError:
            continue
    os.chdir("/")
    handler = logging.handlers.RotatingFileHandler(
        log_file, maxBytes=256 * 1024, backupCount=1, delay=True, encoding="utf-8"
    )
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    )
    logging.basicConfig(level=logging.INFO, handlers=[handler])


@click.command()
@interval_options
@json_option
@workspace_option
def tick(
    dream_interval_minutes: float | None,
    consolidation_interval_minutes: float | None,
    as_json: bool,
    workspace: str | None,
) -> None:
    """Run whatever is due now (consolidation, dream) and exit; for cron.

    Safe alongside 'dream serve': the workspace lock decides, and a dream that is already
    running is reported as skipped. Exit codes: 0 ok (or nothing due), 1 a job failed,
    3 the dream was rejected by the guards.

    \b
    Examples:
      dream tick -w ~/agents/ada
      */5 * * * * dream tick -w ~/agents/ada   (a crontab line)
    """
    overrides = {
        "dream_interval_minutes": dream_interval_minutes,
        "consolidation_interval_minutes": consolidation_interval_minutes,
    }
    with open_workspace(workspace, create=False, overrides=overrides) as ws:
        now = utc_now()
        runs = scheduler.run_due(ws, now)
        upcoming = [state for state in scheduler.job_states(ws, now) if state.enabled]
    if as_json:
        emit_json([run.to_dict() for run in runs])
    elif not runs:
        click.echo(
            "Nothing due; next "
            + ", ".join(f"{state.job} at {state.to_dict()['next_at']}" for state in upcoming)
            + "."
        )
    else:
        for run in runs:
            click.echo(f"{run.job}: {run.outcome} ({run.detail})")
    sys.exit(max((exit_code(run.outcome) for run in runs), default=EXIT_OK))


@click.command()
@json_option
@workspace_option
def consolidate(as_json: bool, workspace: str | None) -> None:
    """Run one consolidation tick now: hormone decay, spike notes, crystal lifecycle.

    \b
    Example:
      dream consolidate -w ~/agents/ada
    """
    with open_workspace(workspace, create=False) as ws:
        now = utc_now()
        scheduler.ensure_migrated(ws, now)
        run = scheduler.run_job(ws, "consolidate", now)
    if as_json:
        emit_json(run.to_dict())
    else:
        click.echo(f"Consolidation {run.outcome}: {run.detail}")
    sys.exit(exit_code(run.outcome))


def _when(value: str | None) -> str:
    return value or "never"


@click.command()
@click.option(
    "--check",
    is_flag=True,
    help="Print only what needs attention, one line each, and exit 1 when anything does "
    "(0 when all is well): for a monitor or a cron job.",
)
@json_option
@workspace_option
def status(check: bool, as_json: bool, workspace: str | None) -> None:
    """Show last and next consolidation and dream, pending notes, crystals and hormones.

    The health (with --json, the "health" object) says what needs attention: capture or
    dreaming that stopped, a stuck scheduled job, items held for you to accept, forget
    requests waiting for a yes, a spending cap reached. With --check only that, and the exit
    code: 1 when anything needs attention, else 0.

    \b
    Examples:
      dream status
      dream status --json -w ~/agents/ada
      dream status --check || notify-send "dreamer needs attention"
    """
    with open_workspace(workspace, create=False) as ws:
        info = scheduler.status(ws, utc_now())
        backend, why = ws.settings.synthesis()
        info["synthesizer"] = {
            "name": backend,
            "model": ws.settings.model_for(backend),
            "why": why,
            "says": explain(ws.settings),
        }
    health = info["health"]
    if as_json:
        emit_json(info)
    elif check:
        for line in health["reasons"]:
            click.echo(line)
    if as_json or check:
        sys.exit(EXIT_ERROR if check and health["status"] != "ok" else EXIT_OK)
    click.echo(f"Workspace: {info['workspace']}")
    click.echo(f"Next dream written by: {info['synthesizer']['says']}")
    for line in health["reasons"]:
        click.echo(f"Health: {line}")
    for job, state in info["jobs"].items():
        if not state["enabled"]:
            click.echo(f"{job:<12} disabled (memory.dream.enabled = false)")
            continue
        last = _when(state["last_at"])
        if state["last_outcome"]:
            last += f" ({state['last_outcome']}: {state['last_detail']})"
        click.echo(
            f"{job:<12} {state['schedule']}; last {last}; next {', '.join(state['next_runs'])}"
        )
    for job, counts in info["runs_last_day"].items():
        click.echo(
            f"{job:<12} last 24 h: "
            + ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        )
    click.echo(
        f"Scratch: {info['scratch_notes']} notes; {info['pending_for_dream']} waiting "
        f"for a dream (needs {info['min_chunks_for_dream']})"
    )
    click.echo("Crystals: " + ", ".join(f"{n} {stage}" for stage, n in info["crystals"].items()))
    click.echo(
        "Hormones: "
        + ", ".join(f"{name} {level:.2f}" for name, level in info["hormones"].items())
        + f" ({info['mood']})"
    )
    dream = info["last_dream"]
    if dream is None:
        click.echo("Last dream: none yet")
    else:
        cost = f"${dream['cost_usd']:.4f}" if dream.get("cost_usd") else "$0"
        click.echo(
            f"Last dream: #{dream['id']} {dream['outcome']} at {dream['started_at']} "
            f"({dream['reason']}); cost {cost}"
        )
    for period, spend in (info["spending"] or {}).items():
        caps = [f"${spend['usd_cap']:g}"] if spend["usd_cap"] is not None else []
        if spend["tokens_cap"] is not None:
            caps.append(f"{spend['tokens_cap']} tokens")
        click.echo(
            f"Spending this {period}: ${spend['usd']:.4f}, {spend['tokens']} tokens; cap "
            + (" and ".join(caps) or "none")
            + f" (resets {spend['resets_at']})"
        )
    spent = info["llm_to_date"]
    cached = spent["cache_read_tokens"] + spent["cache_write_tokens"]
    click.echo(
        f"LLM to date: ${spent['cost_usd']:.4f} over {journal.plural(spent['dreams'], 'dream')} "
        f"({journal.input_tokens(spent)} input, "
        + (f"{cached} of them from the prompt cache; " if cached else "")
        + f"{spent['output_tokens']} output tokens)"
    )


@click.command()
@json_option
@workspace_option
def retry(as_json: bool, workspace: str | None) -> None:
    """Run a failed or stuck job again, once, and report how it went.

    What it runs: a scheduled job that was interrupted or overran, or a consolidation that
    failed; else the newest dream when it failed or was rejected (as 'dream run --force':
    its notes are back in the scratch). With nothing to retry it says so and exits 0.
    Exit codes as 'dream run': 0 committed, done or skipped, 1 failed, 3 rejected,
    4 deferred.

    \b
    Examples:
      dream retry
      dream status --check || dream retry -w ~/agents/ada
    """
    with open_workspace(workspace, create=False) as ws:
        done = scheduler.retry(ws, utc_now())
    if done is None:
        if as_json:
            emit_json({"retried": None})
        else:
            click.echo("Nothing to retry: no job failed or is stuck.")
        return
    why, run = done
    if as_json:
        emit_json({"retried": why, **run.to_dict()})
    else:
        click.echo(f"Retried {why}.")
        click.echo(f"{run.job}: {run.outcome} ({run.detail})")
    sys.exit(exit_code(run.outcome))


@click.command(name="hormones")
@click.option(
    "--history",
    "limit",
    type=click.IntRange(min=0),
    default=5,
    show_default=True,
    help="How many recent stimuli to list.",
)
@json_option
@workspace_option
def hormones_command(limit: int, as_json: bool, workspace: str | None) -> None:
    """Show the hormone levels now (decayed toward rest), the mood, and recent stimuli.

    \b
    Examples:
      dream hormones
      dream hormones --json --history 20
    """
    with open_workspace(workspace, create=False) as ws:
        now = utc_now()
        levels = hormone_levels.levels(ws, now)
        recent = hormone_levels.history(ws, limit, stimuli_only=True)
    if as_json:
        emit_json({"levels": levels, "mood": hormone_summary.mood(levels), "history": recent})
        return
    for name in HORMONES:
        click.echo(f"{name:<9} {levels[name]:.2f} {'#' * round(levels[name] * 20)}")
    click.echo(f"mood: {hormone_summary.mood(levels)}")
    for row in recent:
        click.echo(
            f"  {row['at']}  {row['hormone']} {row['delta']:+.2f}  ({row['source']}) "
            f"{row['reason']}"
        )


@click.command(context_settings={"ignore_unknown_options": True})  # lets DELTA be negative
@click.argument("hormone", type=click.Choice(HORMONES))
@click.argument("delta", type=float)
@click.option("--reason", default="", help="Why, in a few words (shown in spike notes).")
@workspace_option
def feel(hormone: str, delta: float, reason: str, workspace: str | None) -> None:
    """Apply a stimulus: change HORMONE by DELTA (from -1 to 1; the level stays within 0..1).

    \b
    Examples:
      dream feel dopamine 0.4 --reason "shipped the release"
      dream feel cortisol -0.2 --reason "incident resolved"
    """
    with open_workspace(workspace) as ws:
        ws.init()
        levels = hormone_levels.feel(ws, hormone, delta, reason, utc_now(), source="cli")
    click.echo(
        ", ".join(f"{name} {level:.2f}" for name, level in levels.items())
        + f" ({hormone_summary.mood(levels)})"
    )
