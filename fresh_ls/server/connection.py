"""One client connection: a pygls language server bound to the shared engine.

Every connection (stdio, Unix socket, TCP) gets its own ``FreshServer`` (pygls keeps the
editor workspace and the writer per protocol instance) and all of them share one
``Engine``. Handlers only validate params and call the engine; the rules live in the core.

Two things pygls does not do and a wire contract needs: a request whose params fail to
structure is answered (pygls logs it and never replies, so a client would hang), and a
body that is not JSON gets a -32700 reply with a null id. Both are handled here, by
``dispatch_body``. Whatever needs pygls's private API goes through
``fresh_ls.server.pygls_adapter``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import json
import logging
import secrets
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import attrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from fresh_ls import __version__
from fresh_ls import protocol as P
from fresh_ls.core.jsonload import loads
from fresh_ls.engine.engine import Engine, ProjectDefaults
from fresh_ls.engine.wire import LEAVABLE, Encoded
from fresh_ls.errors import FreshError, InvalidParams, Unauthorized
from fresh_ls.framing import FrameError, FrameReader
from fresh_ls.server.documents import apply_change
from fresh_ls.server.lsp_converter import lsp_converter
from fresh_ls.server.pygls_adapter import AdaptedProtocol, read_loop

log = logging.getLogger(__name__)

#: What a client hears of a fault inside the server: never a traceback, a path or an
#: internal name; the server's log (stderr) has the details.
INTERNAL_MESSAGE = "internal error in the server; its log on stderr has the details"


@attrs.define
class RawRequest:
    """A request envelope whose params are already typed (or an InvalidParams to raise)."""

    id: Any
    method: str
    params: Any = None
    jsonrpc: str = "2.0"


@attrs.define
class RawNotification:
    method: str
    params: Any = None
    jsonrpc: str = "2.0"


@dataclass
class ConnectionInfo:
    engine: Engine
    name: str
    token: str | None  # required token, None for stdio
    on_exit: Callable[[], None]
    close: Callable[[], None]
    authorized: bool = False
    budget_bytes: int | None = None
    policy: P.Policy | None = None
    #: Per path, the stat this connection last handed to ``SourceTable.prepare`` (``_prepare``).
    prepared: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    #: ``engine.disk_events`` when this connection last stat-ed every file it prepared
    prepared_at: int = -1
    #: Keys of ``fresh/project`` answers this client does not read (``leaves_out``).
    project_leaves_out: frozenset[str] = frozenset()
    listener: Callable[[P.DidInvalidateParams], None] | None = None
    on_authorized: Callable[[], None] | None = None
    initialized: bool = False
    #: Requests and notifications take effect in the order sent (contract v1.1): each
    #: handler runs under this FIFO lock, in the order pygls made their tasks.
    order: asyncio.Lock = field(default_factory=asyncio.Lock)
    pending: int = 0
    room: asyncio.Event = field(default_factory=asyncio.Event)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait for this message's turn on the connection, counted while it waits."""
        self.pending += 1
        try:
            async with self.order:
                yield
        finally:
            self.pending -= 1
            self.room.set()


class FreshProtocol(AdaptedProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Requests answered before pygls loaded (``fresh_ls.server.handshake``), by id:
        #: the result sent. pygls's own answer to them is compared with it, never sent.
        self.answered_early: dict[Any, Any] = {}
        #: fresh-ls's own coroutine handlers by method, found once (``handle_message``).
        self._own_handlers: dict[str, Callable[[Any], Awaitable[Any]]] = {}
        #: Notification handlers still running: a task needs a reference while it runs.
        self._notifications: set[asyncio.Future[Any]] = set()

    def already_answered(self, msg_id: Any, value: Any, error: Any = None) -> bool:
        """Whether ``msg_id`` was answered early; if so, log how pygls's answer differs."""
        if msg_id not in self.answered_early:
            return False
        sent = self.answered_early.pop(msg_id)
        if error is not None:
            log.error(
                "initialize was answered before the server loaded, but the server refuses it: %s",
                getattr(error, "message", error),
            )
        elif value != sent:
            log.warning(
                "initialize was answered before the server loaded with %s; the server "
                "would have answered %s",
                json.dumps(sent),
                json.dumps(value),
            )
        return True

    @property
    def conn(self) -> ConnectionInfo:
        server: FreshServer = self.language_server
        return server.conn

    def structure_own(self, data: dict[str, Any]) -> Any:
        """fresh-ls's own methods with their params typed; unreadable params become the
        ``InvalidParams`` their handler raises, in its turn and after the token check."""
        method = data.get("method")
        if not (isinstance(method, str) and method in P.PARAMS):
            return None
        try:
            params: Any = P.parse(P.PARAMS[method], data.get("params"))
        except InvalidParams as exc:
            params = exc
        if "id" in data:
            return RawRequest(id=data["id"], method=method, params=params)
        return RawNotification(method=method, params=params)

    def answer(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """Every error answer leaves here without ``data`` (pygls puts a traceback there for
        internal errors) and an internal error says nothing of the server's insides."""
        if self.answered_early and self.already_answered(
            msg_id,
            None if result is None else json.loads(json.dumps(result, default=self.json_default)),
            error,
        ):
            return
        if error is not None:
            code = getattr(error, "code", -32603)
            message = getattr(error, "message", "") or ""
            if code == -32603 or not isinstance(message, str) or "Traceback" in message:
                message = INTERNAL_MESSAGE
            self.send_lsp_answer(msg_id, error=lsp.ResponseError(code=code, message=message))
            return
        if not isinstance(result, dict | list | Encoded):
            self.send_lsp_answer(msg_id, result)  # an LSP type: pygls's own hooks
            return
        # fresh-ls's own results are plain JSON (or already encoded): dump them once,
        # without pygls's cattrs walk over every value first.
        try:
            text = (
                result
                if isinstance(result, Encoded)
                else json.dumps(result, default=self.json_default)
            )
        except (TypeError, ValueError):
            log.exception("a result that cannot be encoded")
            self.answer(msg_id, error=lsp.ResponseError(code=-32603, message=""))
            return
        self.send_json_answer(msg_id, text)

    def handle_message(self, message: Any) -> None:
        """fresh-ls's own requests and notifications (typed by ``structure_own``) skip
        pygls's handling: its ``isinstance`` checks against runtime-checkable Protocols
        (15 us a message), its handler lookup, and for a request the task's done-callback
        that sent the answer one turn of the event loop after the handler ended
        (``serve_request`` answers from the task itself). A notification's handler runs in
        its own task, as pygls runs it. A server shutting down goes the full way (it answers
        or drops them), and so does a method without a handler of its own."""
        kind = type(message)
        if (kind is RawRequest or kind is RawNotification) and not (
            self.shut_down or self._shutdown
        ):
            handler = self._own_handlers.get(message.method)
            if handler is None:
                handler = self.user_handler(message.method)
                if handler is None or not inspect.iscoroutinefunction(handler):
                    super().handle_message(message)
                    return
                self._own_handlers[message.method] = handler
            ctx = contextvars.copy_context()
            if kind is RawRequest:
                ctx.run(self.serve_request, message.id, handler, message.params)
            else:
                task = ctx.run(asyncio.ensure_future, handler(message.params))
                self._notifications.add(task)
                task.add_done_callback(self._notifications.discard)
            return
        super().handle_message(message)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Any:
        conn = self.conn
        opts_raw = params.initialization_options
        if conn.initialized:
            # A second initialize changes nothing, and does not close an authorised
            # connection (a wrong token on it would otherwise end it).
            raise JsonRpcException(
                code=-32600,
                message="initialize: this connection is already initialized; send it once",
            )
        if conn.token is not None:
            # Any wrong token is -32013, whatever its JSON type (contract), before the
            # options are read: an unauthorised peer learns nothing from their checks.
            given = opts_raw.get("token") if isinstance(opts_raw, dict) else None
            if not isinstance(given, str) or not secrets.compare_digest(
                given.encode("utf-8", "surrogatepass"), conn.token.encode()
            ):
                asyncio.get_event_loop().call_later(0.1, conn.close)
                raise JsonRpcException(
                    code=Unauthorized.code,
                    message="initializationOptions.token: missing or wrong; read it from the "
                    "server's endpoint.json (mode 0600) in its state dir",
                )
        try:
            opts = P.parse(P.InitializationOptions, opts_raw, "initializationOptions")
        except InvalidParams as exc:
            raise JsonRpcException(code=exc.code, message=exc.message) from None
        conn.authorized = True
        conn.initialized = True
        if conn.on_authorized is not None:
            conn.on_authorized()
        conn.budget_bytes = opts.budget_bytes
        conn.policy = opts.policy
        conn.project_leaves_out = leaves_out(params.capabilities.experimental)
        return (yield from super().lsp_initialize(params))

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Any:
        """Apply incremental changes with LSP's own line ends. pygls splits lines with
        ``str.splitlines`` (which also breaks at form feeds, U+2028 and more), so an edit
        below such a character lands on the wrong line; it also clamps the positions of
        ``params`` in place, so the handler could not redo it right afterwards."""
        uri = params.text_document.uri
        if unquote(uri) not in self.workspace.text_documents:
            log.warning("textDocument/didChange for %s, which is not open: ignored", uri)
            return
        doc = self.workspace.get_text_document(uri)
        negotiated = self.workspace.position_encoding
        encoding = getattr(negotiated, "value", negotiated) or "utf-16"
        text = doc.source
        for change in params.content_changes:
            text = apply_change(text, change, str(encoding))
        self.workspace.put_text_document(
            lsp.TextDocumentItem(
                uri=uri,
                language_id=doc.language_id or "",
                version=params.text_document.version,
                text=text,
            )
        )
        if (handler := self.user_handler(lsp.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            # The text as of this message: the handler runs in its turn, maybe after later
            # changes already reached the workspace copy.
            yield handler, (params, text), None

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args: Any) -> Any:
        self.conn.on_exit()
        yield from ()


class FreshServer(LanguageServer):
    def __init__(self, conn: ConnectionInfo) -> None:
        self.conn = conn  # before pygls builds the protocol, which reads its properties
        super().__init__(
            "fresh-ls", __version__, protocol_cls=FreshProtocol, converter_factory=lsp_converter
        )
        register_features(self)

    @property
    def fresh_protocol(self) -> FreshProtocol:
        protocol = self.protocol
        assert isinstance(protocol, FreshProtocol)
        return protocol

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors the contract defines are answers, not faults: log only the rest."""
        code = getattr(error, "code", None)
        if isinstance(error, JsonRpcException) and code is not None and code > -32603:
            return
        log.error("request failed: %s", error, exc_info=error)


#: The experimental client capability (LSP's ``capabilities.experimental``) by which a
#: client says which keys of a ``fresh/project`` answer it does not read:
#: ``{"freshLs": {"projectLeavesOut": ["rendered"]}}``. Without it every answer is the
#: contract's whole shape; with it the keys named (of ``wire.LEAVABLE``) are left out, so a
#: client that rebuilds ``rendered`` from the entries does not decode every text twice.
EXPERIMENTAL_KEY = "freshLs"
LEAVES_OUT_KEY = "projectLeavesOut"


def leaves_out(experimental: Any) -> frozenset[str]:
    """The keys a client asked ``fresh/project`` answers to go without; names it cannot
    have meant (not in ``wire.LEAVABLE``) are ignored, so an answer is never slimmer than
    a client asked."""
    ours = experimental.get(EXPERIMENTAL_KEY) if isinstance(experimental, dict) else None
    names = ours.get(LEAVES_OUT_KEY) if isinstance(ours, dict) else None
    if not isinstance(names, list):
        return frozenset()
    return frozenset(n for n in names if isinstance(n, str) and n in LEAVABLE)


Handler = Callable[[Any], Awaitable[Any]]


def _guard(server: FreshServer, fn: Callable[[Any], Any]) -> Handler:
    """Turn engine errors into JSON-RPC errors, refuse unauthorised use, await results."""

    async def handler(params: Any) -> Any:
        conn = server.conn
        async with conn.turn():
            return await _run(conn, params)

    async def _run(conn: ConnectionInfo, params: Any) -> Any:
        try:
            if not conn.authorized:
                raise _refuse(conn)
            if isinstance(params, FreshError):
                raise params
            await _prepare(conn, params)
            result = fn(params)
            if asyncio.iscoroutine(result):
                result = await result
            return result
        except FreshError as exc:
            raise JsonRpcException(code=exc.code, message=exc.message) from None
        except JsonRpcException:
            raise
        except Exception:
            log.exception("request failed")
            raise JsonRpcException(code=-32603, message=INTERNAL_MESSAGE) from None

    return handler


async def _prepare(conn: ConnectionInfo, params: Any) -> None:
    """Parse off the event loop what this request will read: the file it names, or the
    files of every view (``SourceTable.prepare``), so one slow parse stalls no other
    client. Requests only: a notification must take effect without an await before it,
    since its sender may close the connection right after it (a hook's ``didWrite``), and
    the close cancels a handler waiting at an await; notifications parse within the budget.

    Only files whose stat changed since this connection last prepared them go to the
    worker thread (``conn.prepared``): with nothing changed, a request of 500 views over 100
    files paid a thread hop and a second no-follow open of every file (1-7 ms) to parse
    nothing. This is only about where a parse runs: the engine checks every file against
    the disk itself, so a change a stat cannot see is still read, on the loop's thread.

    While the root's watcher runs and has reported no change since this connection's last
    look (``engine.disk_events``), only the files it never prepared are stat-ed: the
    watcher parses what changes off the loop itself. A request of 100 files stat-ed them
    twice (here, then in the engine's moment), about 0.9 ms. A change the watcher has yet to
    report, or one it never sees (a file outside the root, in a folder it skips), is parsed
    by the engine on the loop, as before the watcher; nothing else depends on it."""
    engine = conn.engine
    path = getattr(params, "path", None)
    if isinstance(path, str):
        try:
            rels = [engine.resolve(path)]
        except FreshError:
            return  # the handler reports it
    else:
        session = getattr(params, "session", None)
        rels = engine.view_paths(session if isinstance(session, str) else None)
    events = engine.disk_events
    if engine.watching and conn.prepared_at == events:
        rels = [rel for rel in rels if rel not in conn.prepared]
        if not rels:
            return
    else:
        conn.prepared_at = events
    due = []
    for rel, key in engine.sources.stat_keys(rels).items():  # the others: ``get`` reports
        if conn.prepared.get(rel) != key:
            conn.prepared[rel] = key
            due.append(rel)
    if len(conn.prepared) > 4 * max(len(rels), 1024):
        conn.prepared.clear()  # paths no view names any more; a new round re-learns them
    if due:
        await engine.sources.prepare(due)


def _refuse(conn: ConnectionInfo) -> Unauthorized:
    """The error for a request on a connection without the token, which is then closed."""
    asyncio.get_event_loop().call_later(0.1, conn.close)
    return Unauthorized(
        "this connection has not presented a valid token in initialize; "
        "send initialize with initializationOptions.token first"
    )


def _path_of(uri: str) -> str | None:
    return to_fs_path(uri) if uri.startswith("file:") else None


def _authorized(
    server: FreshServer, fn: Callable[..., Awaitable[None] | None]
) -> Callable[..., Awaitable[None]]:
    """A notification takes effect in its turn on the connection, like a request. One from
    a connection that has not presented the token is ignored (it would otherwise set
    editor buffers, claim saves or sync files for everyone)."""

    async def handler(*args: Any) -> None:
        conn = server.conn
        async with conn.turn():
            if not conn.authorized:
                return
            try:
                result = fn(*args)
                if inspect.isawaitable(result):
                    await result
            except FreshError as exc:
                log.warning("notification ignored: %s", exc.message)
            except Exception:
                log.exception("notification failed")

    return handler


def handler_table(handlers: Mapping[str, Callable[[Any], Any]]) -> list[tuple[P.Method, Any]]:
    """Each served method of the protocol's table with its handler, in the table's order.
    The table decides what is served and how (a request answers in its turn through
    ``_guard``; a notification takes effect through ``_authorized``): a handler for a method
    it does not serve, or a served method without one, is a ``RuntimeError`` at the first
    connection (and in tests/server/test_handler_table.py), never a silent -32601."""
    served = [m for m in P.CLIENT_METHODS.values() if m.served]
    missing = [m.name for m in served if m.name not in handlers]
    extra = sorted(set(handlers) - {m.name for m in served})
    if missing or extra:
        raise RuntimeError(
            f"the handlers do not match the protocol's method table: missing {missing}, "
            f"extra {extra}"
        )
    return [(m, handlers[m.name]) for m in served]


def register_features(server: FreshServer) -> None:
    conn = server.conn
    engine = conn.engine

    # Each handler returns the JSON value of its typed result, through the protocol's one
    # converter (``FreshProtocol.answer`` dumps it once); ``fresh/project`` returns
    # its encoding, made once per projection.

    async def observe(p: P.ObserveParams) -> Any:
        return P.unstructure(await engine.observe(p))

    async def forget(p: P.ForgetParams) -> Any:
        return P.unstructure(await engine.forget(p))

    async def project(p: P.ProjectParams) -> Any:
        defaults = ProjectDefaults(conn.budget_bytes, conn.policy, conn.project_leaves_out)
        return await engine.project(p, defaults)

    async def check_edit(p: P.CheckEditParams) -> Any:
        return P.unstructure(await engine.check_edit(p))

    async def did_write(p: Any) -> None:
        if isinstance(p, FreshError):
            log.warning("fresh/didWrite ignored: %s", p.message)
            return
        wrote = None
        if p.first_line is not None and p.last_line is not None:
            wrote = (p.first_line, p.last_line)
        await engine.record_write(p.session, p.path, wrote)

    handlers: dict[str, Callable[[Any], Any]] = {
        P.OBSERVE: observe,
        P.STALE: lambda p: engine.stale_json(p),
        P.STATUSES: lambda p: engine.statuses(p),
        P.PROJECT: project,
        P.COMMIT: lambda p: P.unstructure(engine.commit(p)),
        P.FORGET: forget,
        P.STATUS: lambda p: P.unstructure(engine.status(p)),
        P.VIEW_TEXT: lambda p: P.unstructure(engine.view_text(p)),
        P.CHECK_EDIT: check_edit,
        P.GATE: lambda p: P.unstructure(engine.gate(p)),
        P.DID_WRITE: did_write,
    }
    for method, fn in handler_table(handlers):
        wrap = _authorized if method.notification else _guard
        server.feature(method.name)(wrap(server, fn))

    def did_open(p: lsp.DidOpenTextDocumentParams) -> None:
        if (path := _path_of(p.text_document.uri)) is not None:
            engine.editor_update(conn.name, path, p.text_document.text)

    def did_change(p: lsp.DidChangeTextDocumentParams, text: str | None = None) -> None:
        # FreshProtocol has applied the incremental edits and passes the text they made.
        if (path := _path_of(p.text_document.uri)) is not None:
            if text is None:
                text = server.workspace.get_text_document(p.text_document.uri).source
            engine.editor_update(conn.name, path, text)

    def did_save(p: lsp.DidSaveTextDocumentParams) -> None:
        if (path := _path_of(p.text_document.uri)) is not None:
            engine.editor_saved(conn.name, path)

    def did_close(p: lsp.DidCloseTextDocumentParams) -> None:
        if (path := _path_of(p.text_document.uri)) is not None:
            engine.editor_closed(conn.name, path)

    def watched(p: lsp.DidChangeWatchedFilesParams) -> None:
        rels = []
        for change in p.changes:
            path = _path_of(change.uri)
            if path is None:
                continue
            try:
                rels.append(engine.resolve(path))
            except FreshError:
                continue
        engine.sync(rels)

    for lsp_method_name, lsp_fn in (
        (lsp.TEXT_DOCUMENT_DID_OPEN, did_open),
        (lsp.TEXT_DOCUMENT_DID_CHANGE, did_change),
        (lsp.TEXT_DOCUMENT_DID_SAVE, did_save),
        (lsp.TEXT_DOCUMENT_DID_CLOSE, did_close),
        (lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, watched),
    ):
        server.feature(lsp_method_name)(_authorized(server, lsp_fn))


#: Requests and notifications a connection may have waiting for its turn before the
#: server stops reading from it (the peer's writes then back up in its own socket).
MAX_PENDING = 64

_UNSET = object()

#: Methods that are notifications: sent with an id, they are refused (-32600), not applied,
#: so a client learns of its mistake instead of waiting for an answer that never comes.
NOTIFICATION_METHODS = frozenset(
    {m for m, types in lsp.METHOD_TO_TYPES.items() if types[0].__name__.endswith("Notification")}
    | P.NOTIFICATIONS
)


def send_error(protocol: FreshProtocol, msg_id: Any, code: int, message: str) -> None:
    """An error answer built here, for messages pygls never sees (framing, envelopes)."""
    if protocol.answered_early and protocol.already_answered(
        msg_id, None, lsp.ResponseError(code=code, message=message)
    ):
        return
    protocol.send_message(
        {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    )


def _readable_id(data: dict[str, Any]) -> Any:
    """The id to answer with: the request's own when it is a string or an integer (the
    JSON-RPC types), else null, since no other value can be matched by the client."""
    msg_id = data.get("id", _UNSET)
    if isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool)):
        return msg_id
    return None


def dispatch_body(protocol: FreshProtocol, body: bytes) -> None:
    """Check the envelope of one message, then hand it to pygls. Every request whose id
    could be read gets an answer with that id; nothing a peer sends raises out of here."""
    try:
        data = loads(body)
    except RecursionError:
        send_error(protocol, None, -32700, "parse error: the JSON is nested too deeply")
        return
    except (ValueError, UnicodeDecodeError) as exc:
        send_error(protocol, None, -32700, f"parse error: body is not JSON ({exc})")
        return
    if not isinstance(data, dict):
        send_error(
            protocol,
            None,
            -32600,
            "invalid request: a message must be a JSON object (batches are not supported)",
        )
        return
    msg_id = _readable_id(data)
    is_request = "id" in data
    if is_request and msg_id is None and data["id"] is not None:
        send_error(protocol, None, -32600, "invalid request: id must be a string or an integer")
        return
    method = data.get("method", _UNSET)
    if data.get("jsonrpc") != "2.0":
        if is_request:
            send_error(protocol, msg_id, -32600, 'invalid request: jsonrpc must be "2.0"')
        return
    if method is _UNSET and not ("result" in data or "error" in data):
        send_error(protocol, msg_id, -32600, "invalid request: no method")
        return
    if method is not _UNSET and not isinstance(method, str):
        if is_request:
            send_error(protocol, msg_id, -32600, "invalid request: method must be a string")
        return
    if is_request and method in NOTIFICATION_METHODS:
        send_error(
            protocol,
            msg_id,
            -32600,
            f"invalid request: {method} is a notification; send it without an id "
            "(it was not applied)",
        )
        return
    try:
        message = protocol.structure_message(data)
    except InvalidParams as exc:
        # A standard method with params lsprotocol cannot read: answered here, not dropped
        # (pygls would never reply); a connection without the token learns nothing of them.
        if is_request:
            conn = protocol.conn
            error = exc if conn.authorized else _refuse(conn)
            send_error(protocol, msg_id, error.code, error.message)
        return
    except Exception as exc:
        if is_request and method is not _UNSET:
            code = getattr(exc, "code", -32602)
            send_error(
                protocol,
                msg_id,
                code if code in (-32600, -32602) else -32602,
                f"invalid params of {method}: they cannot be read",
            )
        else:
            log.warning("dropped an unreadable %s", method if method is not _UNSET else "answer")
        return
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("handler failed")
        if is_request and method is not _UNSET:
            send_error(protocol, msg_id, -32603, INTERNAL_MESSAGE)


async def run_connection(
    frames: FrameReader, protocol: FreshProtocol, stop: asyncio.Event
) -> FrameError | None:
    """Read framed messages until EOF, in order. A broken frame is answered (-32600 with a
    null id: its id was never read) and ends this connection only; it is returned."""

    def broken(exc: FrameError) -> None:
        send_error(protocol, None, exc.code, exc.message)

    return await read_loop(
        frames,
        lambda body: dispatch_body(protocol, body),
        broken,
        protocol.conn,
        MAX_PENDING,
        stop,
    )


def new_connection_name(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"
