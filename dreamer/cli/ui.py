"""``dream ui``: the memory page on 127.0.0.1 (the server is dreamer.service.ui)."""

from __future__ import annotations

import sys

import click

from dreamer.cli.common import open_workspace, workspace_option
from dreamer.support.times import utc_now


@click.command(name="ui")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 to listen on; 0 picks a free one.",
)
@click.option(
    "--open/--no-open",
    "open_browser",
    default=None,
    help="Open the page in a browser [default: open when run from a terminal].",
)
@workspace_option
def ui(port: int, open_browser: bool | None, workspace: str | None) -> None:
    """Serve a page to look at the memory and act on it, until Ctrl-C.

    The page shows MEMORY.md line by line (edit a line, see the crystals nearest to it),
    search, pinned facts, the candidate a review-mode dream wrote (adopt or discard), what the
    last dreams removed or held back and why, held items and forget requests that wait for
    you, and what 'dream status' says. It pins, unpins and forgets (after showing exactly what
    goes) through the same code as the commands.

    Only you get in: it listens on 127.0.0.1 only, and the link it prints carries a random
    token that every request must bring; keep the link to yourself.

    \b
    Examples:
      dream ui
      dream ui --port 8765 --no-open -w ~/agents/ada
    """
    with open_workspace(workspace, create=False) as ws:
        root = ws.root
    from dreamer.service import ui as page_server  # the web server: only for this command

    page = page_server.MemoryPage(root, port=port, clock=utc_now)
    try:  # from here on, Ctrl-C stops the page cleanly, whenever it comes
        click.echo(f"The memory page of {root} is at:\n  {page.url}\nCtrl-C stops it.")
        if open_browser if open_browser is not None else sys.stdout.isatty():
            import webbrowser

            webbrowser.open(page.url)
        page.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        page.stop()
    click.echo("Stopped.")
