"""``staleness.unified_diff``: what a ``changed`` unit's ``diff`` says, whatever the lines.

The lines both sides share at their ends are left out before difflib looks (but the three
context lines next to what differs): the diff must still turn the observed lines into the
current ones, hunk by hunk at the file's own line numbers, and say just what difflib says
of the whole when a long shared run holds one changed line."""

from __future__ import annotations

import difflib
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fresh_ls.core.staleness import unified_diff

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")
#: Few distinct lines, so runs repeat and difflib has choices to make.
LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "d"]), max_size=40)


def apply(diff: str, obs_first: int, observed: list[str]) -> list[str]:
    """The observed lines with every hunk of ``diff`` applied, checking each removed and
    context line against them (hunk numbers are file line numbers)."""
    rows = diff.split("\n")
    assert rows[0].startswith("--- ") and rows[1].startswith("+++ ")
    out: list[str] = []
    at = 0  # index into observed
    i = 2
    while i < len(rows) and rows[i]:
        m = HUNK.match(rows[i])
        assert m, rows[i]
        start = int(m.group(1)) - obs_first  # 0-based in observed
        if m.group(2) == "0":
            start += 1  # an empty range names the line before it
        out += observed[at:start]
        at = start
        i += 1
        while i < len(rows) and rows[i] and not rows[i].startswith("@@"):
            kind, text = rows[i][0], rows[i][1:] + "\n"
            if i + 1 < len(rows) and rows[i + 1] == "\\ No newline at end of file":
                text = text[:-1]
                i += 1
            if kind in " -":
                assert observed[at] == text
                at += 1
            if kind in " +":
                out.append(text)
            i += 1
    return out + observed[at:]


@settings(max_examples=400, deadline=None)
@given(LINES, LINES, LINES, st.integers(1, 50), st.integers(1, 50))
def test_the_diff_turns_what_was_observed_into_what_is_there(
    shared: list[str],
    observed_end: list[str],
    current_end: list[str],
    obs_first: int,
    cur_first: int,
) -> None:
    # a line without its line feed may only end a side
    shared = [line if line.endswith("\n") else line + "\n" for line in shared]
    observed, current = shared + observed_end, shared + current_end
    for a, b in (
        (observed, current),
        (current, observed),
        (observed_end + shared, current_end + shared),
    ):
        diff = unified_diff("m.py", obs_first, a, cur_first, b)
        assert apply(diff, obs_first, a) == b


def test_one_line_changed_in_a_long_file_is_difflibs_own_diff() -> None:
    old = [f"    value_{n} = {n}\n" for n in range(5000)]
    new = list(old)
    new[2500] = "    bench_value = 1\n"
    diff = unified_diff("m.py", 1, old, 1, new)
    whole = list(difflib.unified_diff(old, new, n=3, lineterm=""))[2:]
    assert diff.split("\n")[2:-1] == [line.rstrip("\n") for line in whole]
    assert diff.split("\n")[2] == "@@ -2498,7 +2498,7 @@"
