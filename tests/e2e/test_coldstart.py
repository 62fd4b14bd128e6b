"""Cold start is structural: a command imports only what it needs.

``fresh-ls status`` (and ``stale``, ``project``, any ``SyncClient`` user such as a hook
run per tool call) talks JSON-RPC with the standard library and orjson (one extension
module, to read answers): no pygls, no tree-sitter, no SQLite driver, no watcher, no
asyncio, no audit parsers. ``serve`` loads pygls, but the grammars and the fuzzy matcher
only on the first parse or match. The wall times are measured by
benchmarks/bench_coldstart.py, not here: these tests check the imports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ._support import Listening, make_workspace, short_socket_path

pytestmark = pytest.mark.timeout(120)

HEAVY = ("tree_sitter", "rapidfuzz", "aiosqlite", "watchfiles", "pygls", "lsprotocol", "cattrs")

#: Runs ``code`` in a fresh interpreter, then prints the loaded modules of interest as JSON.
_PROBE = """
import contextlib, io, json, sys
{code}
prefixes = tuple(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in prefixes or m.startswith(prefixes))
print(json.dumps({{"result": result, "loaded": loaded}}))
"""


def probe(code: str, *prefixes: str, cwd: Path | None = None) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(code=code), *prefixes],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout.splitlines()[-1]))


def test_status_against_a_running_server_imports_nothing_heavy(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws")
    server = Listening(root, f"unix:{short_socket_path()}")
    try:
        got = probe(
            "from fresh_ls.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as shown:\n"
            f"    code = main(['status', '--root', {str(root)!r}])\n"
            "result = [code, shown.getvalue()]",
            *HEAVY,
            "asyncio",
            "fresh_ls.audit",
            "fresh_ls.replay",
            "fresh_ls.server",
            "fresh_ls.engine",
            "fresh_ls.engine.store",
        )
    finally:
        server.stop()
    code, shown = got["result"]
    assert code == 0
    assert f"serving {root}" in shown
    assert got["loaded"] == []


def test_the_client_alone_imports_nothing_heavy() -> None:
    got = probe("import fresh_ls.client, fresh_ls.cli\nresult = None", *HEAVY, "asyncio")
    assert got["loaded"] == []


def test_serve_loads_the_grammars_and_the_fuzzy_matcher_on_first_use() -> None:
    got = probe("import fresh_ls.server.app\nresult = None", "tree_sitter", "rapidfuzz")
    assert got["loaded"] == []
    got = probe(
        "from fresh_ls.core.symbols import parse_definitions\n"
        "result = len(parse_definitions('a.py', b'def f():\\n    pass\\n') or [])",
        "tree_sitter",
    )
    assert got["result"] == 1
    assert "tree_sitter" in got["loaded"]


def test_the_full_parser_still_lists_every_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "fresh_ls", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    for command in ("serve", "status", "stale", "project", "demo", "audit", "replay"):
        assert command in out.stdout
