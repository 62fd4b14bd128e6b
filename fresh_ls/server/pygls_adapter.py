"""Every use fresh-ls makes of pygls's private API, in one place.

pygls gives a language server its handler table, its workspace and its LSP lifecycle, and
fresh-ls keeps those. What it does not give (reading frames without trusting the peer,
answering what it would drop, writing a result that is already JSON) needs pygls's
insides: ``_send_response`` and ``_send_data``, the writer's ``_include_headers``, the
``_result_types`` book, ``_serialize_message``, ``_shutdown``, the protocol's ``_server``
(and its ``_report_server_error``), the feature table ``fm.features``, and for requests
answered from their own task (``serve_request``) the ``_ctx_msg_id`` variable and the
``_request_futures`` that ``$/cancelRequest`` cancels. Nothing else in fresh-ls touches
them; each has a public name here, and tests/server/test_pygls_adapter.py checks, for the
installed pygls, that every one still exists and behaves as used. A pygls upgrade outside
``TESTED`` fails that test first, by name, instead of some connection later.

The read loop lives here too: fresh-ls reads frames itself (``FrameReader``) in place of
pygls's ``start_io``/``start_async`` and hands each body to a dispatch function.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any, Protocol

from lsprotocol import types as lsp
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcRequestCancelled,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest

from fresh_ls.errors import InvalidParams
from fresh_ls.framing import FrameError, FrameReader

log = logging.getLogger(__name__)

#: The pygls releases this module was tested with: at least the first, below the second.
TESTED = ((2, 0), (2, 2))


def pygls_version() -> tuple[int, ...]:
    """The installed pygls's release as numbers (``2.1.1`` -> ``(2, 1, 1)``)."""
    text = metadata.version("pygls")
    parts = []
    for piece in text.split("."):
        digits = "".join(c for c in piece if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
        if digits != piece:
            break
    return tuple(parts)


class AdaptedProtocol(LanguageServerProtocol):
    """pygls's ``LanguageServerProtocol`` with public names for what fresh-ls needs.

    Subclasses override ``answer`` (every answer to a request passes through it, pygls's
    own included) and call the ``send_*`` methods; they never touch pygls's privates.
    """

    # -- what pygls keeps privately ------------------------------------------------------

    @property
    def language_server(self) -> Any:
        """The server this protocol belongs to (pygls: ``_server``)."""
        return self._server

    @property
    def shut_down(self) -> bool:
        """Whether ``shutdown`` was received (pygls: ``_shutdown``)."""
        return bool(self._shutdown)

    def user_handler(self, method: str) -> Any:
        """The handler registered with ``server.feature(method)``, or None."""
        return self.fm.features.get(method)

    def json_default(self, value: Any) -> Any:
        """``json.dumps``'s ``default`` for LSP types, as pygls serialises them."""
        return self._serialize_message(value)

    # -- sending ---------------------------------------------------------------------------

    def answer(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """Send the answer to request ``msg_id``: override to shape answers."""
        self.send_lsp_answer(msg_id, result, error)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        # pygls sends every answer (its handlers' results and its own errors) through here.
        self.answer(msg_id, result, error)

    def send_lsp_answer(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """An answer as pygls builds it (LSP result types unstructured by its converter)."""
        super()._send_response(msg_id, result, error)

    def send_json_answer(self, msg_id: Any, text: str) -> None:
        """An answer whose result is already JSON text: written as it is. The text is
        encoded once and written between its envelope's two ends (``write_parts``), not
        joined with them first: a ``policy: all`` answer is half a megabyte, and each join
        was one more copy of it."""
        self._result_types.pop(msg_id, None)
        head = b'{"jsonrpc": "2.0", "id": ' + json.dumps(msg_id).encode("utf-8") + b', "result": '
        self.write_parts((head, text.encode("utf-8"), b"}"))

    def send_message(self, data: dict[str, Any]) -> None:
        """Any message given as plain JSON (an error built before pygls saw the request)."""
        self._send_data(data)

    def _header(self, size: int) -> bytes:
        return (
            f"Content-Length: {size}\r\n"
            f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        ).encode("ascii")

    def write_body(self, body: bytes) -> None:
        """What pygls's ``_send_data`` writes for one message, given its encoded body."""
        self.write_parts((body,))

    def write_parts(self, parts: Sequence[bytes]) -> None:
        """One message whose body is ``parts`` in order: framed as pygls's ``_send_data``
        frames it, and handed to a writer that can write several buffers at once
        (``write_parts``) without joining them; any other writer gets them joined."""
        if self.writer is None:
            return
        if self._include_headers:
            size = sum(len(part) for part in parts)
            parts = (self._header(size) + parts[0], *parts[1:])
        many = getattr(self.writer, "write_parts", None)
        if many is not None:
            many(parts)
        elif len(parts) == 1:
            self.writer.write(parts[0])
        else:
            self.writer.write(b"".join(parts))

    # -- requests answered without pygls's task bookkeeping ---------------------------------

    def serve_request(self, msg_id: Any, handler: Callable[[Any], Any], params: Any) -> None:
        """Run the coroutine function ``handler`` for request ``msg_id`` and answer it when
        it ends, from its own task: as pygls's ``_handle_request`` does (the request's id in
        the context, the task cancellable by ``$/cancelRequest``, the same answers and error
        reports), without its done-callback, which sent every answer one turn of the event
        loop after the handler had finished."""
        self._ctx_msg_id.set(msg_id)
        task = asyncio.ensure_future(self._answer_when_done(msg_id, handler, params))
        if not task.done():
            # pygls keeps its tasks there too, typed as concurrent futures
            self._request_futures[msg_id] = task  # type: ignore[assignment]

    async def _answer_when_done(
        self, msg_id: Any, handler: Callable[[Any], Any], params: Any
    ) -> None:
        try:
            result = await handler(params)
        except asyncio.CancelledError:
            self._request_futures.pop(msg_id, None)
            cancelled = JsonRpcRequestCancelled(f'Request with id "{msg_id}" is canceled')
            self._answer_or_log(msg_id, error=cancelled.to_response_error())
            raise
        except JsonRpcException as exc:
            self._request_futures.pop(msg_id, None)
            self._answer_or_log(msg_id, error=exc.to_response_error())
            self._server._report_server_error(exc, FeatureRequestError)
        except Exception:
            self._request_futures.pop(msg_id, None)
            error = JsonRpcInternalError.of(sys.exc_info())
            log.exception('Exception occurred for message "%s"', msg_id)
            self._answer_or_log(msg_id, error=error.to_response_error())
            self._server._report_server_error(error, FeatureRequestError)
        else:
            self._request_futures.pop(msg_id, None)
            self._answer_or_log(msg_id, result)

    def _answer_or_log(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        """``answer``, and a send that fails (a peer gone: a broken pipe) only logged, as
        pygls's done-callback logged it, never left in the task for the loop to report."""
        try:
            self.answer(msg_id, result, error)
        except Exception:
            log.exception('Exception occurred for message "%s"', msg_id)

    # -- receiving -------------------------------------------------------------------------

    def structure_own(self, data: dict[str, Any]) -> Any:
        """A message of the server's own methods, typed; None for one pygls should read."""
        return None

    def structure_message(self, data: dict[str, Any]) -> Any:
        """The typed message; ``InvalidParams`` for a request whose params cannot be read
        (pygls raises a bare ``JsonRpcInvalidParams`` and would never answer it)."""
        if "jsonrpc" not in data:
            return data
        own = self.structure_own(data)
        if own is not None:
            return own
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            method = data.get("method")
            if "id" in data and isinstance(method, str):
                detail = exc.__cause__ or "cannot be read"
                raise InvalidParams(f"params of {method}: {detail}") from None
            raise

    def handle_message(self, message: Any) -> None:
        # pygls drops a request that comes after ``shutdown`` without answering, which
        # leaves the client waiting forever; LSP says to answer it with InvalidRequest.
        if self.shut_down and isinstance(message, RPCRequest) and message.method != lsp.EXIT:
            self.answer(
                message.id,
                error=lsp.ResponseError(
                    code=-32600,
                    message=f"{message.method}: the server is shutting down (shutdown was "
                    "received); only exit is accepted now",
                ),
            )
            return
        super().handle_message(message)


class Backlog(Protocol):
    """How many messages of a connection wait for their turn, and a wake-up when fewer do."""

    pending: int
    room: asyncio.Event


async def read_loop(
    frames: FrameReader,
    dispatch: Callable[[bytes], None],
    broken: Callable[[FrameError], None],
    backlog: Backlog,
    max_pending: int,
    stop: asyncio.Event,
) -> FrameError | None:
    """pygls's reading, redone: framed bodies until EOF, in order, each to ``dispatch``.

    A broken frame goes to ``broken`` (to be answered) and ends the loop; it is returned.
    After each body the loop lets the tasks just made take their place in the queue, and
    stops reading while ``max_pending`` wait: a peer that floods gets no unbounded memory.
    """
    while not stop.is_set():
        try:
            body = await frames.read()
        except EOFError:
            return None
        except FrameError as exc:
            broken(exc)
            return exc
        dispatch(body)
        await asyncio.sleep(0)
        while backlog.pending >= max_pending and not stop.is_set():
            backlog.room.clear()
            await backlog.room.wait()
    return None
