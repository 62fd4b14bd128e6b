"""A search result reaches the proxy (recognize() gives Searched effects for it): the request
goes upstream as it came while the lines are fresh, and the session's views are untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.proxy.test_rewrite import SOURCE, _post, proxied


def _grep_body(workspace: Path) -> dict[str, Any]:
    return {
        "model": "m",
        "system": [{"type": "text", "text": "You are an agent."}],
        "tools": [{"name": "Bash"}],
        "messages": [
            {"role": "user", "content": "fix g"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_g1",
                        "name": "Bash",
                        "input": {"command": f"grep -n return {workspace / 'a.py'}"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_g1",
                        "content": "2:    return 1\n6:    return 2",
                    }
                ],
            },
        ],
    }


async def test_a_grep_result_passes_through(workspace: Path) -> None:
    # before the proxy skipped Searched effects, registering one failed an assertion
    (workspace / "a.py").write_text(SOURCE)
    body = _grep_body(workspace)
    headers = {"x-fresh-ls-session": "s1"}
    async with proxied(workspace, placement="end") as (model, proxy, url):
        status, _ = await _post(url + "/v1/messages", body, headers)
        assert status == 200
        assert model.model_requests[-1].body == body
        assert proxy.rewritten == 0
