"""What the proxy reads out of a model request beyond each API's own walk
(``proxy.apis``: one class per API, ``Shape`` its name): the session it belongs to, aider's
views and writes, and a tool result's text changed (on a copy of only the path to it).

aider (chat completions, no tools) shows files as fenced blocks in a user message and edits
with SEARCH/REPLACE blocks in its replies: ``block_views`` and ``reply_writes``.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from fresh_ls.proxy.apis import API, api_of
from fresh_ls.proxy.apis import Shape as Shape  # the APIs' names, as the proxy says them
from fresh_ls.proxy.apis import text_of as _text_of
from fresh_ls.toolcalls import aider
from fresh_ls.toolcalls.agents import ToolCall

#: Our own header: names the session whatever the agent sends.
SESSION_HEADER = "x-fresh-ls-session"
#: Agents' own session headers, in the order they are looked for.
AGENT_SESSION_HEADERS = ("x-claude-code-session-id", "session-id", "x-session-id")


def shape_of(method: str, path: str) -> Shape | None:
    """The API a request path is read as (its name), or None (passed through as it is)."""
    api = api_of(method, path)
    return None if api is None else api.name


def tool_calls(shape: Shape, body: Mapping[str, Any]) -> list[ToolCall]:
    """Every tool call of the request that has its result in the request, in order."""
    return API[shape].tool_calls(body)


def session_of(shape: Shape, headers: Mapping[str, str], body: Mapping[str, Any]) -> str:
    """The session a request belongs to: our header, else the agent's own session header,
    else a stable hash of the conversation's start (system prompt and first user turn)."""
    ours = headers.get(SESSION_HEADER)
    if ours:
        return ours
    for name in AGENT_SESSION_HEADERS:
        value = headers.get(name)
        if value:
            return f"{name.removeprefix('x-')}:{value}"
    start = json.dumps(API[shape].start_of(body), sort_keys=True, ensure_ascii=False)
    return "conversation:" + hashlib.sha256(start.encode("utf-8")).hexdigest()[:16]


# -- aider: views and writes in plain chat messages ------------------------------------------


@dataclass(frozen=True)
class BlockView:
    """One of aider's fenced file blocks in a user message, as a view: its id, where it is
    (message index, and the span of the message's text it takes), the path and the text."""

    view_id: str
    message: int
    start: int
    end: int
    path: str
    text: str


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _after_examples(messages: list[Any]) -> int:
    """The index of the first message after aider's example conversation (0: none)."""
    start = 0
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str) and content.startswith(aider.EXAMPLES_END):
            start = index + 1
    return start


def block_views(shape: Shape, body: Mapping[str, Any]) -> list[BlockView]:
    """aider's whole-file blocks in the user messages of a chat request, each a view.

    The view id is ``aider:<path>:<digest of the text shown>``: the same for the same block
    in every request (aider moves its files message as the history grows, so no message index
    is in it), and new once the file shown changes. A second block of the same path and text
    in one request gets ``#2`` and so on."""
    messages = body.get("messages") if shape == "chat" else None
    if not isinstance(messages, list):
        return []
    found: list[BlockView] = []
    counts: dict[str, int] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") != "user":
            continue
        content = message.get("content")
        if not isinstance(content, str):
            continue
        for block in aider.file_blocks(content):
            key = f"aider:{block.path}:{_digest(block.text)}"
            counts[key] = counts.get(key, 0) + 1
            view_id = key if counts[key] == 1 else f"{key}#{counts[key]}"
            found.append(BlockView(view_id, index, block.start, block.end, block.path, block.text))
    return found


def reply_writes(shape: Shape, body: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """aider's SEARCH/REPLACE edits in the assistant replies of a chat request that offers
    no tools (aider's requests): ``(reply id, paths written)`` per reply that has edits, the
    example conversation skipped and each edit a later user message reports as failed to
    match left out. The reply id, ``aider-reply:<digest>`` (``#2``… for a repeat), is the
    same in every request."""
    messages = body.get("messages") if shape == "chat" else None
    if not isinstance(messages, list) or body.get("tools") or body.get("functions"):
        return []
    edits_at: dict[int, list[aider.Edit]] = {}
    failed_at: dict[int, set[tuple[str, str, str]]] = {}
    for index in range(_after_examples(messages), len(messages)):
        message = messages[index]
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
            continue
        content = message["content"]
        if message.get("role") == "assistant" and "SEARCH" in content:
            edits = aider.edit_blocks(content)
            if edits:
                edits_at[index] = edits
        elif message.get("role") == "user" and "SearchReplaceNoExactMatch" in content:
            failed_at[index] = aider.failed_edits(content)
    found: list[tuple[str, list[str]]] = []
    counts: dict[str, int] = {}
    replies = sorted(edits_at)
    for n, index in enumerate(replies):
        until = replies[n + 1] if n + 1 < len(replies) else len(messages)
        failed: set[tuple[str, str, str]] = set()
        for at, reported in failed_at.items():
            if index < at < until:
                failed |= reported
        paths: list[str] = []
        for edit in edits_at[index]:
            if (edit.path, edit.original, edit.updated) in failed or edit.path in paths:
                continue
            paths.append(edit.path)
        key = f"aider-reply:{_digest(messages[index]['content'])}"
        counts[key] = counts.get(key, 0) + 1
        found.append((key if counts[key] == 1 else f"{key}#{counts[key]}", paths))
    return found


def edit_result(
    shape: Shape, body: dict[str, Any], call_id: str, edit: Callable[[str], str]
) -> dict[str, Any] | None:
    """The body with the text of the tool result of ``call_id`` changed, keeping its shape:
    a string stays a string; in a list of parts the last text part is edited when ``edit``
    only appends to the whole (so the parts before keep every byte), else the parts
    become one text part. None when no result of that id was found or ``edit`` left it as
    it was.

    ``body`` itself is left as it was: only the objects on the way to the result are
    copied (the rest is shared), so the original stays at hand to splice the change into
    the client's bytes (``proxy.splice``)."""
    for where, key in API[shape].result_holders(body, call_id):
        holder = _at(body, where)
        content = holder.get(key)
        old = _text_of(content)
        new = edit(old)
        if new == old:
            return None
        value: Any = new
        if isinstance(content, list) and new.startswith(old):
            texts = [i for i, p in enumerate(content) if isinstance(p, Mapping) and "text" in p]
            if texts:
                part = dict(content[texts[-1]])
                part["text"] = str(part["text"]) + new[len(old) :]
                value = [*content[: texts[-1]], part, *content[texts[-1] + 1 :]]
                return _replaced(body, (*where, key), value)
        if isinstance(content, list):
            value = [{"type": API[shape].text_part, "text": new}]
        return _replaced(body, (*where, key), value)
    return None


def _at(body: Any, where: tuple[Any, ...]) -> Any:
    for step in where:
        body = body[step]
    return body


def _replaced(body: Any, where: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``body`` with the value at ``where`` replaced: the containers on the way
    copied, everything else shared."""
    if not where:
        return value
    head, rest = where[0], where[1:]
    copied = copy.copy(body)
    copied[head] = _replaced(body[head], rest, value)
    return copied
