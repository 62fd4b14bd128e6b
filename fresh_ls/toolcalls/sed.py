"""What ``sed -i`` did to a file, in line terms.

``sed -i`` is how bash-only agents edit (mini-swe-agent's whole editing vocabulary is sed,
heredocs and scripts). A numbered address (``317s/^/  /``, ``863,866d``) says exactly which
lines changed; an unaddressed ``s/old/new/`` changes the lines that match, which we can only
check against lines whose text we have seen. Whatever is not understood becomes ``Unknown``,
which the interpreter treats conservatively (every view of the file goes stale).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fresh_ls.toolcalls.lines import END


@dataclass
class Substitute:
    region: tuple[int, int] | None
    pattern: re.Pattern[str] | None
    changes_line_count: bool


@dataclass
class Replace:
    """Lines ``first..first+old_count-1`` become ``new_lines`` (``old_count`` 0: insertion)."""

    first: int
    old_count: int
    new_lines: list[str]


@dataclass
class Unknown:
    why: str


SedOp = Substitute | Replace | Unknown

_POSIX_CLASSES = {
    "[:space:]": r"\s",
    "[:digit:]": r"\d",
    "[:alpha:]": "a-zA-Z",
    "[:alnum:]": "a-zA-Z0-9",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:blank:]": r" \t",
}


def sed_regex(pattern: str, extended: bool, flags: int = 0) -> re.Pattern[str] | None:
    """A Python regex for a sed pattern, or None when we cannot translate it faithfully."""
    for posix, python in _POSIX_CLASSES.items():
        pattern = pattern.replace(posix, python)
    if not extended:
        out: list[str] = []
        i = 0
        while i < len(pattern):
            ch = pattern[i]
            if ch == "\\" and i + 1 < len(pattern):
                nxt = pattern[i + 1]
                out.append(nxt if nxt in "(){}+?|" else "\\" + nxt)
                i += 2
                continue
            out.append("\\" + ch if ch in "(){}+?|" else ch)
            i += 1
        pattern = "".join(out)
    try:
        return re.compile(pattern, flags)
    except re.error:
        return None


def _split_delimited(text: str, delimiter: str, count: int) -> tuple[list[str], str] | None:
    """``count`` fields of ``text`` separated by an unescaped ``delimiter``, and the rest."""
    fields: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text) and len(fields) < count:
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] == delimiter:
                current.append(delimiter)
            else:
                current.append(text[i : i + 2])
            i += 2
            continue
        if ch == delimiter:
            fields.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    if len(fields) < count:
        return None
    return fields, text[i:]


_ADDRESS = re.compile(r"^\s*(\d+|\$)(?:\s*,\s*(\d+|\$))?")


def _parse_one(script: str, extended: bool) -> tuple[SedOp, str]:
    """Parse one command off the front of ``script``; return it and what follows."""
    region: tuple[int, int] | None = None
    match = _ADDRESS.match(script)
    if match:
        low = END if match.group(1) == "$" else int(match.group(1))
        high_text = match.group(2) or match.group(1)
        high = END if high_text == "$" else int(high_text)
        region = (low, high)
        script = script[match.end() :]
    elif script.lstrip().startswith(("/", "\\")):
        return Unknown("a pattern address"), ""
    script = script.lstrip()
    if not script:
        return Unknown("an empty sed command"), ""
    command, rest = script[0], script[1:]
    if command == "s" and rest:
        parts = _split_delimited(rest[1:], rest[0], 2)
        if parts is None:
            return Unknown("an unterminated s command"), ""
        (pattern, replacement), tail = parts
        flag_match = re.match(r"^[gpIiw0-9]*", tail)
        flag_text = flag_match.group(0) if flag_match else ""
        flags = re.I if "I" in flag_text or "i" in flag_text else 0
        regex = sed_regex(pattern, extended, flags)
        multiline = "\\n" in replacement or "\n" in replacement
        return Substitute(region, regex, multiline), tail[len(flag_text) :]
    if command == "d" and region and region[0] < END:
        high = region[1]
        if high >= END:
            return Unknown("a deletion to the end of the file"), rest
        return Replace(region[0], high - region[0] + 1, []), rest
    if command in "iac" and region and region[0] < END and region[1] < END:
        text = rest[1:] if rest.startswith("\\") else rest
        text = text.lstrip("\n").lstrip() if command != "c" else text.lstrip("\n")
        line = text.split("\n")[0]
        if command == "i":
            return Replace(region[0], 0, [line]), ""
        if command == "a":
            return Replace(region[1] + 1, 0, [line]), ""
        return Replace(region[0], region[1] - region[0] + 1, [line]), ""
    return Unknown(f"sed command {command!r}"), ""


def parse_script(script: str, extended: bool) -> list[SedOp]:
    ops: list[SedOp] = []
    rest = script
    while rest.strip():
        op, rest = _parse_one(rest, extended)
        ops.append(op)
        if isinstance(op, Unknown):
            break
        rest = rest.lstrip()
        if rest[:1] in (";", "\n"):
            rest = rest[1:]
        elif rest.strip():
            ops.append(Unknown("trailing sed text"))
            break
    return ops


@dataclass
class SedCall:
    in_place: bool
    ops: list[SedOp]
    files: list[str]
    print_range: tuple[int, int] | None  # for ``sed -n 'A,Bp' FILE``


def parse_sed(argv: list[str]) -> SedCall:
    in_place = False
    quiet = False
    extended = False
    scripts: list[str] = []
    operands: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg in ("-e", "--expression") and i < len(argv):
            scripts.append(argv[i])
            i += 1
        elif arg.startswith("--expression="):
            scripts.append(arg.split("=", 1)[1])
        elif arg.startswith("--in-place") or (arg.startswith("-i") and not arg.startswith("-in")):
            in_place = True
        elif arg in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif arg in ("-n", "--quiet", "--silent"):
            quiet = True
        elif arg.startswith("-") and len(arg) > 1 and not arg[1:].isdigit():
            letters = arg[1:]
            in_place = in_place or "i" in letters
            quiet = quiet or "n" in letters
            extended = extended or "E" in letters or "r" in letters
            if "f" in letters:
                return SedCall(in_place, [Unknown("a sed script file")], [], None)
        else:
            operands.append(arg)
    if not scripts and operands:
        scripts.append(operands.pop(0))
    ops: list[SedOp] = []
    for script in scripts:
        ops.extend(parse_script(script, extended))
    print_range = None
    if quiet and len(scripts) == 1:
        match = re.fullmatch(r"\s*(\d+)(?:\s*,\s*(\d+|\$))?\s*p\s*;?\s*", scripts[0])
        if match:
            low = int(match.group(1))
            high = match.group(2) or match.group(1)
            print_range = (low, END if high == "$" else int(high))
    return SedCall(in_place, ops, operands, print_range)
