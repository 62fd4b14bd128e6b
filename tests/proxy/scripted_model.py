"""A scripted model server: a real aiohttp server on 127.0.0.1 that answers from a script.

It speaks the three request shapes the agents use (Anthropic Messages, OpenAI Chat
Completions, OpenAI Responses), streams server-sent events when the request asks for it
(``"stream": true``) and answers plain JSON otherwise. The reply to a request is picked by how
many assistant turns its history already holds; a request that offers no tools (a title, a
summary) gets plain text. Every request is recorded with a copy of the workspace files at the
moment it arrived (``Record.files``), so a test can compare what the model was shown with
what the disk held.

It runs on its own event loop in a thread, so a test can drive a real agent (a subprocess) or
an in-process proxy against it alike.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web


@dataclass
class Reply:
    """One scripted assistant turn: text, or one tool call."""

    text: str | None = None
    tool: str | None = None
    input: Any = None  # a dict; a string for a freeform (custom) tool
    custom: bool = False  # Responses: a custom_tool_call (Codex's freeform apply_patch)
    #: runs once the request that gets this reply is recorded (an outside change to a file)
    after: Callable[[], None] | None = None


Step = Reply | Callable[[dict[str, Any]], Reply]


@dataclass
class Record:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    files: dict[str, str]  # workspace path -> text, as the disk held it on arrival
    turn: int | None = None  # the script step it was answered from (None: a side request)
    raw: bytes = b""  # the body's bytes as they arrived


SKIP_DIRS = {".fresh-ls", ".git", "node_modules", "__pycache__"}


def snapshot(root: Path | None) -> dict[str, str]:
    if root is None or not root.is_dir():
        return {}
    files: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in SKIP_DIRS for part in rel.parts) or not path.is_file():
            continue
        try:
            files[rel.as_posix()] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return files


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n".encode()


def _pieces(text: str) -> list[str]:
    """Tool arguments in two pieces, as real models stream them."""
    middle = len(text) // 2
    return [text[:middle], text[middle:]] if middle else [text]


class ScriptedModel:
    def __init__(
        self, script: list[Step], workspace: Path | None = None, *, by_request: bool = False
    ) -> None:
        """``by_request``: pick the reply by how many model requests came before, and answer
        requests without tools from the script too (aider has no tools, and its prompt
        holds example assistant turns)."""
        self.script = script
        self.workspace = workspace
        self.by_request = by_request
        self._served = 0
        self.records: list[Record] = []
        self.model_requests: list[Record] = []
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self.url = ""
        self._ran: set[int] = set()

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> str:
        ready = threading.Event()

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            loop.run_until_complete(self._start())
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._stop())
            loop.close()

        self._thread = threading.Thread(target=main, daemon=True, name="scripted-model")
        self._thread.start()
        ready.wait(10)
        return self.url

    async def _start(self) -> None:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> ScriptedModel:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering ------------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.StreamResponse:
        files = snapshot(self.workspace)
        raw = await request.read()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        record = Record(
            request.method,
            request.path,
            request.raw_path.partition("?")[2],
            dict(request.headers),
            body,
            files,
            raw=raw,
        )
        self.records.append(record)
        path = request.path.rstrip("/")
        if request.method == "HEAD" or (request.method == "GET" and path == ""):
            return web.Response(status=200)
        if path.endswith("/count_tokens"):
            return web.json_response({"input_tokens": 42})
        if path.endswith("/models"):
            return web.json_response(
                {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
            )
        shape = (
            "anthropic"
            if path.endswith("/messages")
            else "chat"
            if path.endswith("/chat/completions")
            else "responses"
            if path.endswith("/responses")
            else None
        )
        if shape is None or not isinstance(body, dict):
            return web.json_response({"error": {"message": f"no route {path}"}}, status=404)
        self.model_requests.append(record)
        reply = self._reply_for(shape, body, record)
        stream = bool(body.get("stream"))
        writer = {"anthropic": self._anthropic, "chat": self._chat, "responses": self._responses}
        return await writer[shape](request, body, reply, stream)

    def _reply_for(self, shape: str, body: dict[str, Any], record: Record) -> Reply:
        if self.by_request:
            turn = self._served
            self._served += 1
        elif not body.get("tools"):
            return Reply(text="ok")
        else:
            turn = assistant_turns(shape, body)
        record.turn = turn
        if turn >= len(self.script):
            return Reply(text="done")
        step = self.script[turn]
        reply = step(body) if callable(step) else step
        if reply.after is not None and turn not in self._ran:
            self._ran.add(turn)
            reply.after()
        return reply

    async def _open(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        return response

    async def _anthropic(
        self, request: web.Request, body: dict[str, Any], reply: Reply, stream: bool
    ) -> web.StreamResponse:
        n = next(self._ids)
        model = body.get("model", "fake-model")
        usage = {"input_tokens": 10, "output_tokens": 5}
        if reply.tool:
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": f"toolu_{n:04d}",
                "name": reply.tool,
                "input": reply.input,
            }
            stop = "tool_use"
        else:
            block = {"type": "text", "text": reply.text or ""}
            stop = "end_turn"
        message = {
            "id": f"msg_{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        if not stream:
            return web.json_response(message)
        response = await self._open(request)
        start = {**message, "content": [], "stop_reason": None}
        await response.write(_sse("message_start", {"type": "message_start", "message": start}))
        empty = {**block, "input": {}} if reply.tool else {"type": "text", "text": ""}
        await response.write(
            _sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": empty},
            )
        )
        if reply.tool:
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in _pieces(json.dumps(reply.input))
            ]
        else:
            deltas = [{"type": "text_delta", "text": reply.text or ""}]
        for delta in deltas:
            await response.write(
                _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                )
            )
        await response.write(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        await response.write(
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            )
        )
        await response.write(_sse("message_stop", {"type": "message_stop"}))
        await response.write_eof()
        return response

    async def _chat(
        self, request: web.Request, body: dict[str, Any], reply: Reply, stream: bool
    ) -> web.StreamResponse:
        n = next(self._ids)
        model = body.get("model", "fake-model")
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        call = None
        if reply.tool:
            call = {
                "id": f"call_{n:04d}",
                "type": "function",
                "function": {"name": reply.tool, "arguments": json.dumps(reply.input)},
            }
        finish = "tool_calls" if call else "stop"
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": reply.text}
            if call:
                message["tool_calls"] = [call]
            return web.json_response(
                {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                }
            )
        response = await self._open(request)

        def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
            }

        if call:
            head = {**call, "index": 0, "function": {"name": reply.tool, "arguments": ""}}
            await response.write(
                _sse(None, chunk({"role": "assistant", "content": None, "tool_calls": [head]}))
            )
            for piece in _pieces(call["function"]["arguments"]):
                await response.write(
                    _sse(
                        None,
                        chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                    )
                )
        else:
            await response.write(_sse(None, chunk({"role": "assistant", "content": ""})))
            await response.write(_sse(None, chunk({"content": reply.text or ""})))
        await response.write(_sse(None, chunk({}, finish)))
        if (body.get("stream_options") or {}).get("include_usage"):
            await response.write(_sse(None, {**chunk({}), "choices": [], "usage": usage}))
        await response.write(_sse(None, "[DONE]"))
        await response.write_eof()
        return response

    async def _responses(
        self, request: web.Request, body: dict[str, Any], reply: Reply, stream: bool
    ) -> web.StreamResponse:
        n = next(self._ids)
        model = body.get("model", "fake-model")
        if reply.tool and reply.custom:
            item: dict[str, Any] = {
                "type": "custom_tool_call",
                "id": f"ctc_{n:04d}",
                "call_id": f"call_{n:04d}",
                "name": reply.tool,
                "input": reply.input,
                "status": "completed",
            }
        elif reply.tool:
            item = {
                "type": "function_call",
                "id": f"fc_{n:04d}",
                "call_id": f"call_{n:04d}",
                "name": reply.tool,
                "arguments": json.dumps(reply.input),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{n:04d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text or "", "annotations": []}],
            }
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        done = {
            "id": f"resp_{n:04d}",
            "object": "response",
            "created_at": 0,
            "status": "completed",
            "model": model,
            "output": [item],
            "usage": usage,
        }
        if not stream:
            return web.json_response(done)
        response = await self._open(request)
        seq = itertools.count()

        async def send(kind: str, **data: Any) -> None:
            await response.write(_sse(kind, {"type": kind, "sequence_number": next(seq), **data}))

        await send(
            "response.created",
            response={**done, "status": "in_progress", "output": [], "usage": None},
        )
        if item["type"] == "message":
            await send(
                "response.output_item.added",
                output_index=0,
                item={**item, "status": "in_progress", "content": []},
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            await send(
                "response.content_part.added",
                item_id=item["id"],
                output_index=0,
                content_index=0,
                part=part,
            )
            await send(
                "response.output_text.delta",
                item_id=item["id"],
                output_index=0,
                content_index=0,
                delta=reply.text or "",
            )
            await send(
                "response.output_text.done",
                item_id=item["id"],
                output_index=0,
                content_index=0,
                text=reply.text or "",
            )
            await send(
                "response.content_part.done",
                item_id=item["id"],
                output_index=0,
                content_index=0,
                part=item["content"][0],
            )
        else:
            key = "input" if item["type"] == "custom_tool_call" else "arguments"
            kind = (
                "response.custom_tool_call_input"
                if key == "input"
                else "response.function_call_arguments"
            )
            await send(
                "response.output_item.added",
                output_index=0,
                item={**item, key: "", "status": "in_progress"},
            )
            for piece in _pieces(item[key]):
                await send(kind + ".delta", item_id=item["id"], output_index=0, delta=piece)
            await send(kind + ".done", item_id=item["id"], output_index=0, **{key: item[key]})
        await send("response.output_item.done", output_index=0, item=item)
        await send("response.completed", response=done)
        await response.write_eof()
        return response


def assistant_turns(shape: str, body: dict[str, Any]) -> int:
    """How many assistant turns the request's history holds."""
    if shape == "responses":
        items = body.get("input")
        if not isinstance(items, list):
            return 0
        return sum(
            1
            for i in items
            if isinstance(i, dict)
            and (
                i.get("type") in ("function_call", "custom_tool_call", "local_shell_call")
                or (i.get("role") == "assistant")
            )
        )
    messages = body.get("messages") or []
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


@dataclass
class Workspace:
    """A scratch workspace for a scripted run."""

    root: Path
    files: dict[str, str] = field(default_factory=dict)

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.files[rel] = text
