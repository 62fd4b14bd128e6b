"""Rewriting an OpenAI Responses request (``input`` items) with the harness rewriter.

``fresh_ls.harness.rewrite`` reads chat-completions and Anthropic requests. A Responses
request carries its tool results as ``function_call_output`` / ``custom_tool_call_output``
items paired with their call by ``call_id``. The adapter hands the rewriter a chat-form
stand-in (one ``tool`` message per output item, in order), then writes what came back into a
deep copy of the original (``shared=True``: a copy of the items it changes only, the rest
shared with the original): each replaced output's ``output`` becomes the marker (a string
stays a string, a list of parts becomes one ``input_text`` part), and the projection becomes a
final ``user`` message item, the last thing in the request as in the other shapes.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from typing import Any

from fresh_ls.harness.rewrite import RewriteError, Rewritten, arewrite_request
from fresh_ls.proxy.apis import OpenAIResponses

OUTPUT_ITEMS = OpenAIResponses.OUTPUT_ITEMS


def _stand_in(body: Mapping[str, Any]) -> tuple[dict[str, Any], list[int]]:
    items = body.get("input")
    if not isinstance(items, list):
        return {"messages": []}, []
    messages: list[dict[str, Any]] = []
    where: list[int] = []
    for index, item in enumerate(items):
        if (
            isinstance(item, Mapping)
            and item.get("type") in OUTPUT_ITEMS
            and isinstance(item.get("call_id"), str)
        ):
            output = item.get("output")
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": item["call_id"],
                    "content": output if isinstance(output, str) else "",
                }
            )
            where.append(index)
    return {"messages": messages}, where


def _marker(old: Any, text: str) -> Any:
    if isinstance(old, list):
        return [{"type": "input_text", "text": text}]
    return text


async def arewrite_responses(
    client: Any,
    session: str,
    body: Mapping[str, Any],
    *,
    policy: str | None = None,
    budget_bytes: int | None = None,
    forget_missing: bool = False,
    placement: str | None = None,
    views_held: Collection[str] | None = None,
    shared: bool = False,
) -> tuple[dict[str, Any], Rewritten]:
    """The rewritten copy of a Responses request body, and what the rewriter made."""
    if not isinstance(body.get("input"), list):
        raise RewriteError("input: expected a list of items")
    stand_in, where = _stand_in(body)
    done = await arewrite_request(
        client,
        session,
        stand_in,
        fmt="openai",
        policy=policy,
        budget_bytes=budget_bytes,
        forget_missing=forget_missing,
        placement=placement,
        views_held=views_held,
        shared=shared,
    )
    out = dict(body) if shared else copy.deepcopy(dict(body))
    items = out["input"] = list(out["input"]) if shared else out["input"]
    rewritten = done.request["messages"]
    refreshes = {r["after"]: r["text"] for r in done.plan.get("refreshes") or []}
    last = {items[index]["call_id"]: index for index in where}
    for position, index in enumerate(where):
        call_id = items[index]["call_id"]
        refresh = refreshes.get(call_id) if last[call_id] == index else None
        if call_id not in done.replaced and refresh is None:
            continue
        item: dict[str, Any] = dict(items[index]) if shared else items[index]
        items[index] = item
        if isinstance(item.get("output"), str):
            if call_id in done.replaced or refresh is not None:
                item["output"] = rewritten[position]["content"]
            continue
        if call_id in done.replaced:
            marker = {m["viewId"]: m["text"] for m in done.plan.get("markers", [])}
            text = marker.get(done.replaced[call_id], rewritten[position]["content"])
            item["output"] = _marker(item.get("output"), text)
        if refresh is not None:
            output = item.get("output")
            parts: list[Any] = output if isinstance(output, list) else []
            item["output"] = [*parts, {"type": "input_text", "text": refresh}]
    if done.projection_message is not None:
        text = rewritten[done.projection_message]["content"]
        items.append(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        )
    return out, done
