"""The proxy with ``placement: anchored`` (its default), for each request shape it serves.

A stale read becomes a marker; the current code goes once, as a refresh after the newest
tool result; and the next request, which appends to the conversation, carries every byte
of the previous rewritten request up to that refresh unchanged, so a prompt cache serves it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests.proxy.test_rewrite import (
    CHANGED,
    SOURCE,
    _listing,
    _post,
    anthropic_body,
    chat_body,
    proxied,
    responses_body,
)

#: A long tool result after the read: with this much behind it, a changed read is replaced
#: by a marker and its code sent in a refresh (a patch in place would re-send all of it).
BIG = "x" * 4000


def _anthropic_next(
    body: dict[str, Any], call_id: str = "toolu_02", output: str = "ok"
) -> dict[str, Any]:
    out = copy.deepcopy(body)
    out["messages"] += [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}],
        },
    ]
    return out


def _chat_next(
    body: dict[str, Any], call_id: str = "call_r2", output: str = "ok"
) -> dict[str, Any]:
    out = copy.deepcopy(body)
    out["messages"] += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "bash", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]
    return out


def _responses_next(
    body: dict[str, Any], call_id: str = "call_x2", output: str = "ok"
) -> dict[str, Any]:
    out = copy.deepcopy(body)
    out["input"] += [
        {"type": "function_call", "call_id": call_id, "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call_id, "output": output},
    ]
    return out


def _prefix_kept(first: list[Any], second: list[Any]) -> None:
    """Every item of the first rewritten request stands unchanged at the head of the next."""
    assert json.dumps(second[: len(first)]) == json.dumps(first)


async def test_anthropic_refresh_follows_the_newest_result_and_stays(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = _anthropic_next(anthropic_body(workspace, _listing(SOURCE)), output=BIG)
    headers = {"x-claude-code-session-id": "cc-a"}
    async with proxied(workspace) as (model, proxy, url):
        await _post(url + "/v1/messages", body, headers)
        assert model.model_requests[-1].body == body
        (workspace / "a.py").write_text(CHANGED)
        await _post(url + "/v1/messages", body, headers)
        sent = model.model_requests[-1].body["messages"]
        marker = sent[2]["content"][0]["content"]
        assert marker.startswith("[fresh-ls] toolu_01") and "return 2\n" not in marker
        big, refresh = sent[4]["content"][0]["content"].split("\n\n", 1)
        assert big == BIG
        assert refresh.startswith("[fresh-ls] R1,") and "return 20" in refresh
        assert "return 2\n" not in json.dumps(sent)
        nxt = _anthropic_next(body, "toolu_03")
        await _post(url + "/v1/messages", nxt, headers)
        again = model.model_requests[-1].body["messages"]
        _prefix_kept(sent, again)
        assert again[6] == nxt["messages"][6]  # the new result: nothing to add
        assert proxy.rewritten == 2


async def test_a_first_change_with_little_behind_is_printed_again_in_place(
    workspace: Path,
) -> None:
    """The read is the newest result: it is printed again from the current lines, in the
    tool's own format, with no marker and no refresh."""
    (workspace / "a.py").write_text(SOURCE)
    body = anthropic_body(workspace, _listing(SOURCE))
    headers = {"x-claude-code-session-id": "cc-p"}
    async with proxied(workspace) as (model, _proxy, url):
        await _post(url + "/v1/messages", body, headers)
        (workspace / "a.py").write_text(CHANGED)
        await _post(url + "/v1/messages", body, headers)
        sent = model.model_requests[-1].body["messages"]
        assert sent[2]["content"][0]["content"] == _listing(CHANGED)
        assert "[fresh-ls]" not in json.dumps(sent)


async def test_anthropic_cache_breakpoint_ends_at_the_refresh(workspace: Path) -> None:
    """With explicit caching, a ``cache_control`` breakpoint sits on the block that holds
    the newest refresh; at most four stay in the request."""
    (workspace / "a.py").write_text(SOURCE)
    body = anthropic_body(workspace, _listing(SOURCE))
    control = {"type": "ephemeral"}
    body["system"][0]["cache_control"] = control
    body["messages"][0] = {
        "role": "user",
        "content": [{"type": "text", "text": "fix g", "cache_control": control}],
    }
    body = _anthropic_next(body, output=BIG)
    body["messages"][-1]["content"].append(
        {"type": "text", "text": "go on", "cache_control": control}
    )
    headers = {"x-claude-code-session-id": "cc-b"}
    async with proxied(workspace) as (model, _proxy, url):
        await _post(url + "/v1/messages", body, headers)
        (workspace / "a.py").write_text(CHANGED)
        await _post(url + "/v1/messages", body, headers)
        sent = model.model_requests[-1].body["messages"]
        # the refresh went after toolu_02's result, the newest; its message has a later
        # breakpoint already ("go on"), so nothing moves
        assert "[fresh-ls] R1," in sent[4]["content"][0]["content"]
        assert sent[4]["content"][-1].get("cache_control") == control
        # without that later breakpoint, one is put on the refresh's block
        del body["messages"][-1]["content"][-1]
        body["messages"][1]["content"][0]["cache_control"] = control
        body["messages"][1]["content"].append(
            {"type": "text", "text": "x", "cache_control": control}
        )
        await _post(url + "/v1/messages", body, headers)
        sent = model.model_requests[-1].body
        refreshed = sent["messages"][4]["content"][0]
        assert "[fresh-ls] R1," in refreshed["content"]
        assert refreshed.get("cache_control") == control
        count = json.dumps(sent).count('"cache_control"')
        assert count <= 4


async def test_chat_completions_refresh(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = _chat_next(chat_body(SOURCE.rstrip("\n")), output=BIG)
    async with proxied(workspace) as (model, _proxy, url):
        await _post(url + "/v1/chat/completions", body)
        (workspace / "a.py").write_text(CHANGED)
        await _post(url + "/v1/chat/completions", body)
        sent = model.model_requests[-1].body["messages"]
        assert len(sent) == len(body["messages"])  # nothing appended at the end
        marker = sent[3]["content"]
        assert "call_r1" in marker and "R1" in marker
        big, refresh = sent[5]["content"].split("\n\n", 1)
        assert "return 20" in refresh and big == BIG
        await _post(url + "/v1/chat/completions", _chat_next(body, "call_r3"))
        again = model.model_requests[-1].body["messages"]
        _prefix_kept(sent, again)
        assert again[-1] == {"role": "tool", "tool_call_id": "call_r3", "content": "ok"}


async def test_responses_refresh(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    numbered = "".join(f"{i:6d}\t{line}\n" for i, line in enumerate(SOURCE.splitlines(), 1))
    body = _responses_next(responses_body(numbered), output=BIG)
    headers = {"session-id": "codex-a"}
    async with proxied(workspace) as (model, _proxy, url):
        await _post(url + "/v1/responses", body, headers)
        (workspace / "a.py").write_text(CHANGED)
        await _post(url + "/v1/responses", body, headers)
        items = model.model_requests[-1].body["input"]
        assert len(items) == len(body["input"])
        output = items[2]["output"]
        assert output.startswith("[fresh-ls] call_x1") and "     6\t    return 2\n" not in output
        assert "return 20" in items[4]["output"] and items[4]["output"].startswith(BIG)
        await _post(url + "/v1/responses", _responses_next(body, "call_x3"), headers)
        again = model.model_requests[-1].body["input"]
        _prefix_kept(items, again)
