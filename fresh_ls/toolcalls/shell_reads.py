"""Shell calls that show one file's lines with known numbers: views made by the shell.

Only simple forms count: ``cat F``, ``cat -n F``, ``nl -ba F``, ``sed -n 'A,Bp' F``,
``head``/``tail`` of one file and ``cat F | head``/``tail``. Anything piped through a filter or
several files shows lines whose numbers the model cannot know, so it is no view. A search that
prints line numbers (``grep -n``, ``rg -n``, ``git grep -n``) is a sparse view of the lines it
printed; ``searches`` reads those, not this module (a ``grep`` without ``-n`` is no view).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from fresh_ls.toolcalls.lines import END
from fresh_ls.toolcalls.numbered import parse_cat_n, plain_lines
from fresh_ls.toolcalls.sed import parse_sed
from fresh_ls.toolcalls.shell_parse import Pipeline


@dataclass
class Read:
    """Lines ``first..last`` of ``path`` shown by the shell, with their text."""

    path: str  # as written; resolve with ``cwd``
    cwd: str | None
    first: int
    last: int
    lines: dict[int, str]
    whole_file: bool = False


_TRUNCATION = re.compile(
    r"(<response clipped>|\[\.\.\. Observation truncated|Output truncated|"
    r"\[Output too long)"
)
_VALUE_OPTIONS = {
    "head": ("-n", "-c", "--lines", "--bytes"),
    "tail": ("-n", "-c", "--lines", "--bytes"),
    "nl": ("-b", "-n", "-w", "-s", "-v", "-i"),
}


def operands(argv: list[str], with_values: tuple[str, ...] = ()) -> list[str]:
    """Non-option arguments, skipping the values of options listed in ``with_values``."""
    out: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            out.extend(argv[i:])
            break
        if arg in with_values:
            i += 1
            continue
        if arg.startswith("-") and arg != "-":
            continue
        out.append(arg)
    return out


def _count_option(argv: list[str], default: int) -> tuple[int, bool] | None:
    """``-n N`` / ``-N`` / ``-n +N`` / ``--lines=N``: (N, from_start)."""
    for i, arg in enumerate(argv[1:], start=1):
        value = None
        if arg in ("-n", "--lines") and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--lines="):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-n") and len(arg) > 2:
            value = arg[2:]
        elif re.fullmatch(r"-\d+", arg):
            value = arg[1:]
        if value is not None:
            from_start = value.startswith("+")
            digits = value.lstrip("+-")
            return (int(digits), from_start) if digits.isdigit() else None
    return default, False


def _clean_output(output: str) -> list[str]:
    match = _TRUNCATION.search(output)
    if match:
        output = output[: match.start()]
        return plain_lines(output)[:-1]  # the line cut by the marker is not whole
    return plain_lines(output)


def read_of(
    pipeline: Pipeline,
    output: str,
    cwd: str | None,
    total_of: Callable[[str, str | None], int | None],
) -> Read | None:
    commands = pipeline.commands
    first_cmd = commands[0]
    if first_cmd.writes() or any(r.op in ("<", "<<", "<<<") for r in first_cmd.redirects):
        return None
    name = first_cmd.argv[0] if first_cmd.argv else ""
    ops = operands(first_cmd.argv, _VALUE_OPTIONS.get(name, ()))
    numbered = name == "nl" or (name == "cat" and "-n" in first_cmd.argv[1:])
    if name == "nl" and not ("-ba" in first_cmd.argv or "-b" in first_cmd.argv):
        return None  # plain nl skips blank lines, so its numbers are not line numbers
    if name in ("cat", "nl", "head", "tail") and len(ops) != 1:
        return None
    if name == "sed":
        call = parse_sed(first_cmd.argv)
        if call.in_place or call.print_range is None or len(call.files) != 1:
            return None
        ops = call.files
    elif name not in ("cat", "nl", "head", "tail"):
        return None
    path = ops[0]
    for later in commands[1:]:
        if not later.argv or later.argv[0] not in ("head", "tail"):
            return None
        if name not in ("cat", "nl"):
            return None
    lines = _clean_output(output)
    if not lines:
        return None
    if numbered:
        listing = parse_cat_n("\n".join(lines))
        if listing is None:
            return None
        whole = len(commands) == 1 and listing.first == 1 and listing.last == len(lines)
        return Read(path, cwd, listing.first, listing.last, listing.lines, whole)
    shown = len(lines)
    # Which command decides the range: the last of the pipeline.
    last_cmd = commands[-1]
    last_name = last_cmd.argv[0]
    if last_name == "sed":
        call = parse_sed(last_cmd.argv)
        assert call.print_range is not None
        first = call.print_range[0]
    elif last_name == "tail":
        count = _count_option(last_cmd.argv, 10)
        if count is None:
            return None
        n, from_start = count
        if from_start:
            first = max(1, n)
        else:
            total = total_of(path, cwd)
            if shown < n:
                first = 1  # the file is shorter than what tail asked for: it is all there
            elif total is not None and total >= shown:
                first = total - shown + 1
            else:
                return Read(path, cwd, 1, END, {}, False)  # position unknown: whole file
    else:
        first = 1
    text = {first + i: line for i, line in enumerate(lines)}
    whole = last_name == "cat" and len(commands) == 1
    return Read(path, cwd, first, first + shown - 1, text, whole)
