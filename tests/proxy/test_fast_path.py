"""The proxy's one-round-trip path (``Proxy._all_fresh``): a session never rewritten whose
views are all fresh goes to the model as the agent sent it after one ``fresh/statuses``,
and nothing that must change a request slips through it: a change on disk before the next
request, a new tool result already stale when it arrives, a view the server forgot, and
every request of a session once rewritten."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp import ClientSession

from fresh_ls.client import AsyncClient
from tests.proxy.test_anchored import _anthropic_next
from tests.proxy.test_rewrite import CHANGED, SOURCE, _listing, anthropic_body, proxied

HEADERS = {"x-claude-code-session-id": "cc-fast"}
SESSION = "claude-code-session-id:cc-fast"  # the session the proxy names for it


async def _send(url: str, body: dict[str, Any]) -> None:
    async with (
        ClientSession() as http,
        http.post(url + "/v1/messages", json=body, headers=HEADERS) as r,
    ):
        assert r.status == 200, await r.text()


def _count(calls: list[str]) -> dict[str, int]:
    return {m: calls.count(m) for m in sorted(set(calls))}


def _counting(monkey: Any) -> list[str]:
    """Every request the proxy's client sends, by method."""
    calls: list[str] = []
    real = AsyncClient._result

    async def counted(self: AsyncClient, method: str, params: dict[str, Any]) -> Any:
        calls.append(method)
        return await real(self, method, params)

    monkey.setattr(AsyncClient, "_result", counted)
    return calls


async def test_fresh_requests_take_one_round_trip_and_go_as_sent(
    workspace: Path, monkeypatch: Any
) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = anthropic_body(workspace, _listing(SOURCE))
    calls = _counting(monkeypatch)
    async with proxied(workspace) as (model, _proxy, url):
        await _send(url, body)  # registers the view
        calls.clear()
        for _ in range(3):
            await _send(url, body)
            assert model.model_requests[-1].body == body
        assert _count(calls) == {"fresh/statuses": 3}
        # The next request after an outside change sees it (no watcher needed).
        (workspace / "a.py").write_text(CHANGED)
        await _send(url, body)
        sent = model.model_requests[-1].body
        assert sent != body and "return 20" in str(sent)
        # Once rewritten, every request goes the full way (markers are carried again),
        # also after the file is back as it was.
        (workspace / "a.py").write_text(SOURCE)
        calls.clear()
        await _send(url, body)
        assert "fresh/project" in calls and "fresh/commit" in calls


async def test_a_new_result_already_stale_is_not_sent_as_it_came(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    first = anthropic_body(workspace, _listing(SOURCE))
    async with proxied(workspace) as (model, _proxy, url):
        await _send(url, first)
        # The agent read the file again, but the file changed between its read and this
        # request: the new tool result shows lines the disk no longer holds.
        second = _anthropic_next(first, output=_listing(SOURCE))
        (workspace / "a.py").write_text(CHANGED)
        await _send(url, second)
        sent = model.model_requests[-1].body
        assert sent != second and "return 20" in str(sent)


async def test_a_view_the_server_forgot_is_registered_again(workspace: Path) -> None:
    (workspace / "a.py").write_text(SOURCE)
    body = anthropic_body(workspace, _listing(SOURCE))
    async with proxied(workspace) as (model, proxy, url):
        await _send(url, body)
        client = await proxy._client()
        assert [v["viewId"] for v in (await client.statuses(SESSION))["views"]] == ["toolu_01"]
        await client.forget(SESSION)  # behind the proxy's back
        await _send(url, body)
        assert model.model_requests[-1].body == body  # still fresh: as it came
        held = await client.statuses(SESSION)
        assert [v["viewId"] for v in held["views"]] == ["toolu_01"]
