"""One client connection: a pygls language server bound to the shared engine.

Every connection (stdio, Unix socket, TCP) gets its own ``FreshServer`` (pygls keeps the
editor workspace and the writer per protocol instance) and all of them share one
``Engine``. Handlers only validate params and call the engine; the rules live in the core.

Two things pygls does not do and a wire contract needs: a request whose params fail to
structure is answered (pygls logs it and never replies, so a client would hang), and a
body that is not JSON gets a -32700 reply with a null id. Both are handled here.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import attrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from fresh_ls import __version__
from fresh_ls.core.projection import DEFAULT_BUDGET_BYTES
from fresh_ls.engine import Engine
from fresh_ls.errors import FreshError, InvalidParams, Unauthorized
from fresh_ls.server import params as P
from fresh_ls.server.documents import apply_change

log = logging.getLogger(__name__)

INVALID_PARAMS_METHOD = "$/fresh-ls/invalidParams"


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
    policy: str | None = None
    listener: Callable[[dict[str, Any]], None] | None = None


class FreshProtocol(LanguageServerProtocol):
    _server: FreshServer

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data:
            return data
        method = data.get("method")
        if isinstance(method, str) and method in P.PARAMS:
            try:
                params: Any = P.parse(P.PARAMS[method], data.get("params"))
            except InvalidParams as exc:
                params = exc
            if "id" in data:
                return RawRequest(id=data["id"], method=method, params=params)
            return RawNotification(method=method, params=params)
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and isinstance(method, str):
                # A standard method with params lsprotocol cannot read: answer, don't hang.
                err = InvalidParams(f"params of {method}: {exc.__cause__ or 'cannot be read'}")
                return RawRequest(id=data["id"], method=INVALID_PARAMS_METHOD, params=err)
            raise

    def handle_message(self, message: Any) -> None:
        # pygls drops a request that comes after ``shutdown`` without answering, which
        # leaves the client waiting forever; LSP says to answer it with InvalidRequest.
        if self._shutdown and isinstance(message, RPCRequest) and message.method != lsp.EXIT:
            self._send_response(
                message.id,
                error=lsp.ResponseError(
                    code=-32600,
                    message=f"{message.method}: the server is shutting down (shutdown was "
                    "received); only exit is accepted now",
                ),
            )
            return
        super().handle_message(message)

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Any:
        conn = self._server.conn
        opts_raw = params.initialization_options
        try:
            opts = P.parse(P.InitializationOptions, opts_raw, "initializationOptions")
        except InvalidParams as exc:
            raise JsonRpcException(code=exc.code, message=exc.message) from None
        if conn.token is not None and opts.token != conn.token:
            asyncio.get_event_loop().call_later(0.1, conn.close)
            raise JsonRpcException(
                code=Unauthorized.code,
                message="initializationOptions.token: missing or wrong; read it from the "
                "server's endpoint.json (mode 0600) in its state dir",
            )
        conn.authorized = True
        conn.budget_bytes = opts.budgetBytes
        conn.policy = opts.policy
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
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.EXIT)
    def lsp_exit(self, *args: Any) -> Any:
        self._server.conn.on_exit()
        yield from ()


class FreshServer(LanguageServer):
    def __init__(self, conn: ConnectionInfo) -> None:
        super().__init__("fresh-ls", __version__, protocol_cls=FreshProtocol)
        self.conn = conn
        register_features(self)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors the contract defines are answers, not faults: log only the rest."""
        code = getattr(error, "code", None)
        if isinstance(error, JsonRpcException) and code is not None and code > -32603:
            return
        log.error("request failed: %s", error, exc_info=error)


Handler = Callable[[Any], Awaitable[Any]]


def _guard(server: FreshServer, fn: Callable[[Any], Any]) -> Handler:
    """Turn engine errors into JSON-RPC errors, refuse unauthorised use, await results."""

    async def handler(params: Any) -> Any:
        conn = server.conn
        try:
            if not conn.authorized:
                asyncio.get_event_loop().call_later(0.1, conn.close)
                raise Unauthorized(
                    "this connection has not presented a valid token in initialize; "
                    "send initialize with initializationOptions.token first"
                )
            if isinstance(params, FreshError):
                raise params
            result = fn(params)
            if asyncio.iscoroutine(result):
                result = await result
            return result
        except FreshError as exc:
            raise JsonRpcException(code=exc.code, message=exc.message) from None

    return handler


def _path_of(uri: str) -> str | None:
    return to_fs_path(uri) if uri.startswith("file:") else None


def _authorized(server: FreshServer, fn: Callable[[Any], None]) -> Callable[[Any], None]:
    """A notification from a connection that has not presented the token is ignored (it
    would otherwise set editor buffers, claim saves or sync files for everyone)."""

    def handler(params: Any) -> None:
        if server.conn.authorized:
            fn(params)

    return handler


def register_features(server: FreshServer) -> None:
    conn = server.conn
    engine = conn.engine

    def observe(p: P.ObserveParams) -> Awaitable[dict[str, Any]]:
        return engine.observe(p.session, p.path, p.viewId, p.firstLine, p.lastLine, p.text, p.kind)

    def project(p: P.ProjectParams) -> dict[str, Any]:
        budget = p.budgetBytes if p.budgetBytes is not None else conn.budget_bytes
        policy = p.policy or conn.policy or "stale"
        return engine.project(
            p.session, budget if budget is not None else DEFAULT_BUDGET_BYTES, policy, p.viewIds
        )

    def invalid(p: Any) -> Any:
        raise p if isinstance(p, FreshError) else InvalidParams("params cannot be read")

    handlers: dict[str, Callable[[Any], Any]] = {
        "fresh/observe": observe,
        "fresh/stale": lambda p: engine.stale(p.session, p.viewIds),
        "fresh/project": project,
        "fresh/commit": lambda p: engine.commit(p.planId),
        "fresh/forget": lambda p: engine.forget(p.session, p.viewIds),
        "fresh/status": lambda p: engine.status(),
        "fresh/viewText": lambda p: engine.view_text(p.session, p.viewId),
        INVALID_PARAMS_METHOD: invalid,
    }
    for method, fn in handlers.items():
        server.feature(method)(_guard(server, fn))

    @server.feature("fresh/didWrite")
    def did_write(p: Any) -> None:
        if conn.authorized and not isinstance(p, FreshError):
            try:
                engine.did_write(p.session, p.path)
            except FreshError as exc:
                log.warning("fresh/didWrite ignored: %s", exc.message)

    def did_open(p: lsp.DidOpenTextDocumentParams) -> None:
        if (path := _path_of(p.text_document.uri)) is not None:
            engine.editor_update(conn.name, path, p.text_document.text)

    def did_change(p: lsp.DidChangeTextDocumentParams) -> None:
        # FreshProtocol has already applied the incremental edits to the workspace copy.
        if (path := _path_of(p.text_document.uri)) is not None:
            doc = server.workspace.get_text_document(p.text_document.uri)
            engine.editor_update(conn.name, path, doc.source)

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

    for method, fn in (
        (lsp.TEXT_DOCUMENT_DID_OPEN, did_open),
        (lsp.TEXT_DOCUMENT_DID_CHANGE, did_change),
        (lsp.TEXT_DOCUMENT_DID_SAVE, did_save),
        (lsp.TEXT_DOCUMENT_DID_CLOSE, did_close),
        (lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, watched),
    ):
        server.feature(method)(_authorized(server, fn))


_HEADER = re.compile(rb"^Content-Length: *(\d+)\r\n$", re.IGNORECASE)


async def run_connection(reader: Any, protocol: FreshProtocol, stop: asyncio.Event) -> None:
    """Read framed messages until EOF; answer bodies that are not JSON with -32700."""
    while not stop.is_set():
        length = 0
        while True:
            header = await reader.readline()
            if not header:
                return
            m = _HEADER.match(header)
            if m:
                length = int(m.group(1))
            elif header in (b"\r\n", b"\n") and length:
                break
        body = await reader.readexactly(length)
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
        except (ValueError, UnicodeDecodeError) as exc:
            protocol._send_data(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32700, "message": f"parse error: body is not JSON ({exc})"},
                }
            )
            continue
        except Exception as exc:
            log.exception("unreadable message")
            protocol._send_data(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32600, "message": f"invalid request: {exc}"},
                }
            )
            continue
        if not hasattr(message, "jsonrpc"):
            protocol._send_data(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32600, "message": "invalid request: not a JSON-RPC message"},
                }
            )
            continue
        try:
            protocol.handle_message(message)
        except Exception:
            log.exception("handler failed")


def new_connection_name(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"
