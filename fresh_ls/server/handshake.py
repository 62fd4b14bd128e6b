"""Answer a stdio client's ``initialize`` before pygls is imported.

Importing pygls costs more than half a second here (``lsprotocol.types`` alone builds about
570 attrs classes), and a client spawning ``fresh-ls serve --stdio`` waits that long for
its handshake. The answer to ``initialize`` does not need pygls: for the parameters a
client sends it is a fixed object (fresh-ls's capabilities are the same on every
connection) plus the position encoding chosen from the client's list. So ``cmd_serve``
reads the first frame itself with nothing but the standard library and, when it is an
``initialize`` whose answer this module can tell for certain (``initialize_result``),
writes the answer at once; only then does the server import pygls and start.

Nothing else changes: the server hands the same ``initialize`` to pygls first, as if it
had just arrived, so the workspace, the client's capabilities and the connection's
options are set by the same code as before. Its answer is not sent again
(``FreshProtocol.answered_early``); it is compared with the one sent, and a difference is
logged. Anything this module does not model exactly (another first message, options it
does not know, a broken frame, the end of stdin) is left to the server untouched: every
byte read here is handed on (``EarlyStart.rest``), and pygls answers as it always did.
``tests/server/test_handshake.py`` checks the answer against pygls's own, byte for byte in
JSON terms, for the clients that exist (the extension's, the Python client's, bare ones).
"""

from __future__ import annotations

import json
import os
import select
import time
from dataclasses import dataclass
from typing import Any

from fresh_ls import __version__
from fresh_ls.framing import LINE, FrameError, frame_steps

#: What pygls puts after ``Content-Length`` on every message it writes.
CONTENT_TYPE = "application/vscode-jsonrpc; charset=utf-8"
#: The encodings pygls can speak, in no order: the client's first one of these wins.
POSITION_ENCODINGS = frozenset({"utf-8", "utf-16", "utf-32"})
#: ``initialize`` params the answer is known for (LSP 3.17's, minus none it could read).
_TOP_KEYS = frozenset(
    {
        "processId",
        "clientInfo",
        "locale",
        "rootPath",
        "rootUri",
        "capabilities",
        "initializationOptions",
        "trace",
        "workspaceFolders",
        "workDoneToken",
    }
)
_TRACE = frozenset({"off", "messages", "verbose"})
#: How long ``serve --stdio --listen`` waits for the stdio client's first frame before it
#: starts the usual way (and opens its endpoint); a client that sends ``initialize`` at
#: once is answered well within it.
LISTEN_WAIT_S = 0.25
_POLICIES = frozenset({"stale", "all"})


@dataclass(frozen=True)
class EarlyStart:
    """What happened on stdin before the server started: ``rest`` is every byte read and
    not yet handled (the server reads on from there); when ``initialize`` was answered,
    ``body`` is its frame's body and ``result`` the answer sent for request ``msg_id``."""

    rest: bytes
    body: bytes | None = None
    msg_id: int | str | None = None
    result: dict[str, Any] | None = None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _options_known(opts: Any) -> bool:
    """``initializationOptions`` that ``protocol.InitializationOptions`` reads without an
    error (anything else is left to the server, which answers the error)."""
    if opts is None:
        return True
    if not isinstance(opts, dict) or not set(opts) <= {"token", "budgetBytes", "policy"}:
        return False
    budget = opts.get("budgetBytes")
    return (
        _opt_str(opts.get("token"))
        and (budget is None or (_is_int(budget) and budget >= 0))
        and (opts.get("policy") is None or opts.get("policy") in _POLICIES)
    )


def _object_or_none(value: Any) -> bool:
    return value is None or isinstance(value, dict)


def _params_known(params: Any) -> bool:
    """Params whose every field lsprotocol reads as this module assumes."""
    if not isinstance(params, dict) or not set(params) <= _TOP_KEYS:
        return False
    caps = params.get("capabilities")
    if not isinstance(caps, dict):
        return False
    folders = params.get("workspaceFolders")
    if folders is not None and not (
        isinstance(folders, list)
        and all(
            isinstance(f, dict)
            and set(f) == {"uri", "name"}
            and isinstance(f["uri"], str)
            and isinstance(f["name"], str)
            for f in folders
        )
    ):
        return False
    info = params.get("clientInfo")
    if info is not None and not (
        isinstance(info, dict)
        and set(info) <= {"name", "version"}
        and isinstance(info.get("name"), str)
        and _opt_str(info.get("version"))
    ):
        return False
    token = params.get("workDoneToken")
    return (
        (params.get("processId") is None or _is_int(params.get("processId")))
        and _opt_str(params.get("locale"))
        and _opt_str(params.get("rootPath"))
        and _opt_str(params.get("rootUri"))
        and (params.get("trace") is None or params.get("trace") in _TRACE)
        and (token is None or _is_int(token) or isinstance(token, str))
        and _options_known(params.get("initializationOptions"))
        and _object_or_none(caps.get("general"))
        and _object_or_none(caps.get("textDocument"))
        and _object_or_none((caps.get("textDocument") or {}).get("synchronization"))
    )


def _position_encoding(caps: dict[str, Any]) -> str | None:
    """pygls's choice: the client's first encoding it supports, else UTF-16 (None: a list
    this module does not read as lsprotocol would)."""
    encodings = (caps.get("general") or {}).get("positionEncodings")
    if encodings is None:
        return "utf-16"
    if not isinstance(encodings, list) or not all(isinstance(e, str) for e in encodings):
        return None
    return next((e for e in encodings if e in POSITION_ENCODINGS), "utf-16")


def initialize_result(params: Any) -> dict[str, Any] | None:
    """The result fresh-ls's server answers ``initialize`` with, as JSON, or None when
    these params are outside what this module knows for certain."""
    if not _params_known(params):
        return None
    caps = params["capabilities"]
    encoding = _position_encoding(caps)
    if encoding is None:
        return None
    sync_caps = (caps.get("textDocument") or {}).get("synchronization") or {}
    sync: dict[str, Any] = {"openClose": True, "change": 2}
    for key in ("willSave", "willSaveWaitUntil"):
        # pygls: ``client_value and <server handles it>``; fresh-ls handles neither.
        value = sync_caps.get(key)
        if value is not None:
            if not isinstance(value, bool):
                return None
            sync[key] = False
    sync["save"] = True
    return {
        "capabilities": {
            "positionEncoding": encoding,
            "textDocumentSync": sync,
            "executeCommandProvider": {"commands": []},
            "workspace": {
                "workspaceFolders": {"supported": True, "changeNotifications": True},
                "fileOperations": {},
            },
        },
        "serverInfo": {"name": "fresh-ls", "version": __version__},
    }


def answer_frame(msg_id: int | str, result: dict[str, Any]) -> bytes:
    """The answer as pygls frames it (same headers, same key order)."""
    body = json.dumps({"id": msg_id, "jsonrpc": "2.0", "result": result}).encode("utf-8")
    head = f"Content-Length: {len(body)}\r\nContent-Type: {CONTENT_TYPE}\r\n\r\n"
    return head.encode("ascii") + body


def _read_some(fd: int, n: int, deadline: float | None) -> bytes | None:
    """Up to ``n`` bytes of ``fd`` (b"" at its end), or None when ``deadline`` (a
    ``time.monotonic`` instant) passes first."""
    if deadline is not None:
        remaining = deadline - time.monotonic()
        try:
            ready, _, _ = select.select([fd], [], [], max(0.0, remaining))
        except (OSError, ValueError):
            ready = [fd]  # not pollable (a regular file): a read does not wait anyway
        if not ready:
            return None
    return os.read(fd, n)


def _read_frame(
    fd: int, max_message_bytes: int, wait_s: float | None = None
) -> tuple[bytes | None, bytes]:
    """The first frame's body (None when there is none to read: a broken frame, the end of
    stdin, no whole frame within ``wait_s`` seconds) and the bytes read after it; with no
    body, every byte read."""
    buf = bytearray()
    pos = 0
    steps = frame_steps(max_message_bytes)
    deadline = None if wait_s is None else time.monotonic() + wait_s
    try:
        want = next(steps)
        while True:
            if want == LINE:
                end = buf.find(b"\n", pos)
                while end < 0:
                    chunk = _read_some(fd, 65536, deadline)
                    if not chunk:
                        return None, bytes(buf)
                    buf += chunk
                    end = buf.find(b"\n", pos)
                piece, pos = bytes(buf[pos : end + 1]), end + 1
            else:
                while len(buf) - pos < want:
                    chunk = _read_some(fd, max(65536, want - (len(buf) - pos)), deadline)
                    if not chunk:
                        return None, bytes(buf)
                    buf += chunk
                piece, pos = bytes(buf[pos : pos + want]), pos + want
            want = steps.send(piece)
    except StopIteration as done:
        return done.value, bytes(buf[pos:])
    except (FrameError, EOFError, OSError):
        return None, bytes(buf)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def answer_first(
    stdin_fd: int, stdout_fd: int, max_message_bytes: int, wait_s: float | None = None
) -> EarlyStart:
    """Read stdin's first frame and answer it when it is an ``initialize`` whose answer is
    known (``initialize_result``); otherwise answer nothing. Waits for the frame at most
    ``wait_s`` seconds (None: until it is in): a server that also listens must not keep
    its endpoint closed while a stdio client stays silent (``LISTEN_WAIT_S``)."""
    body, rest = _read_frame(stdin_fd, max_message_bytes, wait_s)
    if body is None:
        return EarlyStart(rest=rest)
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        data = None
    msg_id = data.get("id") if isinstance(data, dict) else None
    if not (
        isinstance(data, dict)
        and data.get("jsonrpc") == "2.0"
        and data.get("method") == "initialize"
        and (isinstance(msg_id, str) or _is_int(msg_id))
    ):
        return EarlyStart(rest=_frame_again(body) + rest)
    result = initialize_result(data.get("params"))
    if result is None:
        return EarlyStart(rest=_frame_again(body) + rest)
    assert msg_id is not None
    try:
        _write_all(stdout_fd, answer_frame(msg_id, result))
    except OSError:
        return EarlyStart(rest=_frame_again(body) + rest)
    return EarlyStart(rest=rest, body=body, msg_id=msg_id, result=result)


def _frame_again(body: bytes) -> bytes:
    """A body read here, framed again for the server's reader (its headers are gone;
    ``Content-Length`` is the only one the server reads)."""
    return f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body
