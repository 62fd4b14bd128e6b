"""Nothing in fresh-ls reads a repository file as code, and no program it starts comes from
the root (issue 27, "no other way in").

fresh-ls reads a root's files as text (tree-sitter parses them; nothing evaluates them) and
its JSON state as data. These checks read fresh-ls's own source:

- no ``-m fresh_ls`` argv without ``-P`` in ``fresh_ls/`` or ``vscode-ext/src`` (the rule of
  ``fresh_ls/launch.py``);
- no module that turns bytes into running code is imported (``runpy``, ``pickle``,
  ``marshal``, ``shelve``, ``importlib`` beyond ``resources``/``metadata``, ``code``), and
  ``exec``/``eval``/``compile``/``__import__`` are called only where listed here, with why;
- programs are started in listed places only, each with an argv that is this interpreter
  (``python_command``), an interpreter the caller passed, or the command the user typed
  after ``fresh-ls run --``;
- an ``endpoint.json`` a repository ships cannot point a client at another host.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

from fresh_ls.client import ConnectionClosedError, SyncClient, _spawning
from fresh_ls.hooks.link import Link, LinkError
from fresh_ls.statedir import endpoint_target

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "fresh_ls"
EXT_SRC = REPO / "vscode-ext" / "src"

UNSAFE_M = re.compile(r'"-m", *"fresh_ls"|-m fresh_ls')
CODE_MODULES = {"runpy", "pickle", "marshal", "shelve", "code", "codeop", "imp", "dill"}
IMPORTLIB_OK = {"importlib.resources", "importlib.metadata"}
CODE_CALLS = {"exec", "eval", "compile", "__import__"}
#: (file, call) -> why it is not a repository's code.
CODE_CALLS_ALLOWED = {
    ("protocol/__init__.py", "exec"): (
        "compiles unstructure functions generated from fresh-ls's own "
        "protocol classes (field names and hooks), never text from a file"
    ),
    ("protocol/__init__.py", "compile"): "the same generated source",
}
PROGRAM_CALLS = {
    "Popen",
    "run",
    "call",
    "check_call",
    "check_output",
    "create_subprocess_exec",
    "create_subprocess_shell",
    "system",
    "popen",
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "spawnv",
    "spawnve",
    "posix_spawn",
}
PROGRAM_MODULES = {"subprocess", "asyncio", "os"}
#: file -> how many places start a program there, and what they start.
PROGRAMS_ALLOWED = {
    "client/__init__.py": (
        2,
        "the server: python_command (this interpreter, or the caller's python)",
    ),
    "proxy/serve.py": (1, "`fresh-ls run -- CMD`: the command the user typed"),
    "launch.py": (1, "the shared server, detached: autostart.StartPlan.argv (python_command)"),
    "cli.py": (1, "`git rev-parse --show-toplevel` for run's root: a fixed argv, git from PATH"),
    "toolcalls/search_rerun.py": (
        1,
        "a stale search run again: grep, rg or git grep from PATH with allow-listed flags, "
        "no shell, every path inside the root, a time limit (docs/security.md)",
    ),
}


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_fresh_ls_argv_without_P() -> None:
    files = [*_sources(), *sorted(EXT_SRC.glob("*.ts"))]
    bad = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if UNSAFE_M.search(line) and "-P" not in line
    ]
    assert not bad, "a fresh-ls launch without -P:\n" + "\n".join(bad)


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, dotted name) of every absolute import; ``from a import b`` gives ``a.b``."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def test_no_module_that_runs_bytes_as_code_is_imported() -> None:
    bad = []
    for path in _sources():
        for line, name in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            top = name.split(".")[0]
            allowed = any(name == ok or name.startswith(ok + ".") for ok in IMPORTLIB_OK)
            if top in CODE_MODULES or (top == "importlib" and not allowed):
                bad.append(f"{path.relative_to(REPO)}:{line}: imports {name}")
    assert not bad, "\n".join(bad)


def test_exec_eval_compile_only_where_listed() -> None:
    found = set()
    bad = []
    for path in _sources():
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in CODE_CALLS
            ):
                if (rel, node.func.id) in CODE_CALLS_ALLOWED:
                    found.add((rel, node.func.id))
                else:
                    bad.append(f"fresh_ls/{rel}:{node.lineno}: {node.func.id}(...)")
    assert not bad, "code run from a string; say why it is safe in CODE_CALLS_ALLOWED:\n" + (
        "\n".join(bad)
    )
    assert found == set(CODE_CALLS_ALLOWED), "an allowed call is gone: drop it from the list"


def test_programs_are_started_in_listed_places_only() -> None:
    starts: dict[str, int] = {}
    for path in _sources():
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            owner = node.func.value
            if (
                node.func.attr in PROGRAM_CALLS
                and isinstance(owner, ast.Name)
                and owner.id in PROGRAM_MODULES
                and not (owner.id == "asyncio" and node.func.attr == "run")
            ):
                starts[rel] = starts.get(rel, 0) + 1
    assert starts == {rel: n for rel, (n, _) in PROGRAMS_ALLOWED.items()}


def test_the_server_a_client_spawns_is_this_interpreter_with_P_or_the_callers() -> None:
    argv, _, _ = _spawning("/r", {})
    assert argv[:4] == [sys.executable, "-P", "-m", "fresh_ls"]
    argv, _, _ = _spawning("/r", {"python": "/opt/py/bin/python", "extra_args": ["--listen"]})
    assert argv[:4] == ["/opt/py/bin/python", "-P", "-m", "fresh_ls"]
    assert argv[4:] == ["serve", "--root", "/r", "--stdio", "--listen"]


def test_the_shared_server_a_client_starts_is_this_interpreter_with_P() -> None:
    from fresh_ls.autostart import StartPlan

    argv = StartPlan(Path("/r"), Path("/r/.fresh-ls"), idle_exit_s=60).argv()
    assert argv[:4] == [sys.executable, "-P", "-m", "fresh_ls"]
    assert argv[4:] == ["serve", "--root", "/r", "--listen", "--idle-exit", "60"]


@pytest.mark.parametrize("address", ["tcp:192.0.2.7:443", "tcp:evil.example:80", "ws://x", "unix:"])
def test_an_endpoint_file_a_repository_ships_cannot_point_elsewhere(
    tmp_path: Path, address: str
) -> None:
    """A committed ``.fresh-ls/endpoint.json`` naming another host: the client, the hook's
    link (and with them the proxy and the MCP server) refuse it before connecting."""
    state = tmp_path / ".fresh-ls"
    state.mkdir()
    (state / "endpoint.json").write_text(json.dumps({"address": address, "token": "t", "pid": 1}))
    with pytest.raises(ValueError):
        endpoint_target(address)
    with pytest.raises(ConnectionClosedError, match="not"):
        SyncClient.attach(tmp_path, timeout=5)
    with pytest.raises(LinkError, match="not"):
        Link.open(state, timeout=5)
    assert endpoint_target("tcp:127.0.0.1:8123") == ("tcp", ("127.0.0.1", 8123))
