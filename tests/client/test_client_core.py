"""The client's protocol core without any server: bytes in, bytes out."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from fresh_ls import errors, steps
from fresh_ls.client import (
    ClientCore,
    FreshClientError,
    InvalidParamsError,
    Message,
    PathOutsideRootError,
    ServerError,
    UnauthorizedError,
    handshake,
)
from fresh_ls.framing import LINE, FrameError, encode_frame


def _read(core: ClientCore, data: bytes) -> dict[str, Any]:
    stream = io.BytesIO(data)
    return steps.run(
        core.read_message(), lambda want: stream.readline() if want == LINE else stream.read(want)
    )


def _framed(message: dict[str, Any]) -> bytes:
    return encode_frame(json.dumps(message).encode())


def test_requests_get_increasing_ids_and_framed_bodies() -> None:
    core = ClientCore(lambda m: None)
    first, frame = core.request("fresh/status", {})
    second, _ = core.request("fresh/status", {})
    assert (first, second) == (1, 2)
    assert _read(ClientCore(lambda m: None), frame) == {
        "jsonrpc": "2.0", "id": 1, "method": "fresh/status", "params": {}
    }


def test_answers_match_their_request_and_notifications_are_handed_on() -> None:
    seen: list[dict[str, Any]] = []
    core = ClientCore(seen.append)
    msg_id, _ = core.request("fresh/stale", {"session": "s"}, waiter="w")
    note = {"jsonrpc": "2.0", "method": "fresh/didInvalidate", "params": {"session": "s"}}
    assert core.receive(note) is None and seen == [note]
    assert core.receive({"jsonrpc": "2.0", "id": 99, "result": {}}) is None  # not ours
    answer = core.receive({"jsonrpc": "2.0", "id": msg_id, "result": {"views": []}})
    assert answer is not None and answer.waiter == "w" and answer.value() == {"views": []}
    assert core.receive({"jsonrpc": "2.0", "id": msg_id, "result": {}}) is None  # answered


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (errors.InvalidParams.code, InvalidParamsError),
        (errors.OutsideRoot.code, PathOutsideRootError),
        (errors.Unauthorized.code, UnauthorizedError),
        (-32603, ServerError),
    ],
)
def test_error_answers_raise_the_exception_of_their_code(
    code: int, kind: type[FreshClientError]
) -> None:
    core = ClientCore(lambda m: None)
    msg_id, _ = core.request("fresh/observe", {})
    answer = core.receive({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": "m"}})
    assert answer is not None
    with pytest.raises(kind) as err:
        answer.value()
    assert (err.value.code, err.value.message, err.value.method) == (code, "m", "fresh/observe")


def test_the_end_of_the_stream_and_broken_frames() -> None:
    core = ClientCore(lambda m: None)
    with pytest.raises(EOFError):
        _read(core, b"")
    with pytest.raises(FrameError, match="inside a body"):
        _read(core, b"Content-Length: 9\r\n\r\n{}")
    with pytest.raises(ValueError):
        _read(core, _framed({"a": 1})[:-1] + b"]")  # not JSON
    assert _read(core, b"\r\n" + _framed({"id": 1})) == {"id": 1}


def test_handshake_sends_the_token_then_initialized() -> None:
    todo = handshake("tok", 100, "all")
    init = next(todo)
    assert isinstance(init, Message) and init.request and init.method == "initialize"
    assert init.params["initializationOptions"] == {
        "token": "tok", "budgetBytes": 100, "policy": "all"
    }
    done = todo.send({"capabilities": {}})
    assert (done.method, done.request) == ("initialized", False)
    with pytest.raises(StopIteration) as end:
        todo.send(None)
    assert end.value.value == {"capabilities": {}}


def test_a_project_answer_without_rendered_is_made_whole() -> None:
    """The client declares ``projectLeavesOut: ["rendered"]`` and rebuilds ``rendered``
    from the entries, as the contract frames them, last of the answer's keys; an answer
    that has it, or of another method, is left as it came."""
    init = next(handshake(None, None, None))
    assert init.params["capabilities"] == {
        "experimental": {"freshLs": {"projectLeavesOut": ["rendered"]}}
    }
    entries = [
        {"header": "[E-1] a.py lines 1-2", "text": "x = 1\ny = 2\n"},
        {"header": "[E-2] b.py lines 3-3", "text": "no end"},
        {"header": "[E-3] c.py lines 1-1", "text": "cr\r"},
    ]
    lean = {"planId": "p", "entries": entries, "omitted": [], "markers": [], "usedBytes": 0,
            "budgetBytes": 9}  # fmt: skip
    core = ClientCore(lambda m: None)
    msg_id, _ = core.request("fresh/project", {"session": "s"})
    answer = core.receive({"jsonrpc": "2.0", "id": msg_id, "result": dict(lean)})
    assert answer is not None
    got = answer.value()
    assert list(got) == [*lean, "rendered"]
    assert got["rendered"] == (
        "[E-1] a.py lines 1-2\nx = 1\ny = 2\n[E-2] b.py lines 3-3\nno end\n"
        "[E-3] c.py lines 1-1\ncr\r\n"
    )
    empty_id, _ = core.request("fresh/project", {"session": "s"})
    empty = core.receive({"jsonrpc": "2.0", "id": empty_id, "result": {**lean, "entries": []}})
    assert empty is not None and empty.value()["rendered"] == ""
    whole_id, _ = core.request("fresh/project", {"session": "s"})
    whole = core.receive({"jsonrpc": "2.0", "id": whole_id, "result": {**lean, "rendered": "r"}})
    assert whole is not None and whole.value()["rendered"] == "r"
    other_id, _ = core.request("fresh/gate", {"session": "s"})
    other = core.receive({"jsonrpc": "2.0", "id": other_id, "result": {"entries": entries}})
    assert other is not None and "rendered" not in other.value()
