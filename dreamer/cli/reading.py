"""The bodies of ``dream search`` and ``dream hook``, which the fast path (``fast.py``) and
their click commands both run, and the JSON every command prints. Apart from ``fast.py``: a
note, the command run most, compiles none of it."""

from __future__ import annotations

import os
import sys

from dreamer.support.bounds import shown

TYPE_CHECKING = False  # as typing's, without importing typing (~2 ms of a fresh note)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from dreamer.memory.workspace import Workspace

    Echo = Callable[..., None]  # click.echo's signature: (message, *, err=False)


def search_in(
    ws: Workspace, query: str, limit: int, search_type: str, as_json: bool, echo: Echo
) -> None:
    """``dream search``: print the hits, or their JSON."""
    with ws:
        hits = ws.search(query, limit=limit, search_type=search_type)
    show_hits([hit.to_dict() for hit in hits], query, as_json, echo)


def show_hits(hits: list[dict[str, Any]], query: str, as_json: bool, echo: Echo) -> None:
    """Print search hits (``Hit.to_dict``s, searched here or by serve's search door)."""
    if as_json:
        echo(json_text(hits))
        return
    if not hits:
        echo(f"No memories match {query!r}.")
        return
    for hit in hits:
        echo(
            f"#{hit['id']}  score {hit['score']:.4f}  {hit['source']}/{hit['semantic_type']}  "
            f"{hit['created_at']}  [{hit['lifecycle']}]"
        )
        text = shown(hit["text"], f"dream get {hit['id']}")  # --json gives every hit whole
        echo("    " + text.replace("\n", "\n    "))


def hook_in(
    event: str, budget: float, recall: bool, background: bool, workspace: str | None
) -> int:
    """``dream hook``: the hook's exit code (always 0; see dreamer.agents.hooks)."""
    from dreamer.agents import hooks
    from dreamer.support.times import utc_now

    if workspace:
        os.environ["DREAM_WORKSPACE"] = workspace
    return hooks.run(
        event,
        sys.stdin,
        sys.stdout,
        utc_now(),
        budget=None if background else budget,
        recall=recall,
        background=background,
    )


def json_text(value: Any) -> str:
    """``value`` as the indented JSON the commands print (UTF-8 kept readable)."""
    import json  # here: only --json prints it

    return json.dumps(value, indent=2, ensure_ascii=False, default=str)
