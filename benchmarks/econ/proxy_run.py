"""The recorded runs through the real ``fresh-ls proxy``: what reaches the model, and its cost.

    .venv/bin/python benchmarks/econ/proxy_run.py [--fixtures DIR] [--json] [--markdown]

For each OpenHands run under ``../shared/fixtures/trajectories`` (SWE-agent's text tools
are not read by the proxy's recognizers, so those runs are left out and said so), the
files are rebuilt step by step (``fresh_ls.replay``'s ``Workspace``) and the conversation
is rebuilt as the chat-completions request OpenHands would send: per step the assistant's
tool call, under OpenHands' own tool names (``str_replace_editor``, ``execute_bash``) and
paths (the run's own root, ``/workspace/<repo>`` or ``/testbed``), then a ``tool`` message
with the step's recorded output. Before each step after the first, that request (JSON,
UTF-8) is POSTed to a real proxy (``fresh_ls.proxy.app.Proxy``, its own ``fresh-ls
serve`` started by it, on 127.0.0.1) in front of a capturing upstream; the bytes the
upstream received are checked and priced:

- **stale file views**: tool results that show a file of the root (a ``view`` listing)
  whose printed lines differ from the disk at that moment, unless replaced by a marker;
- **stale search lines**: numbered lines of search results (``grep -n`` and the other
  shapes ``fresh_ls.toolcalls.searches`` reads) that differ from the disk at that moment,
  read from the bytes sent, decoration and all;
- **cost**, under a prompt cache keyed on the request's content (the longest prefix of
  bytes identical to the previous request's, no block granularity, no expiry): uncached
  bytes plus cached bytes at one tenth; "direct" is the same requests sent straight to the
  model (the bytes the proxy received).

``--spelling`` chooses how the requests are written: ``python`` (the default, ``json.dumps``
with ``ensure_ascii=False``: Python's ``", "`` and ``": "``) or ``compact`` (no spaces, as
``JSON.stringify`` writes it: Claude Code, Codex and Pi). The proxy writes its changes into
the agent's own bytes, so the cost does not depend on it; before it did (it wrote every
rewritten body anew in Python's spelling).

Claim tested (issue 20): 0 stale file views and 0 stale search lines reach the upstream,
at no more than 1.2x the direct cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # standalone run from a checkout without an install
    sys.path.insert(0, str(REPO))

from aiohttp import ClientSession, web  # noqa: E402

from fresh_ls.client import AsyncClient  # noqa: E402
from fresh_ls.proxy.app import Proxy  # noqa: E402
from fresh_ls.proxy.splice import common_prefix  # noqa: E402
from fresh_ls.replay.actions import Workspace  # noqa: E402
from fresh_ls.replay.runner import load_steps  # noqa: E402
from fresh_ls.report import table  # noqa: E402
from fresh_ls.toolcalls.numbered import cat_n_header, parse_cat_n  # noqa: E402
from fresh_ls.toolcalls.searches import (  # noqa: E402
    output_lines,
    printed_lines,
    shell_search,
    terminal_shows,
)
from fresh_ls.toolcalls.shell_envelope import openhands_envelope  # noqa: E402

DEFAULT_FIXTURES = REPO.parent / "shared" / "fixtures" / "trajectories"
CACHED_PRICE = 0.1
LIMIT = 1.2
SYSTEM = (
    "You are a software engineer working in a repository. Use the tools to read and edit "
    "files and to run commands; when the task is solved, say so."
)
_EDITOR = ("view", "create", "str_replace", "insert", "undo_edit")
REFRESHED = "[fresh-ls] This search result was refreshed"


@dataclass
class Priced:
    requests: int = 0
    input_bytes: int = 0
    cached_bytes: int = 0

    @property
    def cost(self) -> float:
        return (self.input_bytes - self.cached_bytes) + CACHED_PRICE * self.cached_bytes


@dataclass
class ProxyRun:
    run: str
    requests: int = 0
    stale_views: int = 0  # view results carrying stale lines, summed over requests
    stale_search_lines: int = 0  # printed search lines that differ from the disk, summed
    stale_views_direct: int = 0
    stale_search_lines_direct: int = 0
    search_results: int = 0
    rewritten: int = 0
    direct: Priced = field(default_factory=Priced)
    proxied: Priced = field(default_factory=Priced)
    error: str | None = None


def _price(priced: Priced, previous: bytes, data: bytes) -> None:
    priced.requests += 1
    priced.input_bytes += len(data)
    priced.cached_bytes += common_prefix(previous, data)


def _agent_path(step: dict[str, Any], home: str) -> str:
    path = str(step.get("path") or "")
    if step.get("inRepo", True) and not path.startswith("/"):
        return f"{home.rstrip('/')}/{path}"
    return path


def tool_call(i: int, step: dict[str, Any], home: str) -> dict[str, Any] | None:
    """Step ``i`` as the tool call OpenHands sends (None: a step with no tool call)."""
    tool = step.get("tool")
    if tool == "bash":
        name, args = "execute_bash", {"command": step.get("command") or ""}
    elif tool in _EDITOR:
        args = {"command": tool, "path": _agent_path(step, home)}
        for key in ("view_range", "old_str", "new_str", "insert_line", "file_text"):
            if step.get(key) is not None:
                args[key] = step[key]
        name = "str_replace_editor"
    else:
        return None
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
        ],
    }


def _calls(body: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    out = {}
    for m in body.get("messages", []):
        for c in m.get("tool_calls") or []:
            out[c["id"]] = (c["function"]["name"], json.loads(c["function"]["arguments"]))
    return out


def _printed(command: str, text: str, home: str) -> list[tuple[int, str, int, str]] | None:
    """(index, path, line, text) of each numbered line a search result printed, or None
    when the command is no search."""
    search = shell_search(command, home)
    if search is None:
        return None
    _, out, _ = openhands_envelope(command, text)
    lines = output_lines(out)
    return [
        (p.index, p.path, p.number, lines[p.index][p.start :], lines[p.index][: p.start])
        for p in printed_lines(search, lines)
    ]  # type: ignore[misc]


def _holds(
    ws: Workspace, home: str, path: str, number: int, shown: str, decoration: str
) -> bool | None:
    """Whether the disk's line ``number`` of ``path`` is what was shown (a terminal's
    TAB-to-spaces included); None for a file outside the root or gone."""
    rel = ws.rel(path, home)
    current = ws.read(rel) if rel else None
    if current is None:
        return None
    disk = current.split("\n")
    if number > len(disk):
        return False
    line = disk[number - 1]
    return line == shown or terminal_shows(decoration, line, shown)


def matched_when_shown(step: dict[str, Any], ws: Workspace, home: str) -> set[int]:
    """The printed lines (by index) of a search step that held when it ran: only those can
    go stale; the others never showed the file's line (a shell's note, a line cut)."""
    printed = _printed(str(step.get("command") or ""), str(step.get("observation") or ""), home)
    return {
        index
        for index, path, number, shown, decoration in printed or []
        if _holds(ws, home, path, number, shown, decoration)
    }


def stale_in(
    body: dict[str, Any], ws: Workspace, home: str, valid: dict[str, set[int]]
) -> tuple[int, int, int]:
    """(view results with stale lines, stale search lines, search results) in ``body``,
    read from its bytes: what the model would be shown. ``valid``: per search call, the
    printed lines that held when it ran (a result sent as it was recorded counts those)."""
    calls = _calls(body)
    views = lines = searches = 0
    for m in body.get("messages", []):
        if m.get("role") != "tool" or m.get("tool_call_id") not in calls:
            continue
        name, args = calls[m["tool_call_id"]]
        content = m.get("content")
        text = (
            content
            if isinstance(content, str)
            else "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))
        )
        if text.startswith("[fresh-ls]"):
            continue  # a marker: no code shown
        if name == "str_replace_editor" and args.get("command") == "view":
            rel = ws.rel(args.get("path"), home)
            current = ws.read(rel) if rel else None
            header = cat_n_header(text)
            listing = parse_cat_n(text[header[2] :] if header else text)
            if current is None or listing is None:
                continue
            disk = current.split("\n")
            views += any(
                n <= len(disk) and disk[n - 1] != line and line != ""
                for n, line in listing.lines.items()
            )
        elif name == "execute_bash":
            command = str(args.get("command") or "")
            printed = _printed(command, text, home)
            if printed is None:
                continue
            searches += 1
            as_recorded = m["tool_call_id"] in valid and not text.startswith(REFRESHED)
            for index, path, number, shown, decoration in printed:
                if as_recorded and index not in valid[m["tool_call_id"]]:
                    continue
                lines += _holds(ws, home, path, number, shown, decoration) is False
    return views, lines, searches


class _Upstream:
    """A model that answers every chat request with one short message, and keeps what
    it received."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.bodies.append(await request.read())
        return web.json_response(
            {
                "id": "x",
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "ok"},
                        "finish_reason": "stop",
                    }
                ],
            }
        )


async def _serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}"


#: How the agent writes its request (``--spelling``): json.dumps keywords.
SPELLINGS: dict[str, dict[str, Any]] = {
    "python": {"ensure_ascii": False},
    "compact": {"ensure_ascii": False, "separators": (",", ":")},
}


async def proxy_run(fixture: Path, spelling: str = "python") -> ProxyRun:
    meta = json.loads((fixture / "meta.json").read_text())
    result = ProxyRun(run=str(meta.get("id") or fixture.name))
    steps = load_steps(fixture)
    prefixes = list(meta.get("workspacePrefixes") or [])
    home = prefixes[0] if prefixes else "/workspace"
    with tempfile.TemporaryDirectory(prefix="fresh-ls-proxy-econ-") as tmp:
        root = Path(tmp) / "root"
        import shutil

        shutil.copytree(fixture / "base", root)
        root = root.resolve()
        state = Path(tmp) / "state"
        ws = Workspace(root, prefixes, openhands=True)
        upstream = _Upstream()
        up_app = web.Application(client_max_size=1 << 30)
        up_app.router.add_route("*", "/{tail:.*}", upstream.handle)
        up_runner, up_url = await _serve(up_app)

        async def connect() -> Any:
            return await AsyncClient.spawn(root, extra_args=["--state-dir", str(state)])

        proxy = Proxy(root, up_url, connect, agent_cwd=home, agent_roots=prefixes)
        await proxy.start()
        runner, base = await _serve(proxy.app())
        proxy.access.port = int(base.rsplit(":", 1)[1])
        url = base + proxy.access.prefix  # the base URL an agent is given
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Solve the issue of {result.run}."},
        ]
        previous_direct = previous_sent = b""
        valid: dict[str, set[int]] = {}
        try:
            async with ClientSession() as http:
                for i, step in enumerate(steps):
                    if i > 0 and messages[-1]["role"] == "tool":
                        body = {"model": "m", "messages": messages}
                        data = json.dumps(body, **SPELLINGS[spelling]).encode("utf-8")
                        async with http.post(
                            f"{url}/v1/chat/completions",
                            data=data,
                            headers={
                                "content-type": "application/json",
                                "x-fresh-ls-session": "econ",
                            },
                        ) as response:
                            if response.status != 200:
                                raise RuntimeError(
                                    f"request {i}: HTTP {response.status}: {await response.text()}"
                                )
                        sent = upstream.bodies[-1]
                        result.requests += 1
                        result.rewritten += sent != data
                        _price(result.direct, previous_direct, data)
                        _price(result.proxied, previous_sent, sent)
                        previous_direct, previous_sent = data, sent
                        v, lines, searches = stale_in(json.loads(sent), ws, home, valid)
                        dv, dlines, _ = stale_in(body, ws, home, valid)
                        result.stale_views += v
                        result.stale_search_lines += lines
                        result.stale_views_direct += dv
                        result.stale_search_lines_direct += dlines
                        result.search_results = max(result.search_results, searches)
                    ws.apply(step)
                    if step.get("tool") == "bash":
                        valid[f"call_{i}"] = matched_when_shown(step, ws, home)
                    call = tool_call(i, step, home)
                    if call is None:
                        continue
                    messages.append(call)
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": f"call_{i}",
                            "content": step.get("observation") or "",
                        }
                    )
        finally:
            await runner.cleanup()
            await proxy.close()
            await up_runner.cleanup()
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--spelling", choices=sorted(SPELLINGS), default="python")
    args = p.parse_args(argv)
    if not args.fixtures.is_dir():
        print(
            f"proxy econ: skipped: {args.fixtures} is absent (pass --fixtures DIR)", file=sys.stderr
        )
        return 0
    folders = []
    for f in sorted(args.fixtures.iterdir()):
        if not (f / "steps.jsonl").is_file():
            continue
        meta = json.loads((f / "meta.json").read_text())
        if not str(meta.get("format", "")).startswith("openhands"):
            print(
                f"proxy econ: {f.name}: left out ({meta.get('format')}: "
                "the proxy reads no SWE-agent tools)",
                file=sys.stderr,
            )
            continue
        folders.append(f)
    results = []
    for n, folder in enumerate(folders, start=1):
        if not args.json:
            print(f"[{n}/{len(folders)}] {folder.name}", file=sys.stderr)
        try:
            results.append(asyncio.run(proxy_run(folder, args.spelling)))
        except Exception as exc:  # one broken run is reported, the others still count
            results.append(ProxyRun(run=folder.name, error=f"{type(exc).__name__}: {exc}"))
    direct = sum(r.direct.cost for r in results)
    proxied = sum(r.proxied.cost for r in results)
    ratio = proxied / direct if direct else 0.0
    verdict = {
        "stale_views": sum(r.stale_views for r in results),
        "stale_search_lines": sum(r.stale_search_lines for r in results),
        "ratio": ratio,
        "met": ratio <= LIMIT
        and not any(r.stale_views or r.stale_search_lines or r.error for r in results),
    }
    if args.json:
        print(json.dumps({"runs": [asdict(r) for r in results], "claim": verdict}, indent=2))
        return 0 if verdict["met"] else 1
    rows = [
        [
            r.run,
            str(r.requests),
            f"{r.stale_views_direct} / {r.stale_views}",
            f"{r.stale_search_lines_direct} / {r.stale_search_lines}",
            str(r.rewritten),
            f"{r.proxied.cost / r.direct.cost:.2f}" if r.direct.cost else "-",
            r.error or "",
        ]
        for r in results
    ]
    rows.append(
        [
            "**total**" if args.markdown else "total",
            str(sum(r.requests for r in results)),
            f"{sum(r.stale_views_direct for r in results)} / {verdict['stale_views']}",
            f"{sum(r.stale_search_lines_direct for r in results)} / "
            f"{verdict['stale_search_lines']}",
            str(sum(r.rewritten for r in results)),
            f"{ratio:.2f}",
            "",
        ]
    )
    headers = [
        "run",
        "requests",
        "stale views (direct / proxy)",
        "stale search lines (direct / proxy)",
        "rewritten",
        "cost proxy / direct",
        "error",
    ]
    if args.markdown:
        print("| " + " | ".join(headers) + " |")
        print("|" + "---|" * len(headers))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        table(rows, headers)
    print(
        f"\nclaim: {verdict['stale_views']} stale file views and {verdict['stale_search_lines']} "
        f"stale search lines reached the upstream; cost {ratio:.2f}x direct "
        f"({'met' if verdict['met'] else 'NOT met'}: 0, 0, at most {LIMIT})"
    )
    return 0 if verdict["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
