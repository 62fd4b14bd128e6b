"""The proxy registers views from tool results and rewrites the three request shapes so that
no stale code goes upstream; when it cannot, the agent gets its API's own error."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, web

from fresh_ls.client import ConnectionClosedError
from fresh_ls.proxy.app import Proxy
from fresh_ls.proxy.serve import running_proxy
from fresh_ls.proxy.shapes import session_of
from tests.proxy.scripted_model import ScriptedModel

SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
CHANGED = SOURCE.replace("return 2", "return 20")


def _listing(text: str) -> str:
    lines = text.split("\n")
    return "\n".join(f"{i}\t{line}" for i, line in enumerate(lines, 1))


def anthropic_body(workspace: Path, result: str) -> dict[str, Any]:
    return {
        "model": "m",
        "system": [{"type": "text", "text": "You are an agent."}],
        "tools": [{"name": "Read"}],
        "messages": [
            {"role": "user", "content": "fix g"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "Read",
                        "input": {"file_path": str(workspace / "a.py")},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": result}],
            },
        ],
    }


def chat_body(result: str) -> dict[str, Any]:
    return {
        "model": "m",
        "tools": [{"type": "function", "function": {"name": "read"}}],
        "messages": [
            {"role": "system", "content": "You are Pi."},
            {"role": "user", "content": "fix g"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_r1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path":"a.py"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_r1", "content": result},
        ],
    }


def responses_body(result: str) -> dict[str, Any]:
    preamble = (
        "Chunk ID: 9f\nWall time: 0.0100 seconds\nProcess exited with code 0\n"
        "Original token count: 20\nOutput:\n"
    )
    return {
        "model": "m",
        "instructions": "You are Codex.",
        "tools": [{"type": "function", "name": "exec_command"}],
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix"}]},
            {
                "type": "function_call",
                "call_id": "call_x1",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "cat -n a.py"}),
            },
            {"type": "function_call_output", "call_id": "call_x1", "output": preamble + result},
        ],
    }


async def _post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    async with ClientSession() as http, http.post(url, json=body, headers=headers or {}) as r:
        raw = await r.read()
        return r.status, json.loads(raw) if raw else None


@contextlib.asynccontextmanager
async def proxied(workspace: Path, **kw: Any) -> AsyncIterator[tuple[ScriptedModel, Proxy, str]]:
    model = ScriptedModel([], workspace)
    model.start()
    try:
        async with running_proxy(workspace, model.url, **kw) as (proxy, url):
            yield model, proxy, url
    finally:
        model.stop()


async def test_anthropic_stale_read_becomes_marker_and_current_code(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = anthropic_body(workspace, _listing(SOURCE))
    headers = {"x-claude-code-session-id": "cc-1"}
    async with proxied(workspace, placement="end") as (model, proxy, url):
        await _post(url + "/v1/messages?beta=true", body, headers)
        sent = model.model_requests[-1]
        assert sent.body == body  # all fresh: sent as it came
        (workspace / "a.py").write_text(CHANGED)
        await _post(url + "/v1/messages?beta=true", body, headers)
        sent = model.model_requests[-1]
        assert sent.query == "beta=true"
        content = sent.body["messages"][2]["content"]
        marker = content[0]["content"]
        assert "toolu_01" in marker and "a.py" in marker and "return 2\n" not in marker
        assert "return 20" in content[-1]["text"]
        assert "return 2\n" not in json.dumps(sent.body)
        assert sent.body["messages"][:2] == body["messages"][:2]
        assert list(proxy.sessions) == ["claude-code-session-id:cc-1"]
        assert proxy.rewritten == 1


async def test_chat_completions_pi_read(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = chat_body(SOURCE.rstrip("\n"))
    async with proxied(workspace, placement="end") as (model, _proxy, url):
        await _post(url + "/v1/chat/completions", body)
        assert model.model_requests[-1].body == body
        (workspace / "a.py").write_text(CHANGED)
        await _post(url + "/v1/chat/completions", body)
        messages = model.model_requests[-1].body["messages"]
        assert "call_r1" in messages[3]["content"] and "a.py" in messages[3]["content"]
        assert messages[-1]["role"] == "user" and "return 20" in messages[-1]["content"]


async def test_responses_codex_cat_n(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    numbered = "".join(f"{i:6d}\t{line}\n" for i, line in enumerate(SOURCE.splitlines(), 1))
    body = responses_body(numbered)
    async with proxied(workspace, placement="end") as (model, _proxy, url):
        await _post(url + "/v1/responses", body, {"session-id": "codex-1"})
        assert model.model_requests[-1].body == body
        (workspace / "a.py").write_text(CHANGED)
        await _post(url + "/v1/responses", body, {"session-id": "codex-1"})
        items = model.model_requests[-1].body["input"]
        assert items[:2] == body["input"][:2]
        assert "call_x1" in items[2]["output"] and "return 2\n" not in items[2]["output"]
        assert items[-1]["role"] == "user"
        assert "return 20" in items[-1]["content"][0]["text"]


async def test_agent_write_is_reported_as_self(workspace: Path) -> None:
    """An Edit result reaches fresh-ls as fresh/didWrite: the change is the session's own."""
    (workspace / "a.py").write_text(SOURCE)
    body = anthropic_body(workspace, _listing(SOURCE))
    headers = {"x-fresh-ls-session": "mine"}
    async with proxied(workspace) as (_model, proxy, url):
        await _post(url + "/v1/messages", body, headers)
        (workspace / "a.py").write_text(CHANGED)
        edit = {
            "type": "tool_use",
            "id": "toolu_02",
            "name": "Edit",
            "input": {"file_path": str(workspace / "a.py"), "old_string": "2", "new_string": "20"},
        }
        result = {"type": "tool_result", "tool_use_id": "toolu_02", "content": "updated"}
        body["messages"] += [
            {"role": "assistant", "content": [edit]},
            {"role": "user", "content": [result]},
        ]
        await _post(url + "/v1/messages", body, headers)
        stale = await proxy.client.stale("mine")
        (view,) = stale["views"]
        assert view["viewId"] == "toolu_01"
        assert {u.get("changedBy") for u in view["units"] if u["status"] != "fresh"} == {"self"}


def test_shapes_by_path() -> None:
    from fresh_ls.proxy.shapes import shape_of

    assert shape_of("POST", "/v1/messages") == "anthropic"
    assert shape_of("POST", "/v1/messages/count_tokens") is None
    assert shape_of("POST", "/api/v1/chat/completions") == "chat"
    assert shape_of("POST", "/v1/responses") == "responses"
    assert shape_of("POST", "/v1/responses/compact") == "responses"
    assert shape_of("GET", "/v1/responses") is None
    assert shape_of("GET", "/v1/models") is None


def test_sessions() -> None:
    body = {"system": "s", "messages": [{"role": "user", "content": "task"}]}
    longer = {**body, "messages": [*body["messages"], {"role": "assistant", "content": "x"}]}
    auto = session_of("anthropic", {}, body)
    assert auto.startswith("conversation:") and auto == session_of("anthropic", {}, longer)
    assert auto != session_of("anthropic", {}, {**body, "system": "other"})
    assert session_of("anthropic", {"x-claude-code-session-id": "c"}, body) == (
        "claude-code-session-id:c"
    )
    assert session_of("responses", {"session-id": "k"}, {}) == "session-id:k"
    ours = {"x-fresh-ls-session": "me", "x-claude-code-session-id": "c"}
    assert session_of("anthropic", ours, body) == "me"


# -- when the request cannot be made current -------------------------------------------------


class _Gone:
    """A client whose server has gone away."""

    async def observe(self, *a: Any, **k: Any) -> Any:
        raise ConnectionClosedError(None, "the server closed the connection", "fresh/observe")

    async def did_write(self, *a: Any, **k: Any) -> None:
        raise ConnectionClosedError(None, "the server closed the connection", "fresh/didWrite")

    async def close(self) -> None:
        pass


class _Churning:
    """A server whose commits keep failing (a file keeps changing)."""

    async def observe(self, session: str, path: str, **k: Any) -> Any:
        return {"viewId": k.get("view_id")}

    async def stale(self, session: str, view_ids: Any = None) -> Any:
        return {"views": [{"viewId": "toolu_01"}]}

    async def project(self, session: str, **k: Any) -> Any:
        return {"planId": "p1", "markers": [{"viewId": "toolu_01", "text": "M"}], "rendered": "R"}

    async def commit(self, plan_id: str) -> Any:
        return {"ok": False, "changed": ["a.py"]}

    async def did_write(self, *a: Any, **k: Any) -> None:
        pass

    async def close(self) -> None:
        pass


@contextlib.asynccontextmanager
async def with_client(
    workspace: Path, client: Any, fail_open: bool = False
) -> AsyncIterator[tuple[ScriptedModel, str]]:
    model = ScriptedModel([], workspace)
    model.start()

    async def connect() -> Any:
        return client

    proxy = Proxy(workspace, model.url, connect, fail_open=fail_open)
    await proxy.start()
    runner = proxy.runner()
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield model, f"http://127.0.0.1:{port}{proxy.access.prefix}"
    finally:
        await runner.cleanup()
        await proxy.close()
        model.stop()


async def test_server_gone_answers_anthropic_error_and_sends_nothing(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    async with with_client(workspace, _Gone()) as (model, url):
        status, answer = await _post(
            url + "/v1/messages", anthropic_body(workspace, _listing(SOURCE))
        )
        assert status == 503
        assert answer["type"] == "error" and answer["error"]["type"] == "api_error"
        assert "fresh-ls server is gone" in answer["error"]["message"]
        status, answer = await _post(url + "/v1/responses", responses_body("     1\tx\n"))
        assert status == 503 and "fresh-ls" in answer["error"]["message"]
        assert answer["error"]["code"] == "fresh_ls_not_current"
        assert model.model_requests == []


async def test_commit_failing_twice_answers_openai_error(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    async with with_client(workspace, _Churning()) as (model, url):
        status, answer = await _post(url + "/v1/chat/completions", chat_body(SOURCE))
        assert status == 503
        assert "fresh/commit failed twice" in answer["error"]["message"]
        assert "a.py" in answer["error"]["message"]
        assert model.model_requests == []


async def test_fail_open_forwards_the_original(workspace: Path, capfd: Any) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = anthropic_body(workspace, _listing(SOURCE))
    async with with_client(workspace, _Gone(), fail_open=True) as (model, url):
        status, _ = await _post(url + "/v1/messages", body)
        assert status == 200
        assert model.model_requests[-1].body == body
    assert "forwarding /v1/messages unrewritten (--fail-open)" in capfd.readouterr().err


async def _post_raw(url: str, data: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    async with ClientSession() as http, http.post(url, data=data, headers=headers) as r:
        return r.status, await r.json(content_type=None)


async def test_compressed_and_unreadable_bodies(workspace: Path) -> None:
    """A gzip body is read and rewritten (sent plain); a body the proxy cannot read is never
    forwarded as if it were current."""
    import gzip

    (workspace / "a.py").write_text(SOURCE)
    body = anthropic_body(workspace, _listing(SOURCE))
    packed = gzip.compress(json.dumps(body).encode())
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    async with proxied(workspace, placement="end") as (model, _proxy, url):
        status, _ = await _post_raw(url + "/v1/messages", packed, headers)
        assert status == 200 and model.model_requests[-1].body == body  # unchanged: as sent
        (workspace / "a.py").write_text(CHANGED)
        status, _ = await _post_raw(url + "/v1/messages", packed, headers)
        sent = model.model_requests[-1]
        assert status == 200 and "content-encoding" not in {k.lower() for k in sent.headers}
        assert sent.body["messages"][2]["content"][0]["content"].startswith("[fresh-ls]")
        count = len(model.records)
        status, answer = await _post_raw(
            url + "/v1/messages", b"\x28\xb5\x2f\xfd...", {**headers, "content-encoding": "zstd"}
        )
        assert status == 503 and "zstd-encoded" in answer["error"]["message"]
        status, answer = await _post_raw(url + "/v1/chat/completions", b"not json", {})
        assert status == 503 and "not JSON" in answer["error"]["message"]
        assert len(model.records) == count  # neither went upstream


async def test_a_dead_server_is_replaced(workspace: Path) -> None:
    """The proxy's fresh-ls server (the root's shared one, not its child) is SIGKILLed
    between two requests: the proxy starts another, which serves the views the first one
    stored, and the stale read is still replaced."""
    import asyncio
    import os
    import signal

    from fresh_ls.processes import alive

    (workspace / "a.py").write_text(SOURCE)
    body = anthropic_body(workspace, _listing(SOURCE))
    headers = {"x-fresh-ls-session": "s"}
    endpoint = workspace / ".fresh-ls" / "endpoint.json"
    async with proxied(workspace, placement="end") as (model, _proxy, url):
        await _post(url + "/v1/messages", body, headers)
        first = json.loads(endpoint.read_text())["pid"]
        os.kill(first, signal.SIGKILL)
        while alive(first):
            await asyncio.sleep(0.05)
        (workspace / "a.py").write_text(CHANGED)
        status, _ = await _post(url + "/v1/messages", body, headers)
        assert status == 200 and json.loads(endpoint.read_text())["pid"] != first
        content = model.model_requests[-1].body["messages"][2]["content"]
        assert content[0]["content"].startswith("[fresh-ls] toolu_01")
        assert "return 20" in json.dumps(content)
