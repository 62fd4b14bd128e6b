"""What fresh_ls.server.pygls_adapter relies on in pygls, checked against the installed one.

Each test names the private attribute or method it pins: on a pygls upgrade that changes
one, the failure says which, before any connection misbehaves.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from fresh_ls.errors import InvalidParams
from fresh_ls.framing import FrameError, FrameReader
from fresh_ls.server.lsp_converter import lsp_converter
from fresh_ls.server.pygls_adapter import TESTED, AdaptedProtocol, pygls_version, read_loop


class _Writer:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        out, rest = [], self.data
        while rest:
            head, _, rest = rest.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            out.append(json.loads(rest[:length]))
            rest = rest[length:]
        return out


def _protocol() -> tuple[AdaptedProtocol, _Writer, LanguageServer]:
    server = LanguageServer(
        "t", "0", protocol_cls=AdaptedProtocol, converter_factory=lsp_converter
    )
    protocol = server.protocol
    assert isinstance(protocol, AdaptedProtocol)
    writer = _Writer()
    protocol.set_writer(writer)
    return protocol, writer, server


def test_installed_pygls_is_a_tested_release() -> None:
    low, high = TESTED
    version = pygls_version()
    assert low <= version < high, (
        f"pygls {'.'.join(map(str, version))} is outside the releases fresh_ls/server/"
        f"pygls_adapter.py was tested with ({low} to below {high}): run this file, fix what "
        "fails, then widen TESTED"
    )


def test_private_names_the_adapter_uses_exist() -> None:
    protocol, _, server = _protocol()
    for name in (
        "_server", "_shutdown", "_result_types", "_include_headers", "writer", "fm",
        "_ctx_msg_id", "_request_futures",
    ):
        assert hasattr(protocol, name), f"pygls's protocol has no {name} any more"
    for name in ("_send_response", "_send_data", "_serialize_message"):
        assert callable(getattr(JsonRPCProtocol, name, None)), f"pygls lost {name}"
    assert list(inspect.signature(JsonRPCProtocol._send_response).parameters) == [
        "self", "msg_id", "result", "error"
    ]
    assert list(inspect.signature(JsonRPCProtocol._send_data).parameters) == ["self", "data"]
    assert isinstance(protocol._result_types, dict)
    assert isinstance(protocol._request_futures, dict)  # what $/cancelRequest cancels
    assert isinstance(protocol.fm.features, dict)
    assert protocol.language_server is server
    assert protocol.shut_down is False
    # fresh-ls's server hooks that pygls calls by these names
    assert callable(getattr(LanguageServer, "report_server_error", None))
    assert callable(getattr(LanguageServer, "_report_server_error", None))
    for name in ("lsp_initialize", "lsp_text_document__did_change", "lsp_exit"):
        method = getattr(LanguageServerProtocol, name)
        assert inspect.isgeneratorfunction(method), f"{name} is no longer a generator"
        assert hasattr(method, "method_name"), f"{name} is no longer an lsp_method"
    assert lsp_method("x")(lambda: None).method_name == "x"  # type: ignore[attr-defined]


def test_every_answer_passes_through_answer() -> None:
    protocol, _, _ = _protocol()
    seen: list[Any] = []
    protocol.answer = lambda msg_id, result=None, error=None: seen.append(  # type: ignore[method-assign]
        (msg_id, result, error)
    )
    protocol.handle_message(
        protocol.structure_message({"jsonrpc": "2.0", "id": 1, "method": "no/such", "params": {}})
    )
    assert seen and seen[0][0] == 1 and seen[0][2].code == -32601


def test_sending_writes_framed_json() -> None:
    protocol, writer, _ = _protocol()
    protocol.send_json_answer(3, '{"a": 1}')
    protocol.send_message({"jsonrpc": "2.0", "id": 4, "error": {"code": -32600, "message": "m"}})
    protocol.send_lsp_answer(5, lsp.Position(line=1, character=2))
    first, second, third = writer.messages()
    assert first == {"jsonrpc": "2.0", "id": 3, "result": {"a": 1}}
    assert second["error"] == {"code": -32600, "message": "m"}
    assert third["result"] == {"line": 1, "character": 2}
    assert protocol.json_default(lsp.Position(line=0, character=0)) == {"line": 0, "character": 0}


def test_user_handler_finds_a_registered_feature() -> None:
    protocol, _, server = _protocol()

    @server.feature("x/y")
    def handler(params: Any) -> None:
        pass

    assert protocol.user_handler("x/y") is handler
    assert protocol.user_handler("x/z") is None


def test_unreadable_lsp_params_raise_invalid_params() -> None:
    protocol, _, _ = _protocol()
    with pytest.raises(InvalidParams, match="params of textDocument/hover"):
        protocol.structure_message(
            {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": 5}
        )
    with pytest.raises(JsonRpcException):  # a notification: nothing to answer
        protocol.structure_message(
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": 5}
        )


def test_a_request_after_shutdown_is_answered() -> None:
    protocol, writer, _ = _protocol()
    protocol._shutdown = True  # what pygls's lsp_shutdown sets
    assert protocol.shut_down
    protocol.handle_message(
        protocol.structure_message({"jsonrpc": "2.0", "id": 9, "method": "x/y", "params": {}})
    )
    (answer,) = writer.messages()
    assert answer["id"] == 9 and answer["error"]["code"] == -32600


async def test_read_loop_dispatches_in_order_and_returns_a_broken_frame() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(b"Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]garbage\r\n")
    reader.feed_eof()
    bodies: list[bytes] = []
    broken: list[FrameError] = []

    class Backlog:
        pending = 0
        room = asyncio.Event()

    result = await read_loop(
        FrameReader(reader, 1 << 20), bodies.append, broken.append, Backlog(), 4,
        asyncio.Event(),
    )
    assert bodies == [b"{}", b"[1]"]
    assert result is not None and broken == [result]


async def test_serve_request_answers_from_the_handlers_task() -> None:
    """``serve_request``: pygls's answers (a result, a JSON-RPC error, a cancellation, an
    internal error without its traceback's text) and its bookkeeping (``_request_futures``,
    the request's id in the context), without the done-callback."""
    protocol, writer, _ = _protocol()
    seen_ids: list[Any] = []
    gate = asyncio.Event()

    async def ok(params: Any) -> Any:
        seen_ids.append(protocol.msg_id)
        return {"got": params}

    async def refused(params: Any) -> Any:
        raise JsonRpcException(code=-32012, message="unknown plan")

    async def broken(params: Any) -> Any:
        raise ValueError("boom")

    async def waits(params: Any) -> Any:
        await gate.wait()

    protocol.serve_request(1, ok, 5)
    protocol.serve_request(2, refused, None)
    protocol.serve_request(3, broken, None)
    protocol.serve_request(4, waits, None)
    await asyncio.sleep(0)
    assert set(protocol._request_futures) == {4}  # only what still runs can be cancelled
    protocol._handle_cancel_notification(4)  # what $/cancelRequest does
    for _ in range(3):
        await asyncio.sleep(0)
    first, second, third, fourth = writer.messages()
    assert seen_ids == [1]
    assert first == {"jsonrpc": "2.0", "id": 1, "result": {"got": 5}}
    assert second["id"] == 2 and second["error"]["code"] == -32012
    assert second["error"]["message"] == "unknown plan"
    assert third["id"] == 3 and third["error"]["code"] == -32603
    assert fourth["id"] == 4 and fourth["error"]["code"] == -32800
    assert protocol._request_futures == {}


def test_write_parts_frames_the_whole_body() -> None:
    protocol, writer, _ = _protocol()

    class Parts(_Writer):
        def write_parts(self, parts: Any) -> None:
            self.data += b"".join(parts)

    protocol.write_parts((b'{"a": ', b"[1, 2]", b"}"))  # a writer without write_parts
    many = Parts()
    protocol.set_writer(many)
    protocol.send_json_answer(7, '{"b": "\\u00e9"}')
    assert writer.messages() == [{"a": [1, 2]}]
    assert many.messages() == [{"jsonrpc": "2.0", "id": 7, "result": {"b": "\u00e9"}}]


async def test_a_failed_send_is_logged_not_left_in_the_task(
    caplog: pytest.LogCaptureFixture,
) -> None:
    protocol, _, _ = _protocol()

    class Gone(_Writer):
        def write(self, data: bytes) -> None:
            raise BrokenPipeError("the peer is gone")

    protocol.set_writer(Gone())

    async def ok(params: Any) -> Any:
        return {"a": 1}

    protocol.serve_request(1, ok, None)
    (task,) = protocol._request_futures.values()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert task.done() and task.exception() is None  # type: ignore[attr-defined]
    assert "the peer is gone" in caplog.text
