"""Re-rendering a tool result from current lines (``fresh_ls.core.rerender``), table-driven:
each row is a tool's way of printing lines, or a result that must not be patched."""

from __future__ import annotations

import pytest

from fresh_ls.core.rerender import align, rerender

OBSERVED = ["def a():\n", "    return 1\n", "\n"]
CURRENT = ["def a():\n", "    return 10\n", "\n"]

PRINTED = [
    # (name, result, the same result re-rendered from CURRENT)
    (
        "cat -n (OpenHands, Codex)",
        "Here is x.py:\n     4\tdef a():\n     5\t    return 1\n     6\t\nDone.\n",
        "Here is x.py:\n     4\tdef a():\n     5\t    return 10\n     6\t\nDone.\n",
    ),
    (
        "number and colon (SWE-agent)",
        "[File: x.py]\n4:def a():\n5:    return 1\n6:\n(3 more lines)\n",
        "[File: x.py]\n4:def a():\n5:    return 10\n6:\n(3 more lines)\n",
    ),
    (
        "number and arrow (Claude Code)",
        "     4\u2192def a():\n     5\u2192    return 1\n     6\u2192\n",
        "     4\u2192def a():\n     5\u2192    return 10\n     6\u2192\n",
    ),
    ("plain (sed -n, Pi)", "def a():\n    return 1\n\n", "def a():\n    return 10\n\n"),
    ("CRLF result", "def a():\r\n    return 1\r\n\r\n", "def a():\r\n    return 10\r\n\r\n"),
]


@pytest.mark.parametrize(("name", "result", "expected"), PRINTED, ids=[p[0] for p in PRINTED])
def test_rerender_keeps_the_decoration(name: str, result: str, expected: str) -> None:
    spans = align(result, OBSERVED)
    assert spans is not None, name
    assert rerender(result, spans, CURRENT) == expected


REFUSED = [
    ("the lines twice", "def a():\n    return 1\n\ndef a():\n    return 1\n\n"),
    ("a line missing", "def a():\n\n"),
    ("code before a line", "x = def a():\n    return 1\n\n"),
    ("numbers that do not count up", "4\tdef a():\n9\t    return 1\n10\t\n"),
    ("cut short by the tool", "def a():\n    return 1... (truncated)\n\n"),
]


@pytest.mark.parametrize(("name", "result"), REFUSED, ids=[r[0] for r in REFUSED])
def test_no_patch_without_one_sure_place(name: str, result: str) -> None:
    assert align(result, OBSERVED) is None, name


def test_only_blank_lines_are_never_aligned() -> None:
    assert align("\n\n", ["\n", "\n"]) is None
