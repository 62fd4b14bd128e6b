"""What the proxy sends differs from what the agent sent only inside the tool results it
changed: every other byte (the agent's whitespace, key order, escapes, non-ASCII text) is
the agent's own, so a prompt cache keyed on bytes keeps the whole prefix before the first
changed result. Checked for each model API through the real proxy and a real fresh-ls
server, with the default placement (a stale read becomes a marker, the current code a
refresh after the newest result) and with a result outside the root (a line added)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession

from tests.proxy.test_anchored import BIG, _anthropic_next, _chat_next, _responses_next
from tests.proxy.test_rewrite import (
    CHANGED,
    SOURCE,
    _listing,
    anthropic_body,
    chat_body,
    proxied,
    responses_body,
)

NOTE = "réparer g ✓ — naïve 𝄞"


def spelled(body: Any) -> bytes:
    """``body`` as no serialiser of the proxy would write it: ASCII escapes, tabs, spaces
    before commas, sorted keys."""
    return json.dumps(
        body, ensure_ascii=True, indent="\t", separators=(" ,", " :  "), sort_keys=True
    ).encode("ascii")


async def _send(url: str, data: bytes, headers: dict[str, str]) -> None:
    async with (
        ClientSession() as http,
        http.post(url, data=data, headers={"content-type": "application/json", **headers}) as r,
    ):
        assert r.status == 200, await r.text()


def assert_only_inside(sent: bytes, got: bytes, results: list[str]) -> list[Any]:
    """``got`` is ``sent`` but for the values of the tool results ``results`` (their
    texts as sent, found by their spelling, each once): every byte outside them is the
    same, in order. The values found in their place, in order."""
    text, out = sent.decode("utf-8"), got.decode("utf-8")
    spans = []
    for result in results:
        spelling = json.dumps(result, ensure_ascii=True)
        assert text.count(spelling) == 1, result[:40]
        start = text.index(spelling)
        spans.append((start, start + len(spelling)))
    decoder = json.JSONDecoder()
    values = []
    at = at_out = 0
    for start, end in sorted(spans):
        assert out[at_out : at_out + start - at] == text[at:start]
        value, at_out = decoder.raw_decode(out, at_out + start - at)
        values.append(value)
        at = end
    assert out[at_out:] == text[at:]
    return values


async def test_anthropic_marker_and_refresh_change_nothing_else(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = _anthropic_next(anthropic_body(workspace, _listing(SOURCE)), output=BIG)
    body["messages"][0]["content"] = NOTE
    data = spelled(body)
    headers = {"x-claude-code-session-id": "cc-bytes"}
    async with proxied(workspace) as (model, _proxy, url):
        await _send(url + "/v1/messages", data, headers)
        assert model.model_requests[-1].raw == data  # nothing to change: as it came
        (workspace / "a.py").write_text(CHANGED)
        await _send(url + "/v1/messages", data, headers)
        got = model.model_requests[-1].raw
    assert got != data
    marker, refreshed = assert_only_inside(data, got, [_listing(SOURCE), BIG])
    assert marker.startswith("[fresh-ls] toolu_01")
    assert refreshed.startswith(BIG + "\n\n[fresh-ls] R1,") and "return 20" in refreshed


async def test_chat_marker_and_refresh_change_nothing_else(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = _chat_next(chat_body(SOURCE.rstrip("\n")), output=BIG)
    body["messages"][1]["content"] = NOTE
    data = spelled(body)
    async with proxied(workspace) as (model, _proxy, url):
        await _send(url + "/v1/chat/completions", data, {})
        (workspace / "a.py").write_text(CHANGED)
        await _send(url + "/v1/chat/completions", data, {})
        got = model.model_requests[-1].raw
    marker, refreshed = assert_only_inside(data, got, [SOURCE.rstrip("\n"), BIG])
    assert "call_r1" in marker and "return 20" in refreshed


async def test_responses_marker_and_refresh_change_nothing_else(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    numbered = "".join(f"{i:6d}\t{line}\n" for i, line in enumerate(SOURCE.splitlines(), 1))
    body = _responses_next(responses_body(numbered), output=BIG)
    body["input"][0]["content"][0]["text"] = NOTE
    data = spelled(body)
    headers = {"session-id": "codex-bytes"}
    async with proxied(workspace) as (model, _proxy, url):
        await _send(url + "/v1/responses", data, headers)
        (workspace / "a.py").write_text(CHANGED)
        await _send(url + "/v1/responses", data, headers)
        got = model.model_requests[-1].raw
    original = body["input"][2]["output"]
    marker, refreshed = assert_only_inside(data, got, [original, BIG])
    assert marker.startswith("[fresh-ls] call_x1") and "return 20" in refreshed


async def test_a_result_outside_the_root_gets_its_line_and_nothing_else(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.py"
    outside.write_text(SOURCE)
    body = chat_body(SOURCE.rstrip("\n"))
    body["messages"][2]["tool_calls"][0]["function"]["arguments"] = json.dumps(
        {"path": str(outside)}
    )
    body["messages"][1]["content"] = NOTE
    data = spelled(body)
    async with proxied(workspace) as (model, _proxy, url):
        await _send(url + "/v1/chat/completions", data, {})
        got = model.model_requests[-1].raw
    (noted,) = assert_only_inside(data, got, [SOURCE.rstrip("\n")])
    assert noted.startswith(SOURCE.rstrip("\n")) and "does not track" in noted


def test_a_body_in_another_encoding_goes_back_in_it() -> None:
    """JSON may come as UTF-16 or with a UTF-8 byte order mark: the rewrite is written
    back in the same encoding, the mark kept."""
    from fresh_ls.proxy.app import Parsed

    body = {"messages": [{"role": "tool", "tool_call_id": "c", "content": "é"}]}
    new = {"messages": [{"role": "tool", "tool_call_id": "c", "content": "é!"}]}
    for encoding in ("utf-8-sig", "utf-16-le", "utf-16"):
        raw = json.dumps(body, ensure_ascii=False).encode(encoding)
        sent = Parsed.of(raw).with_body(new)
        assert json.loads(sent.decode(encoding)) == new
        assert sent[:2] == raw[:2]  # the mark (or the first character) as it was


def test_a_utf8_body_is_read_from_its_bytes_and_spliced_in_its_text() -> None:
    """A UTF-8 body is read without its text (``Parsed.of``), which is decoded only for a
    rewrite: non-ASCII text before and inside the changed value is spliced right, every
    other byte kept; integers of any length are read as ``json.loads`` reads them, and
    bytes that are no UTF-8 (a surrogate spelled in it) are refused as before."""
    from fresh_ls.proxy.app import CannotRewrite, Parsed

    body = {
        "n": 123456789012345678901234567890,
        "messages": [
            {"role": "user", "content": "ünïcödé 🙂 ✓"},
            {"role": "tool", "tool_call_id": "c", "content": "é 🙂"},
        ],
    }
    new = copy.deepcopy(body)
    new["messages"][1]["content"] = "é 🙂 ✓!"
    raw = json.dumps(body, ensure_ascii=False, indent=1).encode("utf-8")
    parsed = Parsed.of(raw)
    assert parsed.encoding == "utf-8" and parsed.body == json.loads(raw)
    assert type(parsed.body["n"]) is int
    assert "text" not in vars(parsed)  # not decoded until a rewrite needs it
    sent = parsed.with_body(new)
    assert json.loads(sent) == new
    head = raw.rindex("é 🙂".encode())  # the tool result's (the user's holds it too)
    assert sent[:head] == raw[:head]
    assert sent.endswith(raw[head + len("é 🙂".encode()) :])
    with pytest.raises(CannotRewrite):
        Parsed.of(b'{"a": "\xed\xa0\x80"}')
