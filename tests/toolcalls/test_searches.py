"""Search results read back as the lines each file showed: every format the agents print, and
every shape that must give nothing (or nothing for one line) rather than a wrong line."""

from __future__ import annotations

import posixpath
from typing import Any

import pytest

from fresh_ls.toolcalls.agents import Searched, Seen, ToolCall, Wrote, recognize
from fresh_ls.toolcalls.searches import _SPECS, line_ranges, shown_text

CWD = "/ws"
FILES = {
    "/ws/a.py": "x\nfoo = 1\ny\nfoo()\nz\n",
    "/ws/src/b.py": "foo\nbar\nbaz\nfoo\n",
    "/ws/src/c-1-d.py": "foo\n",
    "/ws/s.py": "t = a[1:5:2]\n",
    "/ws/Makefile": "all:\n\tcd $(buildDir) && make\n",
}


def _text_of(path: str, cwd: str | None) -> str | None:
    return FILES.get(posixpath.normpath(posixpath.join(cwd or CWD, path)))


def _codex(out: str) -> str:
    return f"Chunk ID: 1a2b\nWall time: 0.01 seconds\nProcess exited with code 0\nOutput:\n{out}"


def S(path: str, *lines: tuple[int, str], cwd: str = CWD) -> Searched:
    return Searched(path, cwd, tuple(lines))


A = [(2, "foo = 1"), (4, "foo()")]
OH_TAIL = "[Python Interpreter: /usr/bin/python]\nroot@openhands-workspace:/ws # \n"
OH_TAIL += "[Command finished with exit code 0]"

FORMATS: list[tuple[str, str, Any, str, list[Searched]]] = [
    (
        "grep -n one file",
        "Bash",
        {"command": "grep -n foo a.py"},
        "2:foo = 1\n4:foo()\n",
        [S("a.py", *A)],
    ),
    (
        "grep -rn: path:N:text, files in order of first appearance",
        "Bash",
        {"command": "grep -rn foo ."},
        "./src/b.py:1:foo\n./a.py:2:foo = 1\n./src/b.py:4:foo\n./a.py:4:foo()\n",
        [S("./src/b.py", (1, "foo"), (4, "foo")), S("./a.py", *A)],
    ),
    (
        "grep -Hn, -nr and --line-number spellings",
        "Bash",
        {"command": "grep -Hn foo a.py"},
        "a.py:2:foo = 1\na.py:4:foo()\n",
        [S("a.py", *A)],
    ),
    (
        "grep -nr with no operand searches the working directory",
        "Bash",
        {"command": "grep -nr foo"},
        "a.py:2:foo = 1\n",
        [S("a.py", (2, "foo = 1"))],
    ),
    (
        "grep -rn on one file prints no path",
        "Bash",
        {"command": "grep --line-number -r foo a.py"},
        "2:foo = 1\n4:foo()\n",
        [S("a.py", *A)],
    ),
    (
        "context lines (-C1) and group separators; a path holding -N- is matched by its own name",
        "Bash",
        {"command": "grep -rn -C1 -i -E -w --include '*.py' foo src"},
        "src/b.py:1:foo\nsrc/b.py-2-bar\n--\nsrc/b.py-3-baz\nsrc/b.py:4:foo\nsrc/c-1-d.py:1:foo\n",
        [
            S("src/b.py", (1, "foo"), (2, "bar"), (3, "baz"), (4, "foo")),
            S("src/c-1-d.py", (1, "foo")),
        ],
    ),
    (
        "single file with context: N-text",
        "Bash",
        {"command": "grep -n -A 1 -e 'foo =' a.py"},
        "2:foo = 1\n3-y\n",
        [S("a.py", (2, "foo = 1"), (3, "y"))],
    ),
    (
        "cd first, stderr dropped, a head filter",
        "Bash",
        {"command": "cd src && grep -rnF foo . 2>/dev/null | head -n 1"},
        "./b.py:1:foo\n",
        [S("./b.py", (1, "foo"), cwd="/ws/src")],
    ),
    (
        "rg -n with headings (a terminal, or --heading)",
        "Bash",
        {"command": "rg -n foo"},
        "a.py\n2:foo = 1\n4:foo()\n\nsrc/b.py\n1:foo\n2-bar\n--\n4:foo\n",
        [S("a.py", *A), S("src/b.py", (1, "foo"), (2, "bar"), (4, "foo"))],
    ),
    (
        "rg --line-number --no-heading",
        "Bash",
        {"command": "rg --line-number --no-heading foo src"},
        "src/b.py:1:foo\nsrc/b.py:4:foo\n",
        [S("src/b.py", (1, "foo"), (4, "foo"))],
    ),
    (
        "rg -n as printed to a pipe (no heading)",
        "bash",
        {"command": "rg -n -g '*.py' foo"},
        "a.py:2:foo = 1\nsrc/b.py:1:foo\n",
        [S("a.py", (2, "foo = 1")), S("src/b.py", (1, "foo"))],
    ),
    (
        "rg -n on one file",
        "Bash",
        {"command": "rg -n foo a.py"},
        "2:foo = 1\n4:foo()\n",
        [S("a.py", *A)],
    ),
    (
        "git grep -n",
        "Bash",
        {"command": "git grep -n -B1 foo -- src"},
        "src/b.py:1:foo\nsrc/b.py-3-baz\nsrc/b.py:4:foo\n",
        [S("src/b.py", (1, "foo"), (3, "baz"), (4, "foo"))],
    ),
    (
        "git grep --heading: a path line straight after the last line of the file before",
        "Bash",
        {"command": "git grep -n --heading foo"},
        "a.py\n2:foo = 1\nsrc/b.py\n1:foo\n",
        [S("a.py", (2, "foo = 1")), S("src/b.py", (1, "foo"))],
    ),
    (
        "rg's stand-in for a long line is no text of the file",
        "Bash",
        {"command": "rg -n -M 80 foo /elsewhere/x.py"},
        "3:[Omitted long line with 1 matches]\n4:foo\n",
        [S("/elsewhere/x.py", (4, "foo"))],
    ),
    (
        "Claude Code Grep over the working directory: paths relative to it",
        "Grep",
        {"pattern": "foo", "output_mode": "content", "-n": True},
        "a.py:2:foo = 1\nsrc/b.py:1:foo\n\n[Showing results with pagination = limit: 250]",
        [S("a.py", (2, "foo = 1")), S("src/b.py", (1, "foo"))],
    ),
    (
        "Claude Code Grep of one file: N:text, -n defaults to true, context",
        "Grep",
        {"pattern": "foo", "path": "/ws/a.py", "output_mode": "content", "-A": 1},
        "2:foo = 1\n3-y\n4:foo()\n5-z",
        [S("/ws/a.py", (2, "foo = 1"), (3, "y"), (4, "foo()"), (5, "z"))],
    ),
    (
        "Claude Code Grep that timed out: the note first",
        "Grep",
        {"pattern": "foo", "path": "/ws/src", "output_mode": "content"},
        "The search stopped before it finished, most likely at its time limit, so these "
        "results are incomplete: more matches may exist. Search a more specific path or "
        "pattern.\n\n/ws/src/b.py:1:foo",
        [S("/ws/src/b.py", (1, "foo"))],
    ),
    (
        "OpenHands execute_bash: echoed command, a note glued to the last line, the prompt",
        "execute_bash",
        {"command": "grep -n foo a.py"},
        "grep -n foo a.py\r\n2:foo = 1\r\n4:foo()" + OH_TAIL,
        [S("a.py", *A)],
    ),
    (
        "OpenHands 1.x: exit code and working directory notes after the output",
        "execute_bash",
        {"command": "grep -n foo a.py"},
        "2:foo = 1\n4:foo()\n[The command completed with exit code 0.]\n"
        "[Current working directory: /ws]\n[Python interpreter: /usr/bin/python]",
        [S("a.py", *A)],
    ),
    (
        "Codex exec_command after its preamble, workdir",
        "exec_command",
        {"cmd": "rg -n foo", "workdir": "src"},
        _codex("b.py:1:foo\nb.py:4:foo\n"),
        [S("b.py", (1, "foo"), (4, "foo"), cwd="/ws/src")],
    ),
    (
        "Codex shell [bash, -lc, ...]",
        "shell",
        {"command": ["bash", "-lc", "grep -n foo a.py"]},
        _codex("2:foo = 1\n"),
        [S("a.py", (2, "foo = 1"))],
    ),
    (
        "text holding :digits: is read as text when the file confirms it",
        "Bash",
        {"command": "grep -rn 'a\\[' ."},
        "./s.py:1:t = a[1:5:2]\n",
        [S("./s.py", (1, "t = a[1:5:2]"))],
    ),
    (
        "a file the lookup does not know: lines kept as shown",
        "Bash",
        {"command": "grep -n foo /elsewhere/x.py"},
        "7:foo bar\n",
        [S("/elsewhere/x.py", (7, "foo bar"))],
    ),
]


@pytest.mark.parametrize(
    ("name", "args", "output", "expected"),
    [pytest.param(n, a, o, e, id=i) for i, n, a, o, e in FORMATS],
)
def test_formats(name: str, args: Any, output: str, expected: list[Searched]) -> None:
    assert recognize(ToolCall("c1", name, args, output), CWD, _text_of) == expected


NOTHING: list[tuple[str, str, Any, str]] = [
    ("grep without -n", "Bash", {"command": "grep foo a.py"}, "foo = 1\n"),
    ("grep -c counts", "Bash", {"command": "grep -nc foo a.py"}, "2\n"),
    ("grep -l names files", "Bash", {"command": "grep -rln foo ."}, "./a.py\n"),
    ("grep -o prints only the match", "Bash", {"command": "grep -on foo a.py"}, "2:foo\n"),
    ("grep --count", "Bash", {"command": "grep -n --count foo a.py"}, "2\n"),
    ("grep -h hides the path", "Bash", {"command": "grep -rhn foo src"}, "1:foo\n"),
    ("grep -b byte offsets", "Bash", {"command": "grep -nb foo a.py"}, "2:2:foo = 1\n"),
    ("grep with colours", "Bash", {"command": "grep -n --color=always foo a.py"}, "2:foo = 1\n"),
    ("grep reads stdin", "Bash", {"command": "cat a.py | grep -n foo"}, "2:foo = 1\n"),
    ("grep into a file", "Bash", {"command": "grep -n foo a.py > out"}, ""),
    ("grep piped into a filter", "Bash", {"command": "grep -n foo a.py | sort"}, "2:foo = 1\n"),
    ("an unknown flag", "Bash", {"command": "grep -n --label=x foo a.py"}, "2:foo = 1\n"),
    ("rg -c", "Bash", {"command": "rg -n -c foo"}, "a.py:2\n"),
    ("rg --replace changes the text", "Bash", {"command": "rg -n -r bar foo a.py"}, "2:bar = 1\n"),
    ("rg --column", "Bash", {"command": "rg -n --column foo a.py"}, "2:1:foo = 1\n"),
    ("rg without -n", "Bash", {"command": "rg foo a.py"}, "foo = 1\n"),
    (
        "git grep --cached shows the index",
        "Bash",
        {"command": "git grep -n --cached foo"},
        "a.py:2:foo = 1\n",
    ),
    ("Grep in files mode", "Grep", {"pattern": "foo"}, "Found 1 file\n/ws/a.py"),
    (
        "Grep with -n false",
        "Grep",
        {"pattern": "foo", "output_mode": "content", "-n": False},
        "foo = 1",
    ),
    ("Grep with no match", "Grep", {"pattern": "q", "output_mode": "content"}, "No matches found"),
    (
        "every line differs from the file now",
        "Bash",
        {"command": "grep -n foo a.py"},
        "2:foo = 2\n4:foo(1)\n",
    ),
    ("a line number past the end", "Bash", {"command": "grep -n foo a.py"}, "9:foo\n"),
]


@pytest.mark.parametrize(
    ("name", "args", "output"),
    [pytest.param(n, a, o, id=i) for i, n, a, o in NOTHING],
)
def test_shapes_that_give_no_search(name: str, args: Any, output: str) -> None:
    effects = recognize(ToolCall("c1", name, args, output), CWD, _text_of)
    assert not [e for e in effects if isinstance(e, Searched)]


LINES_LEFT_OUT: list[tuple[str, str, str, list[Searched]]] = [
    (
        "a path holding :digits: is ambiguous: that line is left out",
        "grep -rn foo src",
        "src/b.py:1:foo\nsrc/x:3:y.py:5:foo\n",
        [S("src/b.py", (1, "foo"))],
    ),
    (
        "binary-file notes and grep's own messages are no lines",
        "grep -rn foo .",
        "Binary file ./img.png matches\ngrep: ./d: Permission denied\n./a.py:2:foo = 1\n",
        [S("./a.py", (2, "foo = 1"))],
    ),
    (
        "a line that no longer matches the file is left out, the rest kept",
        "grep -n foo a.py",
        "2:foo = 1\n4:foo(changed)\n",
        [S("a.py", (2, "foo = 1"))],
    ),
    (
        "a TAB a terminal turned into spaces (OpenHands) still matches; the file's text is kept",
        "grep -n buildDir Makefile",
        "2:      cd $(buildDir) && make\n",  # to column 8
        [S("Makefile", (2, "\tcd $(buildDir) && make"))],
    ),
    (
        "spaces that are no tab stop's worth are no TAB",
        "grep -n buildDir Makefile",
        "2:  cd $(buildDir) && make\n",
        [],
    ),
    (
        "a path outside the folders searched is not trusted",
        "grep -rn foo src",
        "other/b.py:1:foo\nsrc/b.py:1:foo\n",
        [S("src/b.py", (1, "foo"))],
    ),
    (
        "a context line whose path no match line named is left out",
        "grep -rn -A1 foo src",
        "src/b.py:1:foo\nsrc/q.py-2-bar\n",
        [S("src/b.py", (1, "foo"))],
    ),
]


@pytest.mark.parametrize(
    ("command", "output", "expected"),
    [pytest.param(c, o, e, id=i) for i, c, o, e in LINES_LEFT_OUT],
)
def test_lines_left_out(command: str, output: str, expected: list[Searched]) -> None:
    effects = recognize(ToolCall("c1", "Bash", {"command": command}, output), CWD, _text_of)
    assert effects == expected


def test_effects_order_writes_then_one_view_then_searches() -> None:
    # a search is never also a view: the shell form gives only its lines
    effects = recognize(
        ToolCall("c1", "Bash", {"command": "grep -rn foo src"}, "src/b.py:1:foo\n"), CWD, _text_of
    )
    assert [type(e) for e in effects] == [Searched]
    assert not any(isinstance(e, Seen | Wrote) for e in effects)


def test_a_failed_tool_call_gives_no_search() -> None:
    call = ToolCall(
        "c1", "Grep", {"pattern": "foo", "output_mode": "content"}, "a.py:2:foo = 1", True
    )
    assert recognize(call, CWD, _text_of) == []


def test_ranges_and_text_for_observe() -> None:
    found = S("f.py", (1, "a"), (2, "b"), (4, "d"), (7, "g"), (8, "h"))
    assert line_ranges(found) == [(1, 2), (4, 4), (7, 8)]
    assert shown_text(found) == "a\nb\nd\ng\nh\n"


@pytest.mark.parametrize("tool", sorted(_SPECS))
def test_flags_and_valued_options_are_disjoint(tool: str) -> None:
    # the option walk tries a name as a flag before as a valued option: a name in both
    # would be read as a flag and its value as an operand (``--include '*.py'``: a file to
    # search)
    spec = _SPECS[tool]
    assert spec.flags and spec.valued
    assert spec.flags.isdisjoint(spec.valued), sorted(spec.flags & spec.valued)
