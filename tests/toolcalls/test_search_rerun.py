"""A stale search result as the search would print it now: which commands may be re-run (and
which are refused), a real re-run with its time limit and output cap, and the rebuild of the
printed lines in place for every format."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Any

import pytest

from fresh_ls.toolcalls.agents import ToolCall
from fresh_ls.toolcalls.search_rerun import (
    envelope_of,
    gone_note,
    rebuild,
    refresh,
    rerun_argv,
    run_search,
)

ROOT = "/ws"


def _inside(path: str) -> bool:
    return path == ROOT or path.startswith(ROOT + "/")


ALLOWED: list[tuple[str, str, list[str]]] = [
    ("grep one file", "grep -n foo a.py", ["grep", "--color=never", "-n", "foo", "a.py"]),
    (
        "grep -rn with flags, a quoted include glob, the working directory",
        "grep -rn -i -E -w -C2 --include='*.py' 'foo|bar'",
        ["grep", "--color=never", "-rn", "-i", "-E", "-w", "-C2", "--include=*.py", "foo|bar"],
    ),
    (
        "a pattern with $ inside single quotes",
        "grep -n 'foo$' src/a.py",
        ["grep", "--color=never", "-n", "foo$", "src/a.py"],
    ),
    (
        "rg: no config file, no colour",
        "rg -n foo src",
        ["rg", "--no-config", "--color=never", "-n", "foo", "src"],
    ),
    (
        "git grep: no pager, no fsmonitor hook, no colour",
        "git grep -n foo -- src",
        [
            "git",
            "--no-pager",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "color.ui=never",
            "-c",
            "color.grep=never",
            "grep",
            "-n",
            "foo",
            "--",
            "src",
        ],
    ),
]


@pytest.mark.parametrize(("command", "argv"), [pytest.param(c, a, id=i) for i, c, a in ALLOWED])
def test_plain_searches_are_rerun(command: str, argv: list[str]) -> None:
    assert rerun_argv(command, ROOT, _inside) == argv


def test_rg_keeps_the_heading_shape_it_printed() -> None:
    assert rerun_argv("rg -n foo", ROOT, _inside, heading=True) == [
        "rg",
        "--no-config",
        "--color=never",
        "--heading",
        "-n",
        "foo",
    ]


REFUSED: list[tuple[str, str, str]] = [
    ("a pipe", "grep -n foo a.py | head", ROOT),
    ("a redirection", "grep -n foo a.py 2>/dev/null", ROOT),
    ("output to a file", "grep -n foo a.py > out", ROOT),
    ("a sequence", "grep -n foo a.py; rm -rf x", ROOT),
    ("an and-list", "cd src && grep -n foo a.py", ROOT),
    ("a command substitution", "grep -n $(cat p) a.py", ROOT),
    ("a substitution inside double quotes", 'grep -n "$(id)" a.py', ROOT),
    ("backquotes", "grep -n `id` a.py", ROOT),
    ("an unquoted glob", "grep -n foo *.py", ROOT),
    ("an unquoted include glob", "grep -rn --include=*.py foo", ROOT),
    ("an environment assignment", "GREP_OPTIONS=-f/etc/passwd grep -n foo a.py", ROOT),
    ("a pattern file", "grep -n -f patterns a.py", ROOT),
    ("rg's preprocessor", "rg -n --pre ./run foo", ROOT),
    ("rg decompressing", "rg -n -z foo", ROOT),
    ("rg following symlinks", "rg -n -L foo", ROOT),
    ("grep following symlinks", "grep -Rn foo", ROOT),
    ("a path outside the root", "grep -n foo /etc/passwd", ROOT),
    ("a path climbing out", "grep -rn foo ../other", ROOT),
    ("no path operand, working directory outside", "grep -rn foo", "/elsewhere"),
    ("git pathspec magic", "git grep -n foo -- ':(top)x'", ROOT + "/sub"),
    ("no line numbers", "grep foo a.py", ROOT),
    ("not a search", "cat a.py", ROOT),
    ("a tilde", "grep -n foo ~/a.py", ROOT),
]


@pytest.mark.parametrize(("command", "cwd"), [pytest.param(c, w, id=i) for i, c, w in REFUSED])
def test_refused(command: str, cwd: str) -> None:
    assert rerun_argv(command, cwd, _inside) is None


def test_a_symlink_out_of_the_root_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.py").write_text("foo\n")
    (root / "link.py").symlink_to(outside / "secret.py")
    real_root = str(root.resolve())

    def inside(path: str) -> bool:
        return path == real_root or path.startswith(real_root + "/")

    assert rerun_argv("grep -n foo link.py", str(root), inside) is None
    (root / "a.py").write_text("foo\n")
    assert rerun_argv("grep -n foo a.py", str(root), inside) is not None


# -- running ---------------------------------------------------------------------------------


def test_run_prints_what_grep_prints(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\nfoo\ny\n")
    argv = rerun_argv("grep -n -A1 foo a.py", str(tmp_path), lambda p: True)
    assert argv is not None
    assert run_search(argv, str(tmp_path)) == "2:foo\n3-y\n"


def test_no_match_is_a_valid_empty_output(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    assert run_search(["grep", "-n", "foo", "a.py"], str(tmp_path)) == ""


def test_a_failing_search_gives_none(tmp_path: Path) -> None:
    assert run_search(["grep", "-n", "foo", "missing.py"], str(tmp_path)) is None
    assert run_search(["no-such-search-program", "-n"], str(tmp_path)) is None


def test_a_search_that_runs_long_is_killed(tmp_path: Path) -> None:
    # grep blocks opening a FIFO nobody writes to: only the time limit ends it
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert run_search(["grep", "-n", "foo", "pipe"], str(tmp_path), timeout_s=0.3) is None


def test_an_output_past_the_cap_is_dropped_not_cut(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("foo\n" * 100_000)
    assert run_search(["grep", "-n", "foo", "big.txt"], str(tmp_path), max_bytes=64 * 1024) is None
    whole = run_search(["grep", "-n", "foo", "big.txt"], str(tmp_path), max_bytes=4 << 20)
    assert whole is not None and whole.count("\n") == 100_000


def test_the_environment_does_not_leak_into_a_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.py").write_text("foo\n")
    monkeypatch.setenv("GREP_COLORS", "mt=01;31")
    monkeypatch.setenv("GREP_COLOR", "01;31")
    assert run_search(["grep", "--color=never", "-n", "foo", "a.py"], str(tmp_path)) == "1:foo\n"


# -- rebuilding ------------------------------------------------------------------------------

NOW = {
    "/ws/a.py": "x\nfoo = 2\ny\n",
    "/ws/src/b.py": "foo\nBAR\n",
}


def _text_of(path: str, cwd: str | None) -> str | None:
    return NOW.get(posixpath.normpath(posixpath.join(cwd or ROOT, path)))


GONE = gone_note(4, 3)
REBUILT: list[tuple[str, str, Any, str, str]] = [
    (
        "grep -n one file: text replaced, a line past the end says it is gone",
        "Bash",
        {"command": "grep -n foo a.py"},
        "2:foo = 1\n4:foo()\n",
        f"2:foo = 2\n4:{GONE}\n",
    ),
    (
        "grep -rn with context and separators; an unknown file kept as printed",
        "Bash",
        {"command": "grep -rn -A1 foo ."},
        "./src/b.py:1:foo\n./src/b.py-2-bar\n--\n./zz.py:9:foo\n",
        "./src/b.py:1:foo\n./src/b.py-2-BAR\n--\n./zz.py:9:foo\n",
    ),
    (
        "rg with headings",
        "Bash",
        {"command": "rg -n foo"},
        "a.py\n2:foo = 1\n\nsrc/b.py\n1:foo\n2-bar\n",
        "a.py\n2:foo = 2\n\nsrc/b.py\n1:foo\n2-BAR\n",
    ),
    (
        "Claude Code Grep: the pagination note kept",
        "Grep",
        {"pattern": "foo", "output_mode": "content"},
        "a.py:2:foo = 1\n\n[Showing results with pagination = limit: 250]",
        "a.py:2:foo = 2\n\n[Showing results with pagination = limit: 250]",
    ),
    (
        "OpenHands: echoed command, CRLF, a note glued to the last line, the prompt",
        "execute_bash",
        {"command": "grep -n foo a.py"},
        "grep -n foo a.py\r\n2:foo = 1\r\n4:foo()[Python Interpreter: /usr/bin/python]\n"
        "root@oh:/ws # \n[Command finished with exit code 0]",
        f"grep -n foo a.py\r\n2:foo = 2\r\n4:{GONE}[Python Interpreter: /usr/bin/python]\n"
        "root@oh:/ws # \n[Command finished with exit code 0]",
    ),
    (
        "Codex: the preamble kept",
        "exec_command",
        {"cmd": "rg -n foo src"},
        "Chunk ID: 1\nWall time: 0.1 seconds\nOutput:\nsrc/b.py:2:bar\n",
        "Chunk ID: 1\nWall time: 0.1 seconds\nOutput:\nsrc/b.py:2:BAR\n",
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "output", "expected"),
    [pytest.param(n, a, o, e, id=i) for i, n, a, o, e in REBUILT],
)
def test_rebuild(name: str, args: Any, output: str, expected: str) -> None:
    envelope = envelope_of(ToolCall("c1", name, args, output), ROOT)
    assert envelope is not None
    assert rebuild(envelope, _text_of) == expected


def test_a_file_that_is_gone_says_so_on_every_line() -> None:
    envelope = envelope_of(ToolCall("c1", "Bash", {"command": "grep -n foo x.py"}, "3:foo\n"), ROOT)
    assert envelope is not None
    assert rebuild(envelope, lambda p, c: "") == f"3:{gone_note(3, 0)}\n"


def test_not_a_search_has_no_envelope() -> None:
    for name, args in [
        ("Bash", {"command": "cat a.py"}),
        ("Bash", {"command": "grep -c foo a.py"}),
        ("Grep", {"pattern": "foo"}),
        ("Read", {"file_path": "/ws/a.py"}),
    ]:
        assert envelope_of(ToolCall("c1", name, args, "1:x"), ROOT) is None


# -- refresh: re-run when allowed, else rebuild ----------------------------------------------


def test_refresh_reruns_a_plain_search_and_sees_new_matches(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\nfoo = 1\n")
    call = ToolCall("c1", "Bash", {"command": "grep -rn foo ."}, "./a.py:2:foo = 1\n")
    (tmp_path / "a.py").write_text("foo()\nx\nfoo = 2\n")
    (tmp_path / "b.py").write_text("foo\n")
    root = str(tmp_path.resolve())
    done = refresh(call, str(tmp_path), lambda p, c: None, inside=lambda p: p.startswith(root))
    assert done is not None and done.how == "rerun"
    assert sorted(done.output.splitlines()) == [
        "./a.py:1:foo()",
        "./a.py:3:foo = 2",
        "./b.py:1:foo",
    ]


def test_refresh_rebuilds_what_it_may_not_rerun(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("foo = 2\n")
    call = ToolCall("c1", "Bash", {"command": "grep -n foo a.py | head -5"}, "1:foo = 1\n")

    def text_of(path: str, cwd: str | None) -> str | None:
        return (tmp_path / path).read_text()

    done = refresh(call, str(tmp_path), text_of, inside=lambda p: True)
    assert done is not None and (done.how, done.output) == ("rebuild", "1:foo = 2\n")


def test_refresh_keeps_the_agents_envelope_around_a_rerun(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("foo = 3\n")
    output = "grep -n foo a.py\r\n1:foo = 1[Python Interpreter: /bin/python]\nroot@h:/ws # \n"
    call = ToolCall("c1", "execute_bash", {"command": "grep -n foo a.py"}, output)
    done = refresh(call, str(tmp_path), lambda p, c: None, inside=lambda p: True)
    assert done is not None and done.how == "rerun"
    assert (
        done.output
        == "grep -n foo a.py\r\n1:foo = 3[Python Interpreter: /bin/python]\nroot@h:/ws # \n"
    )
