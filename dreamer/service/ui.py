"""``dream ui``: a page on 127.0.0.1 to look at the memory and act on it.

Built on the standard library's ``http.server``: the page is one user's, on the loopback
interface, a dozen small JSON routes and three static files, so a web framework and an ASGI
server would add dependencies and start-up for nothing the page needs.

Only the same user gets in. The server listens on 127.0.0.1 alone; the URL ``dream ui`` prints
carries a random token (``secrets.token_urlsafe``), and every request but the static files must
carry it: the page in its query, the page's own calls in an ``X-Dream-Token`` header. A
request without it, or with another, is refused (403). Every change is a POST of JSON; any
other method on a change is refused (405). Nothing is shared across origins: no CORS header is
ever sent (a cross-origin page cannot send the token header or a JSON POST without a preflight
that is never granted), a request whose ``Host`` is not this server (DNS rebinding) or whose
``Origin`` is another site is refused, no cookie is set, and each answer forbids framing,
caching and referrers.

Each request opens the workspace, acts through the core functions the CLI calls (the same
locks, guards, journal and redaction; ``dreamer.service.ui_actions``), and closes it, so the
page holds no database open between requests (a forget elsewhere can purge the file). Requests
run one at a time. A change that needs the workspace lock while a dream holds it fails at once
with the lock's message ("dream already running ..."), never waits.
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import threading
from collections.abc import Callable
from datetime import datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from dreamer.errors import (
    CandidateStale,
    DreamError,
    DreamRejected,
    LeaseLost,
    LockHeld,
    UsageError,
)
from dreamer.memory.workspace import Workspace

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
TOKEN_HEADER = "X-Dream-Token"
MAX_BODY = 1_000_000  # bytes: an edit or a list of ids, never a document
IDLE_SECONDS = 30  # a connection that sends nothing (a browser's spare one) is closed
PAGE_DIR = Path(__file__).resolve().parent / "ui_page"
STATIC = {
    "/ui.js": ("ui.js", "text/javascript; charset=utf-8"),
    "/ui.css": ("ui.css", "text/css; charset=utf-8"),
}
HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
    "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'",
}
CONFLICTS = (LockHeld, CandidateStale, DreamRejected, LeaseLost)

Route = Callable[["Request"], Any]


class Request:
    """One call of the page: its workspace, its JSON body or query, and the moment."""

    def __init__(self, ws: Workspace, body: dict[str, Any], query: dict[str, str], now: datetime):
        self.ws, self.body, self.query, self.now = ws, body, query, now

    def text(self, name: str) -> str:
        """A text field of the body or query, else UsageError."""
        value = self.body.get(name, self.query.get(name))
        if not isinstance(value, str):
            raise UsageError(f"{name} is missing or not text")
        return value

    def number(self, name: str) -> int:
        """A whole-number field of the body or query, else UsageError."""
        value = self.body.get(name, self.query.get(name))
        if isinstance(value, str) and value.isdecimal() and value.isascii():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise UsageError(f"{name} is missing or not a whole number")
        return value


def _reads() -> dict[str, Route]:
    from dreamer.service import ui_data

    return {
        "/api/overview": lambda r: ui_data.overview(r.ws, r.now),
        "/api/search": lambda r: ui_data.found(r.ws, r.text("q"), r.now),
        "/api/sources": lambda r: ui_data.sources(r.ws, r.number("line"), r.now),
    }


def _changes() -> dict[str, Route]:
    from dreamer.dream import pins, review
    from dreamer.memory import held
    from dreamer.service import ui_actions

    def adopt(r: Request) -> dict[str, Any]:
        return {"journal": review.adopt(r.ws, r.now)}

    def discard(r: Request) -> dict[str, Any]:
        dream_id, returned = review.discard(
            r.ws, r.now, return_notes=bool(r.body.get("return_notes"))
        )
        return {"dream_id": dream_id, "returned": returned}

    return {
        "/api/edit": lambda r: {
            "line": ui_actions.edit_line(r.ws, r.number("line"), r.text("before"), r.text("after"))
        },
        "/api/pin": lambda r: {"id": pins.pin(r.ws, r.text("text"), r.now)},
        "/api/unpin": lambda r: {"id": pins.unpin(r.ws, r.number("id"), r.now).id},
        "/api/forget/preview": lambda r: ui_actions.preview(
            r.ws, r.body.get("ids"), r.body.get("query")
        ),
        "/api/forget": lambda r: ui_actions.forget(r.ws, r.body.get("ids") or [], r.now),
        "/api/held/accept": lambda r: held.accept(r.ws, r.number("id"), now=r.now).to_dict(),
        "/api/adopt": adopt,
        "/api/discard": discard,
    }


class MemoryPage(ThreadingHTTPServer):
    """The running page: one workspace, one token, requests answered one at a time."""

    # An idle connection (a browser's spare one) must not hold Ctrl-C up; a request in
    # progress is waited for by ``stop``.
    daemon_threads = True

    def __init__(
        self,
        root: Path,
        *,
        port: int = 0,
        clock: Callable[[], datetime],
        token: str | None = None,
    ):
        self.root = root
        self.clock = clock
        self.token = token or secrets.token_urlsafe(32)
        self.turn = threading.Lock()
        self.embedder: Any = None  # see answer
        self.reads, self.changes = _reads(), _changes()
        try:
            super().__init__((HOST, port), Handler)
        except OSError as e:
            raise UsageError(
                f"cannot listen on {HOST}:{port} ({e.strerror}); pick another --port, or "
                "--port 0 for a free one"
            ) from e

    @property
    def port(self) -> int:
        """The port listened on (the one chosen when asked for 0)."""
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The page's address, token included."""
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def hosts(self) -> set[str]:
        """The Host values this server answers to."""
        return {f"{HOST}:{self.port}", f"localhost:{self.port}"}

    def answer(self, route: Route, body: dict[str, Any], query: dict[str, str]) -> Any:
        """Run a route on a freshly opened workspace, one request at a time."""
        with self.turn:
            ws = Workspace.open(self.root, create=False, embedder=self.embedder)
            try:
                # Loaded once, by the first request, and lent to every later one: a search
                # from the page never waits for the embedder again.
                self.embedder = ws.embedder
                return route(Request(ws, body, query, self.clock()))
            finally:
                ws.close()

    def stop(self) -> None:
        """Stop listening, and let a request in progress finish first."""
        self.server_close()
        self.turn.acquire()  # held for good: no request starts after this


class Handler(BaseHTTPRequestHandler):
    """Routes a request after the host, origin and token checks."""

    server: MemoryPage
    timeout = IDLE_SECONDS
    server_version = "dreamer-ui"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        log.debug("%s " + format, self.address_string(), *args)

    # --- checks -----------------------------------------------------------------------------

    def _allowed(self, query: dict[str, str]) -> bool:
        """Whether this request comes from the page: right host, same origin, the token."""
        if self.headers.get("Host", "") not in self.server.hosts():
            return False
        origin = self.headers.get("Origin")
        if origin is not None and origin.removeprefix("http://") not in self.server.hosts():
            return False
        given = self.headers.get(TOKEN_HEADER) or query.get("token") or ""
        return hmac.compare_digest(given.encode(), self.server.token.encode())

    # --- methods ----------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path, query = self._split()
        if path in STATIC:
            name, kind = STATIC[path]
            self._send(HTTPStatus.OK, (PAGE_DIR / name).read_bytes(), kind)
            return
        if path not in ("/", *self.server.reads, *self.server.changes):
            self._error(HTTPStatus.NOT_FOUND, f"no page at {path}")
            return
        if not self._allowed(query):
            self._refused()
            return
        if path == "/":
            page = (PAGE_DIR / "index.html").read_bytes()
            self._send(HTTPStatus.OK, page, "text/html; charset=utf-8")
        elif path in self.server.changes:
            self._error(HTTPStatus.METHOD_NOT_ALLOWED, "a change is a POST", allow="POST")
        else:
            self._run(self.server.reads[path], {}, query)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        path, query = self._split()
        if path not in self.server.changes and path not in self.server.reads and path != "/":
            self._error(HTTPStatus.NOT_FOUND, f"no page at {path}")
            return
        if not self._allowed({}):  # a change carries the token in its header, never the URL
            self._refused()
            return
        if path not in self.server.changes:
            self._error(HTTPStatus.METHOD_NOT_ALLOWED, "only changes are POSTed", allow="GET")
            return
        body = self._body()
        if body is not None:
            self._run(self.server.changes[path], body, query)

    def _other(self) -> None:
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, "the page answers GET and POST only")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _other  # noqa: N815 - http.server's names

    # --- answering --------------------------------------------------------------------------

    def _split(self) -> tuple[str, dict[str, str]]:
        parts = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        return parts.path, query

    def _body(self) -> dict[str, Any] | None:
        """The JSON object POSTed, or None once a 4xx has been sent."""
        if self.headers.get_content_type() != "application/json":
            self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "a change is sent as application/json")
            return None
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self._error(HTTPStatus.BAD_REQUEST, f"a change is 0 to {MAX_BODY} bytes of JSON")
            return None
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        if not isinstance(body, dict):
            self._error(HTTPStatus.BAD_REQUEST, "a change is a JSON object")
            return None
        return body

    def _run(self, route: Route, body: dict[str, Any], query: dict[str, str]) -> None:
        try:
            result = self.server.answer(route, body, query)
        except UsageError as e:
            self._error(HTTPStatus.BAD_REQUEST, str(e))
        except CONFLICTS as e:
            self._error(HTTPStatus.CONFLICT, str(e))
        except DreamError as e:
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, str(e))
        except Exception as e:  # the page says it; the terminal keeps the traceback
            log.exception("dream ui: %s failed", self.path)
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"{type(e).__name__}: {e}")
        else:
            self._json(HTTPStatus.OK, result)

    def _refused(self) -> None:
        self._error(
            HTTPStatus.FORBIDDEN,
            "refused: open the page with the link 'dream ui' printed (it carries the token)",
        )

    def _error(self, status: HTTPStatus, message: str, *, allow: str | None = None) -> None:
        self._json(status, {"error": message}, allow=allow)

    def _json(self, status: HTTPStatus, value: Any, *, allow: str | None = None) -> None:
        data = json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
        self._send(status, data, "application/json; charset=utf-8", allow=allow)

    def _send(
        self, status: HTTPStatus, data: bytes, kind: str, *, allow: str | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        if allow:
            self.send_header("Allow", allow)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
