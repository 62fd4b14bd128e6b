"""A repository's own files never run inside fresh-ls (issue 27).

The root built here holds a ``json.py`` and packages named like two of fresh-ls's
dependencies (``rapidfuzz/``, ``aiohttp/``) and a third (``attrs/``); each writes a marker file
when imported. Every way fresh-ls is started with that root as the working directory (the
proxy and a request through it, ``run``, the MCP server and the hook exactly as ``install
claude-code --mcp`` wrote them, ``AsyncClient.spawn`` from a harness, ``status``, ``audit``)
must work and leave no marker. Before ``-P`` each ``python -m fresh_ls`` child put the working
directory first on ``sys.path`` and imported the repository's ``json.py``.

Every process is real (subprocesses, 127.0.0.1 sockets); the top-level command is the console
script ``fresh-ls`` a user runs (itself never on the root's ``sys.path``), or ``python -P -m
fresh_ls`` where no console script is installed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.proxy.scripted_model import ScriptedModel

REPO = Path(__file__).resolve().parents[2]
AUDIT_FIXTURES = REPO / "fixtures" / "transcripts"
SHADOWS = ("json.py", "rapidfuzz/__init__.py", "aiohttp/__init__.py", "attrs/__init__.py")
WAIT_S = 60


def _fresh_ls() -> list[str]:
    script = Path(sys.executable).parent / "fresh-ls"
    return [str(script)] if script.exists() else [sys.executable, "-P", "-m", "fresh_ls"]


def _env() -> dict[str, str]:
    """The user's environment: nothing that keeps the working directory off ``sys.path``
    (so the test can fail), nothing that points Python at this clone."""
    drop = {"PYTHONPATH", "PYTHONSAFEPATH", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in drop}


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(root, markers): the root a user cloned, and where its files leave a trace if run."""
    root = Path(os.path.realpath(tmp_path / "cloned"))
    markers = tmp_path / "markers"
    markers.mkdir()
    for rel in SHADOWS:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        name = rel.replace("/", "_")
        path.write_text(
            f"open({str(markers / name)!r}, 'w').write('imported from the repository')\n"
        )
    (root / "app.py").write_text("def total(q):\n    return q * 2\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    yield root, markers


def _no_marker(markers: Path, after: str) -> None:
    found = sorted(p.name for p in markers.iterdir())
    assert not found, f"{after} imported the repository's own files: {found}"


def _run(root: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_fresh_ls(), *args],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        **kw,  # type: ignore[arg-type]
    )


def test_run_status_and_audit_never_import_the_repository(hostile: tuple[Path, Path]) -> None:
    root, markers = hostile
    done = _run(root, "run", "--root", ".", "--", "true")
    assert done.returncode == 0, done.stderr
    _no_marker(markers, "fresh-ls run -- true")
    done = _run(root, "status")
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    _no_marker(markers, "fresh-ls status")
    done = _run(root, "audit", "--no-progress", str(AUDIT_FIXTURES))
    assert done.returncode == 0, done.stderr
    _no_marker(markers, "fresh-ls audit")


def test_proxy_mcp_and_hook_as_installed_never_import_the_repository(
    hostile: tuple[Path, Path],
) -> None:
    root, markers = hostile
    model = ScriptedModel([], root)
    model.start()
    proxy = subprocess.Popen(
        [*_fresh_ls(), "proxy", "--root", ".", "--upstream", model.url],
        cwd=root,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proxy.stdout is not None
        first = proxy.stdout.readline()
        assert first, proxy.communicate(timeout=WAIT_S)[1]
        url = first.split(" ")[2]
        body = json.dumps({"model": "m", "max_tokens": 8, "messages": []}).encode()
        request = urllib.request.Request(
            url + "/v1/messages",
            data=body,
            headers={"content-type": "application/json", "x-api-key": "k"},
        )
        with urllib.request.urlopen(request, timeout=WAIT_S) as answer:
            assert answer.status == 200
        assert model.records, "the request did not reach the scripted upstream"
        _no_marker(markers, "fresh-ls proxy (and the server it started)")

        done = _run(root, "status")
        assert done.returncode == 0, done.stderr
        _no_marker(markers, "fresh-ls status")

        done = _run(root, "install", "claude-code", "--mcp")
        assert done.returncode == 0, done.stderr
        settings = json.loads((root / ".claude" / "settings.json").read_text())
        hook = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        event = {
            "session_id": "2b7c9d1e-0000-4000-8000-000000000027",
            "transcript_path": str(root / "t.jsonl"),
            "cwd": str(root),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "hello",
        }
        ran = subprocess.run(
            ["/bin/sh", "-c", hook],
            input=json.dumps(event),
            cwd=root,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert ran.returncode == 0, ran.stderr
        _no_marker(markers, f"the hook as installed ({hook})")

        entry = json.loads((root / ".mcp.json").read_text())["mcpServers"]["fresh-ls"]
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
        mcp = subprocess.run(
            [entry["command"], *entry["args"]],
            input=json.dumps(initialize) + "\n",
            cwd=root,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        answers = [json.loads(line) for line in mcp.stdout.splitlines() if line.strip()]
        assert answers and answers[0].get("id") == 1 and "result" in answers[0], mcp.stderr
        assert answers[0]["result"]["serverInfo"]["name"]
        _no_marker(markers, f"the MCP server as installed ({shlex.join(entry['args'])})")
    finally:
        proxy.terminate()
        proxy.wait(WAIT_S)
        model.stop()


SPAWN = """
import asyncio, sys
from fresh_ls.client import AsyncClient

async def main():
    client = await AsyncClient.spawn(sys.argv[1])
    status = await client.status()
    await client.close()
    print(len(status["sessions"]))

asyncio.run(main())
"""


def test_a_harness_spawning_the_server_from_the_project_never_imports_it(
    hostile: tuple[Path, Path],
) -> None:
    """A harness (here a ``-P`` script, so only the child can import the root) whose working
    directory is the project."""
    root, markers = hostile
    done = subprocess.run(
        [sys.executable, "-P", "-c", SPAWN, str(root)],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
    _no_marker(markers, "AsyncClient.spawn")
