"""Search results, files outside the root, forgotten views and symlinked paths, through the
real proxy (in process, its own fresh-ls server, a scripted upstream on 127.0.0.1)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.proxy.test_rewrite import _post, proxied

SOURCE = "RATE = 10\n\n\ndef total(q):\n    return q * RATE\n\n\ndef tax(a):\n    return a // 5\n"
CHANGED = SOURCE.replace("return q * RATE", "return q * RATE * 2")
NOTE = "[fresh-ls] This search result was refreshed"


def bash_body(command: str, output: str, call_id: str = "toolu_g1") -> dict[str, Any]:
    return {
        "model": "m",
        "system": [{"type": "text", "text": "You are an agent."}],
        "messages": [
            {"role": "user", "content": "look"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": "Bash",
                        "input": {"command": command},
                    }
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}],
            },
        ],
    }


def _result(sent: dict[str, Any], index: int = 2) -> str:
    content = sent["messages"][index]["content"][0]["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


H = {"x-fresh-ls-session": "s1"}


async def test_grep_result_is_registered_and_printed_again_when_stale(workspace: Path) -> None:
    (workspace / "calc.py").write_text(SOURCE)
    body = bash_body("grep -n RATE calc.py", "1:RATE = 10\n5:    return q * RATE\n")
    async with proxied(workspace, agent_cwd=str(workspace)) as (model, proxy, url):
        await _post(url + "/v1/messages", body, H)
        assert model.model_requests[-1].body == body  # fresh: sent as it came
        views = (await proxy.client.stale("s1"))["views"]
        assert [(v["viewId"], v["path"], v["ranges"]) for v in views] == [
            (
                "toolu_g1~s0",
                "calc.py",
                [{"firstLine": 1, "lastLine": 1}, {"firstLine": 5, "lastLine": 5}],
            )
        ]
        (workspace / "calc.py").write_text(CHANGED)
        await _post(url + "/v1/messages", body, H)
        first = _result(model.model_requests[-1].body)
        assert first.startswith(NOTE), first
        assert "5:    return q * RATE * 2" in first and "1:RATE = 10" in first
        assert "return q * RATE\n" not in first
        assert model.model_requests[-1].body["messages"][:2] == body["messages"][:2]
        await _post(url + "/v1/messages", body, H)
        assert _result(model.model_requests[-1].body) == first  # the same bytes: cached
        (state,) = proxy_status(proxy)
        assert state["searches"] == 1


async def test_a_search_only_unshown_lines_changed_is_left_alone(workspace: Path) -> None:
    (workspace / "calc.py").write_text(SOURCE)
    body = bash_body("grep -n RATE calc.py", "1:RATE = 10\n5:    return q * RATE\n")
    async with proxied(workspace, agent_cwd=str(workspace)) as (model, _proxy, url):
        await _post(url + "/v1/messages", body, H)
        (workspace / "calc.py").write_text(SOURCE.replace("a // 5", "a // 4"))
        await _post(url + "/v1/messages", body, H)
        assert model.model_requests[-1].body == body


async def test_rebuilt_when_it_cannot_be_run_again(workspace: Path) -> None:
    """A search in a pipeline is not run again: its printed lines are rebuilt from the
    file, and the note says new matches elsewhere are not shown."""
    (workspace / "calc.py").write_text(SOURCE)
    command = "grep -n RATE calc.py | head -5"
    body = bash_body(command, "1:RATE = 10\n5:    return q * RATE\n")
    async with proxied(workspace, agent_cwd=str(workspace)) as (model, _proxy, url):
        await _post(url + "/v1/messages", body, H)
        (workspace / "calc.py").write_text(CHANGED)
        await _post(url + "/v1/messages", body, H)
        text = _result(model.model_requests[-1].body)
        assert text.startswith(NOTE) and "not shown" in text.split("\n", 1)[0]
        assert "5:    return q * RATE * 2" in text


async def test_a_file_outside_the_root_gets_one_line(workspace: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "reproduce.py").write_text("print(1)\n")
    listing = "     1\tprint(1)\n"
    body = bash_body(f"cat -n {scratch / 'reproduce.py'}", listing, "toolu_o1")
    async with proxied(workspace, agent_cwd=str(workspace)) as (model, proxy, url):
        await _post(url + "/v1/messages", body, H)
        sent = _result(model.model_requests[-1].body)
        line = (
            f"fresh-ls does not track {scratch / 'reproduce.py'} (outside {workspace}): "
            "read it again before relying on it"
        )
        assert sent == listing.rstrip("\n") + "\n" + line, sent
        (scratch / "reproduce.py").write_text("print(2)\n")
        await _post(url + "/v1/messages", body, H)
        assert _result(model.model_requests[-1].body) == sent  # the same line, nothing read back
        (state,) = [s for s in proxy_status(proxy) if s["session"] == "s1"]
        assert state["outside"] == 1


async def test_also_folder_is_tracked(workspace: Path, tmp_path: Path) -> None:
    scratch = (tmp_path / "scratch").resolve()
    scratch.mkdir()
    (scratch / "reproduce.py").write_text("print(1)\n")
    body = bash_body(f"cat -n {scratch / 'reproduce.py'}", "     1\tprint(1)\n", "toolu_a1")
    async with proxied(workspace, agent_cwd=str(workspace), also=(scratch,)) as (model, _p, url):
        await _post(url + "/v1/messages", body, H)
        assert model.model_requests[-1].body == body
        (scratch / "reproduce.py").write_text("print(2)\n")
        await _post(url + "/v1/messages", body, H)
        sent = json.dumps(model.model_requests[-1].body)
        assert "print(2)" in sent and "does not track" not in sent


async def test_a_path_through_a_symlink_into_the_root(workspace: Path, tmp_path: Path) -> None:
    (workspace / "calc.py").write_text(SOURCE)
    link = tmp_path / "testbed"
    os.symlink(workspace, link)
    listing = "".join(f"{i:6d}\t{t}\n" for i, t in enumerate(SOURCE.splitlines(), 1))
    body = bash_body(f"cat -n {link / 'calc.py'}", listing, "toolu_l1")
    async with proxied(workspace, agent_cwd=str(workspace)) as (model, proxy, url):
        await _post(url + "/v1/messages", body, H)
        (view,) = (await proxy.client.stale("s1"))["views"]
        assert view["path"] == "calc.py"
        (workspace / "calc.py").write_text(CHANGED)
        await _post(url + "/v1/messages", body, H)
        sent = json.dumps(model.model_requests[-1].body)
        assert "return q * RATE * 2" in sent
        assert "does not track" not in sent


async def test_a_view_the_server_forgot_is_registered_again(workspace: Path) -> None:
    """After fresh/forget (the extension's Forget View, a forgotten session) the proxy asks
    the server rather than trusting its memory: the result is read again, so a change
    after it is still caught (issue 21, finding 4; this test failed before)."""
    (workspace / "calc.py").write_text(SOURCE)
    listing = "".join(f"{i:6d}\t{t}\n" for i, t in enumerate(SOURCE.splitlines(), 1))
    body = bash_body("cat -n calc.py", listing, "toolu_f1")
    async with proxied(workspace, agent_cwd=str(workspace)) as (model, proxy, url):
        await _post(url + "/v1/messages", body, H)
        await proxy.client.forget("s1")
        (workspace / "calc.py").write_text(CHANGED)
        await _post(url + "/v1/messages", body, H)
        sent = json.dumps(model.model_requests[-1].body)
        assert "return q * RATE * 2" in sent, sent


def proxy_status(proxy: Any) -> list[dict[str, Any]]:
    from fresh_ls.proxy.app import status_of

    return status_of(proxy)["sessions"]
