"""`fresh-ls proxy` forwards everything as it came, and streams answers back unchanged."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, DummyCookieJar, web

from fresh_ls.proxy.serve import running_proxy
from tests.proxy.scripted_model import Reply

KEY = "sk-test-do-not-log-0123456789"


def _send(url: str, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, dict(resp.headers), resp.read()


@contextlib.asynccontextmanager
async def _upstream(handler: Any) -> AsyncIterator[int]:
    """A model server of one handler for every path, on 127.0.0.1: its port."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    finally:
        await runner.cleanup()


def test_first_line_and_proxy_json(workspace: Path, start_model, start_proxy) -> None:
    model = start_model([])
    proxy = start_proxy(workspace, model.url, "--port", "0")
    assert proxy.first_line.startswith("fresh-ls proxy: http://127.0.0.1:")
    assert proxy.first_line.endswith(f" -> {model.url}")
    record_path = workspace / ".fresh-ls" / "proxy.json"
    record = proxy.record()
    assert record["url"] == proxy.url and record["upstream"] == model.url
    assert record["pid"] == proxy.proc.pid
    assert stat.S_IMODE(os.stat(record_path).st_mode) == 0o600
    proxy.stop()
    assert not record_path.exists()


def test_paths_headers_and_query_pass_through(workspace: Path, start_model, start_proxy) -> None:
    model = start_model([])
    proxy = start_proxy(workspace, model.url)
    headers = {"x-api-key": KEY, "Authorization": f"Bearer {KEY}", "anthropic-beta": "a,b"}
    status, _, _ = _send(proxy.url + "/", "HEAD", headers=headers)
    assert status == 200
    status, _, models = _send(proxy.url + "/v1/models?limit=5&after=x%20y", headers=headers)
    assert status == 200 and json.loads(models)["data"][0]["id"] == "fake-model"
    count_body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    status, _, counted = _send(
        proxy.url + "/v1/messages/count_tokens?beta=true",
        "POST",
        count_body,
        {**headers, "content-type": "application/json"},
    )
    assert json.loads(counted) == {"input_tokens": 42}
    seen = [(r.method, r.path, r.query) for r in model.records]
    assert seen == [
        ("HEAD", "/", ""),
        ("GET", "/v1/models", "limit=5&after=x%20y"),
        ("POST", "/v1/messages/count_tokens", "beta=true"),
    ]
    for record in model.records:
        lower = {k.lower(): v for k, v in record.headers.items()}
        assert lower["x-api-key"] == KEY
        assert lower["authorization"] == f"Bearer {KEY}"
        assert lower["anthropic-beta"] == "a,b"
    assert model.records[2].body == count_body
    stderr = proxy.stop()
    assert KEY not in stderr


def test_streams_pass_through_byte_for_byte(workspace: Path, start_model, start_proxy) -> None:
    """The three shapes' SSE, through the proxy, are the bytes the model sent."""
    model = start_model([Reply(tool="Read", input={"file_path": str(workspace / "a.py")})] * 3)
    proxy = start_proxy(workspace, model.url)
    bodies = {
        "/v1/messages?beta=true": {
            "model": "m",
            "stream": True,
            "tools": [{"name": "Read"}],
            "messages": [{"role": "user", "content": "hi"}],
        },
        "/v1/chat/completions": {
            "model": "m",
            "stream": True,
            "stream_options": {"include_usage": True},
            "tools": [{"type": "function", "function": {"name": "read"}}],
            "messages": [{"role": "user", "content": "hi"}],
        },
        "/v1/responses": {
            "model": "m",
            "stream": True,
            "tools": [{"type": "function", "name": "exec_command"}],
            "input": [{"type": "message", "role": "user", "content": "hi"}],
        },
    }
    hdrs = {"content-type": "application/json", "x-api-key": KEY}
    for path, body in bodies.items():
        _, via_headers, via = _send(proxy.url + path, "POST", body, hdrs)
        _, _, direct = _send(model.url + path, "POST", body, hdrs)
        assert via_headers["Content-Type"].startswith("text/event-stream")
        # ids count up per answer: compare with them blanked
        assert _blank_ids(via) == _blank_ids(direct)
        assert b"data: " in via
    assert [r.body for r in model.records[::2]] == list(bodies.values())


def _blank_ids(raw: bytes) -> bytes:
    import re

    return re.sub(rb"_(\d{4})|chatcmpl-\d+", b"_ID", raw)


async def test_sse_is_not_buffered(workspace: Path) -> None:
    """The first event reaches the agent while the model still holds back the rest."""
    release = asyncio.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"event: message_start\ndata: {}\n\n")
        await release.wait()
        await response.write(b"event: message_stop\ndata: {}\n\n")
        await response.write_eof()
        return response

    try:
        async with (
            _upstream(slow) as port,
            running_proxy(workspace, f"http://127.0.0.1:{port}") as (_proxy, url),
            ClientSession() as http,
            http.post(url + "/v1/messages", json={"model": "m", "messages": []}) as resp,
        ):
            first = await asyncio.wait_for(resp.content.readuntil(b"\n\n"), 10)
            assert first == b"event: message_start\ndata: {}\n\n"
            release.set()
            rest = await asyncio.wait_for(resp.content.read(), 10)
            assert rest == b"event: message_stop\ndata: {}\n\n"
    finally:
        release.set()


async def test_upstream_cookies_are_not_kept_between_requests(workspace: Path) -> None:
    """The proxy is not a browser: a ``Set-Cookie`` from upstream reaches the client that
    asked, and no later request (of any client) carries a cookie its own client did not
    send. Several agents share one proxy; a jar in it would pass one's cookie to another."""
    seen: list[str | None] = []

    async def model(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Cookie"))
        return web.json_response(
            {"ok": True}, headers={"Set-Cookie": "session=upstream-secret; Path=/"}
        )

    async with (
        _upstream(model) as port,
        # a host name, not an address: a jar keeps no cookie of an IP address
        running_proxy(workspace, f"http://localhost:{port}") as (_proxy, url),
        ClientSession(cookie_jar=DummyCookieJar()) as http,
    ):
        async with http.get(url + "/v1/models") as first:
            assert first.headers.get("Set-Cookie") == "session=upstream-secret; Path=/"
        async with http.get(url + "/v1/models"):
            pass
        async with http.get(url + "/v1/models", headers={"Cookie": "mine=1"}):
            pass
    assert seen == [None, None, "mine=1"]
