"""Commands that keep the user in control: review, adopt, discard; pin, unpin, pins; held."""

from __future__ import annotations

import click

from dreamer.cli.common import emit_json, json_option, open_workspace, workspace_option
from dreamer.dream import pins, review
from dreamer.errors import CrystalNotFound
from dreamer.memory import held
from dreamer.support.times import utc_now


@click.command(name="review")
@workspace_option
def review_command(workspace: str | None) -> None:
    """Show the candidate a dream wrote in review mode, as a diff from MEMORY.md.

    Review mode is memory.dream.review = true: a dream writes memory/MEMORY.candidate.md and
    leaves MEMORY.md alone until 'dream adopt'.

    \b
    Example:
      dream review -w ~/agents/ada
    """
    with open_workspace(workspace, create=False) as ws:
        if review.waiting(ws) is None:
            click.echo("No candidate waits; with memory.dream.review = true a dream writes one.")
            return
        click.echo(review.show(ws), nl=False)


@click.command(name="adopt")
@workspace_option
def adopt_command(workspace: str | None) -> None:
    """Commit the waiting candidate to MEMORY.md, through the same guards as a dream.

    Refuses, changing nothing, when MEMORY.md was edited after the candidate was written.
    The candidate may be edited by hand before adopting.

    \b
    Example:
      dream adopt -w ~/agents/ada
    """
    with open_workspace(workspace, create=False) as ws:
        row = review.adopt(ws, utc_now())
    click.echo(f"Adopted the candidate: MEMORY.md rewritten (journal #{row}).")


@click.command(name="discard")
@click.option(
    "--return-notes",
    is_flag=True,
    help="Also put the notes the candidate consumed back in front of the next dream.",
)
@workspace_option
def discard_command(return_notes: bool, workspace: str | None) -> None:
    """Drop the waiting candidate; MEMORY.md stays as it is.

    The notes it consumed stay searchable crystals; --return-notes lets the next dream take
    them again.

    \b
    Examples:
      dream discard
      dream discard --return-notes
    """
    with open_workspace(workspace, create=False) as ws:
        dream_id, returned = review.discard(ws, utc_now(), return_notes=return_notes)
    line = f"Discarded the candidate of dream #{dream_id}."
    if return_notes:
        line += f" {returned} notes wait for the next dream."
    click.echo(line)


@click.command(name="pin")
@click.argument("fact")
@workspace_option
def pin_command(fact: str, workspace: str | None) -> None:
    """Pin a fact every dream must keep; a dream that drops or contradicts it is rejected.

    A MEMORY.md line ending in "(pinned)" is pinned the same way by the next dream.

    \b
    Example:
      dream pin "Maya's deadline for the Acme report is 2026-03-24"
    """
    with open_workspace(workspace, create=True) as ws:
        crystal_id = pins.pin(ws, fact, utc_now())
    click.echo(f"Pinned #{crystal_id}; 'dream unpin {crystal_id}' lets it go.")


@click.command(name="unpin")
@click.argument("pin_id", type=int)
@workspace_option
def unpin_command(pin_id: int, workspace: str | None) -> None:
    """Let a pinned fact go: it stays a searchable memory that dreams may fade.

    \b
    Example:
      dream unpin 42
    """
    with open_workspace(workspace, create=False) as ws:
        crystal = pins.unpin(ws, pin_id, utc_now())
    click.echo(f'Unpinned #{crystal.id}: "{crystal.text}".')


@click.command(name="pins")
@json_option
@workspace_option
def pins_command(as_json: bool, workspace: str | None) -> None:
    """List the pinned facts.

    \b
    Examples:
      dream pins
      dream pins --json
    """
    with open_workspace(workspace, create=False) as ws:
        found = pins.listed(ws)
    if as_json:
        emit_json([{"id": c.id, "text": c.text, "pinned_at": c.created_at} for c in found])
        return
    if not found:
        click.echo('No pinned facts; pin one with dream pin "…".')
        return
    for crystal in found:
        click.echo(f"#{crystal.id:<5} {crystal.text}")


@click.group(name="held", invoke_without_command=True)
@json_option
@workspace_option
@click.pass_context
def held_command(ctx: click.Context, as_json: bool, workspace: str | None) -> None:
    """List what is held: instruction-shaped words from a tool, page, file or other agent.

    Only the user's words set rules in MEMORY.md. A rule read in a README, a fetched page or
    another agent's output (or the agent's note repeating one) is kept as a held crystal,
    searchable, never promoted: accept it to make it your own word, or forget it.

    \b
    Examples:
      dream held
      dream held accept 42
      dream held forget 42
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = workspace
        return
    with open_workspace(workspace, create=False) as ws:
        found = held.held_items(ws)
    if as_json:
        emit_json([item.to_dict() for item in found])
        return
    if not found:
        click.echo("Nothing is held.")
        return
    for item in found:
        click.echo(f"#{item.id:<5} {item.text}")
        click.echo(
            f"       {item.reason}; 'dream held accept {item.id}' or 'dream held forget {item.id}'"
        )


@held_command.command(name="accept")
@click.argument("crystal_id", type=int)
@workspace_option
@click.pass_obj
def held_accept(given: str | None, crystal_id: int, workspace: str | None) -> None:
    """Accept a held item as your own word: the next dream reads it like a note.

    \b
    Example:
      dream held accept 42
    """
    with open_workspace(workspace or given, create=False) as ws:
        item = held.accept(ws, crystal_id, now=utc_now())
    click.echo(f'Accepted #{item.id}: "{item.text}"; the next dream reads it as yours.')


@held_command.command(name="forget")
@click.argument("crystal_id", type=int)
@workspace_option
@click.pass_obj
def held_forget(given: str | None, crystal_id: int, workspace: str | None) -> None:
    """Forget a held item for good, bytes included.

    \b
    Example:
      dream held forget 42
    """
    with open_workspace(workspace or given, create=False) as ws:
        if crystal_id not in {item.id for item in held.held_items(ws)}:
            raise CrystalNotFound(
                f"crystal {crystal_id} is not held; 'dream held' lists the held ones"
            )
        ws.forget([crystal_id], reason="a held item the user forgot", now=utc_now())
    click.echo(f"Forgot #{crystal_id}.")
