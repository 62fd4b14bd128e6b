"""The model APIs the proxy reads and rewrites, one class each: where each keeps its tool
calls and results, how a conversation starts, how it says an error, and which rewriter
makes one of its requests current. Everything else in the proxy names an API through these
classes (``API[name]``, ``api_of``), never by comparing strings.

- ``AnthropicMessages`` (``POST …/v1/messages``): ``tool_use`` blocks in assistant
  messages, ``tool_result`` blocks (``tool_use_id``) in user messages.
- ``OpenAIChat`` (``POST …/chat/completions``): ``tool_calls`` on assistant messages,
  ``{"role": "tool", "tool_call_id"}`` messages.
- ``OpenAIResponses`` (``POST …/responses``): ``input`` items ``function_call`` /
  ``function_call_output``, ``custom_tool_call`` / ``custom_tool_call_output`` and
  ``local_shell_call`` / ``local_shell_call_output``, paired by ``call_id``.

A body is parsed once (``proxy.app.Parsed``); these classes read the parsed object, and a
rewrite is spliced back into the agent's bytes (``proxy.splice``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from fresh_ls.harness.rewrite import Format, ResultSpans, Rewritten, arewrite_request
from fresh_ls.toolcalls.agents import ToolCall, arguments_of

Shape = Literal["anthropic", "chat", "responses"]
#: Where a tool result's holder is in a body (keys and indices), and the key of its content.
Holder = tuple[tuple[Any, ...], str]


def text_of(content: Any) -> str:
    """A tool result's content as one string (text parts joined; images and the like
    dropped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mappings(value: Any) -> list[Mapping[str, Any]]:
    """The objects of a list (anything else in it, or no list, skipped). A parsed body's
    objects are dicts: the exact type check comes first, the ABC's only for the rest (it
    costs ten times as much, on every message and block of a long history)."""
    return [item for item in _list(value) if type(item) is dict or isinstance(item, Mapping)]


class ModelApi:
    """One model API: what the proxy reads in its requests and how it answers."""

    #: the API's name in ``proxy.json``, logs and ``Shape``
    name: ClassVar[Shape]
    #: the ``type`` of a text part in a tool result's list of parts
    text_part: ClassVar[str] = "text"
    #: the harness rewriter's name for its message form (None: no ``messages`` list)
    form: ClassVar[Format | None] = None

    def handles(self, tail: str) -> bool:
        """Whether a POST to ``tail`` (no trailing slash) is one of this API's requests."""
        raise NotImplementedError

    def tool_calls(self, body: Mapping[str, Any]) -> list[ToolCall]:
        """Every tool call of the request that has its result in the request, in order,
        each result paired with its call by id (a result whose call is not in the request
        has no name and no arguments).

        Each API walks its own body in one plain loop, the calls seen so far kept by id:
        this runs on every request, over the whole history, and a generator of a tuple per
        call and per result cost twice as much."""
        raise NotImplementedError

    def result_holders(self, body: Mapping[str, Any], call_id: str) -> list[Holder]:
        """Where the dicts holding the tool result of ``call_id`` are, each with the key
        of its content."""
        raise NotImplementedError

    def start_of(self, body: Mapping[str, Any]) -> Any:
        """What a conversation begins with, the same in every request of it: the system
        prompt and the first user turn."""
        raise NotImplementedError

    def error(self, message: str, status: int) -> dict[str, Any]:
        """An error body in this API's format."""
        return openai_error(message, status)

    async def rewrite(
        self,
        client: Any,
        session: str,
        body: dict[str, Any],
        *,
        result_spans: ResultSpans | None = None,
        **options: Any,
    ) -> tuple[dict[str, Any], Rewritten]:
        """The request made current with the harness rewriter (``options``: its
        keywords), and what the rewriter made. A ``messages`` API's list goes to the
        rewriter as it is (in its ``form``); a Responses body's input items are turned into
        messages and back (``proxy.responses``)."""
        if self.form is None:
            from fresh_ls.proxy.responses import arewrite_responses

            return await arewrite_responses(client, session, body, **options)
        done = await arewrite_request(
            client, session, body, fmt=self.form, result_spans=result_spans, **options
        )
        return dict(done.request), done


class _MessagesApi(ModelApi):
    """An API whose requests are a ``messages`` list the harness rewriter reads as it is."""

    form: ClassVar[Format | None]


class AnthropicMessages(_MessagesApi):
    name = "anthropic"
    form = "anthropic"

    def handles(self, tail: str) -> bool:
        return tail.endswith("/messages")

    def tool_calls(self, body: Mapping[str, Any]) -> list[ToolCall]:
        calls: dict[str, tuple[str, Any]] = {}
        found: list[ToolCall] = []
        for message in _mappings(body.get("messages")):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if type(block) is not dict and not isinstance(block, Mapping):
                    continue
                kind = block.get("type")
                if kind == "tool_use":
                    call_id = block.get("id")
                    if isinstance(call_id, str):
                        calls[call_id] = (str(block.get("name", "")), block.get("input"))
                        continue
                if kind == "tool_result":
                    call_id = block.get("tool_use_id")
                    if isinstance(call_id, str):
                        output = text_of(block.get("content"))
                        error = bool(block.get("is_error"))
                        found.append(ToolCall.quickly(call_id, calls.get(call_id), output, error))
        return found

    def result_holders(self, body: Mapping[str, Any], call_id: str) -> list[Holder]:
        found: list[Holder] = []
        for m, message in enumerate(_list(body.get("messages"))):
            if not isinstance(message, dict):
                continue
            for b, block in enumerate(_list(message.get("content"))):
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_result"
                    and block.get("tool_use_id") == call_id
                ):
                    found.append((("messages", m, "content", b), "content"))
        return found

    def start_of(self, body: Mapping[str, Any]) -> Any:
        return _messages_start(body, body.get("system"))

    def error(self, message: str, status: int) -> dict[str, Any]:
        kind = _ANTHROPIC_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}


class OpenAIChat(_MessagesApi):
    name = "chat"
    form = "openai"

    def handles(self, tail: str) -> bool:
        return tail.endswith("/chat/completions")

    def tool_calls(self, body: Mapping[str, Any]) -> list[ToolCall]:
        calls: dict[str, tuple[str, Any]] = {}
        found: list[ToolCall] = []
        for message in _mappings(body.get("messages")):
            role = message.get("role")
            if role == "assistant":
                for call in message.get("tool_calls") or []:
                    if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                        function = call.get("function") or {}
                        name = str(function.get("name", ""))
                        calls[call["id"]] = (name, arguments_of(function.get("arguments")))
            elif role == "tool" and isinstance(message.get("tool_call_id"), str):
                call_id = message["tool_call_id"]
                output = text_of(message.get("content"))
                found.append(ToolCall.quickly(call_id, calls.get(call_id), output))
        return found

    def result_holders(self, body: Mapping[str, Any], call_id: str) -> list[Holder]:
        return [
            (("messages", m), "content")
            for m, message in enumerate(_list(body.get("messages")))
            if isinstance(message, dict)
            and message.get("role") == "tool"
            and message.get("tool_call_id") == call_id
        ]

    def start_of(self, body: Mapping[str, Any]) -> Any:
        return _messages_start(body, None)


class OpenAIResponses(ModelApi):
    name = "responses"
    text_part = "input_text"
    #: the item types that carry a tool's output
    OUTPUT_ITEMS: ClassVar[tuple[str, ...]] = (
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
    )

    def handles(self, tail: str) -> bool:
        return tail.endswith(("/responses", "/responses/compact"))  # compact: Codex's summary

    def tool_calls(self, body: Mapping[str, Any]) -> list[ToolCall]:
        calls: dict[str, tuple[str, Any]] = {}
        found: list[ToolCall] = []
        for item in _mappings(body.get("input")):
            kind = item.get("type")
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                continue
            name = str(item.get("name", ""))
            if kind == "function_call":
                calls[call_id] = (name, arguments_of(item.get("arguments")))
            elif kind == "custom_tool_call":
                calls[call_id] = (name, item.get("input"))
            elif kind == "local_shell_call":
                calls[call_id] = ("local_shell", item.get("action") or {})
            elif kind in self.OUTPUT_ITEMS:
                output = text_of(item.get("output"))
                found.append(ToolCall.quickly(call_id, calls.get(call_id), output))
        return found

    def result_holders(self, body: Mapping[str, Any], call_id: str) -> list[Holder]:
        return [
            (("input", i), "output")
            for i, item in enumerate(_list(body.get("input")))
            if isinstance(item, dict)
            and item.get("call_id") == call_id
            and str(item.get("type", "")).endswith("_output")
        ]

    def start_of(self, body: Mapping[str, Any]) -> Any:
        items = body.get("input")
        first: Any = items if isinstance(items, str) else None
        if isinstance(items, list):
            item = next(
                (i for i in items if isinstance(i, Mapping) and i.get("role") == "user"), None
            )
            first = text_of(item.get("content")) if item is not None else None
        return [body.get("instructions"), first]


def _messages_start(body: Mapping[str, Any], system: Any) -> list[str]:
    first_user = None
    for message in _mappings(body.get("messages")):
        if message.get("role") in ("system", "developer") and system is None:
            system = message.get("content")
        if message.get("role") == "user":
            first_user = message.get("content")
            break
    return [text_of(system), text_of(first_user)]


#: Anthropic's error ``type`` for the statuses fresh-ls answers with itself.
_ANTHROPIC_TYPES = {403: "permission_error", 408: "timeout_error", 413: "request_too_large"}


def openai_error(message: str, status: int) -> dict[str, Any]:
    """An error body in OpenAI's format (also what a request of no known API gets)."""
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error" if status < 500 else "server_error",
            "param": None,
            "code": "fresh_ls_refused" if status == 403 else "fresh_ls_not_current",
        }
    }


#: Each API by name, in the order a path is tried.
API: dict[Shape, ModelApi] = {
    api.name: api for api in (AnthropicMessages(), OpenAIChat(), OpenAIResponses())
}


def api_of(method: str, path: str) -> ModelApi | None:
    """The API a request is read as, or None (passed through as it is)."""
    if method != "POST":
        return None
    tail = path.rstrip("/")
    return next((api for api in API.values() if api.handles(tail)), None)
