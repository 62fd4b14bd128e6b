"""Shell calls that change files: the forms agents use to edit without an editor tool.

``sed -i``, ``>``/``>>`` redirections and heredocs, ``tee``, ``cp``/``mv`` onto a file,
``git apply``/``patch`` of a patch whose text we have, ``git checkout``/``restore``/``stash``,
formatters, ``perl -i``, and Python scripts whose source we have seen that ``open(..., "w")``
a named file. Each write says what is known about it; the interpreter decides what that does
to the views (a write with unknown lines makes every view of its file stale).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from fresh_ls.toolcalls.numbered import plain_lines
from fresh_ls.toolcalls.patches import FilePatch, parse_patch
from fresh_ls.toolcalls.sed import SedOp, parse_sed
from fresh_ls.toolcalls.shell_parse import Command, Pipeline
from fresh_ls.toolcalls.shell_reads import operands

TextLookup = Callable[[str, str | None], str | None]


@dataclass
class Write:
    """One file write. ``kind`` says what we know about it."""

    kind: str  # "whole" | "append" | "sed" | "patch" | "unknown"
    path: str
    cwd: str | None
    lines: list[str] | None = None
    sed_ops: list[SedOp] = field(default_factory=list)
    patch: FilePatch | None = None
    why: str = ""


_FORMATTERS = {"black", "isort", "autopep8", "yapf", "gofmt", "clang-format", "rustfmt"}
_OPEN_WRITE = re.compile(
    r"open\(\s*([A-Za-z_]\w*|r?(['\"])(.+?)\2)\s*,\s*(?:mode\s*=\s*)?['\"]([rwax+bt]+)['\"]"
)
_PATH_WRITE = re.compile(r"Path\(\s*(['\"])(.+?)\1\s*\)\s*\.write_(?:text|bytes)\(")
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*r?(['\"])([^'\"]+)\2\s*$", re.M)


def python_targets(code: str) -> tuple[list[str], bool]:
    """Files a Python script opens for writing, and whether some target had no literal name."""
    names = {m.group(1): m.group(3) for m in _ASSIGN.finditer(code)}
    targets: list[str] = []
    unnamed = False
    for match in _OPEN_WRITE.finditer(code):
        mode = match.group(4)
        if not any(c in mode for c in "wax+"):
            continue
        literal = match.group(3)
        if literal is None:
            literal = names.get(match.group(1))
        if literal is None:
            unnamed = True
        elif literal not in targets:
            targets.append(literal)
    for match in _PATH_WRITE.finditer(code):
        if match.group(2) not in targets:
            targets.append(match.group(2))
    return targets, unnamed


class WriteCollector:
    """Collects the writes of one shell call, remembering files written earlier in it."""

    def __init__(self, cwd: str | None, text_of: TextLookup) -> None:
        self.cwd = cwd
        self.text_of = text_of
        self.local: dict[str, str] = {}  # files written earlier in this same call
        self.writes: list[Write] = []
        # Writes whose target file we cannot name (a patch we never saw).
        self.unattributed: list[str] = []
        self.reverts_all_edits = False

    def lookup(self, path: str) -> str | None:
        key = posixpath.normpath(posixpath.join(self.cwd or "", path))
        if key in self.local:
            return self.local[key]
        return self.text_of(path, self.cwd)

    def remember(self, path: str, text: str | None) -> None:
        key = posixpath.normpath(posixpath.join(self.cwd or "", path))
        if text is None:
            self.local.pop(key, None)
        else:
            self.local[key] = text

    def write(self, kind: str, path: str, **extra: object) -> None:
        self.writes.append(Write(kind, path, self.cwd, **extra))  # type: ignore[arg-type]

    def command(self, cmd: Command) -> None:
        argv = cmd.argv
        name = posixpath.basename(argv[0]) if argv else ""
        if name == "sudo" and len(argv) > 1:
            argv = argv[1:]
            name = posixpath.basename(argv[0])
        for redirect in cmd.writes():
            self.redirect_write(cmd, name, argv, redirect.target, redirect.op == ">>")
        if name == "sed":
            call = parse_sed(argv)
            if call.in_place:
                for target in call.files:
                    self.write("sed", target, sed_ops=call.ops)
                    self.remember(target, None)
        elif name == "tee":
            append = "-a" in argv or "--append" in argv
            text = cmd.stdin_text
            for target in operands(argv):
                self.write("append" if append else "whole", target, lines=_lines_of(text))
                self.remember(target, None if append else text)
        elif name in ("cp", "mv"):
            ops = operands(argv, ("-t", "--target-directory"))
            if len(ops) == 2:
                source, target = ops
                if target.endswith("/") or target == ".":
                    target = posixpath.join(target, posixpath.basename(source))
                text = self.lookup(source)
                self.write("whole", target, lines=_lines_of(text))
                self.remember(target, text)
        elif name == "git" and len(argv) > 1:
            self.git(argv)
        elif name == "patch":
            self.patch(cmd, argv)
        elif name in _FORMATTERS or (name == "ruff" and ("--fix" in argv or "format" in argv)):
            for target in operands(argv):
                if "." in posixpath.basename(target):
                    self.write("unknown", target, why=f"rewritten by {name}")
        elif name == "perl" and any(a.startswith("-") and "i" in a for a in argv[1:]):
            for target in operands(argv, ("-e",))[1:]:
                self.write("unknown", target, why="perl -i")
        elif name.startswith("python"):
            self.python(cmd, argv)

    def redirect_write(
        self, cmd: Command, name: str, argv: list[str], target: str, append: bool
    ) -> None:
        text: str | None = None
        if name == "cat" and len(argv) == 1:
            text = cmd.stdin_text
        elif name == "echo":
            text = " ".join(a for a in argv[1:] if a not in ("-e", "-n")) + "\n"
        self.write("append" if append else "whole", target, lines=_lines_of(text))
        self.remember(target, None if append else text)

    def git(self, argv: list[str]) -> None:
        sub = argv[1]
        rest = operands(argv[1:])
        if sub == "apply" and "--check" not in argv and "--stat" not in argv:
            for patch_file in rest:
                self.apply_patch(patch_file, strip=1, reverse="-R" in argv)
        elif sub in ("checkout", "restore"):
            files = [a for a in rest if "." in a or "/" in a]
            if "." in files or (not files and "--" in argv):
                self.reverts_all_edits = True
            for target in files:
                if target != ".":
                    self.write("unknown", target, why=f"git {sub}")
        elif _reverts_worktree(argv):
            self.reverts_all_edits = True

    def patch(self, cmd: Command, argv: list[str]) -> None:
        strip = 0
        source: str | None = None
        for i, arg in enumerate(argv):
            if arg.startswith("-p") and arg[2:].isdigit():
                strip = int(arg[2:])
            elif arg == "-p" and i + 1 < len(argv) and argv[i + 1].isdigit():
                strip = int(argv[i + 1])
            elif arg in ("-i", "--input") and i + 1 < len(argv):
                source = argv[i + 1]
        for redirect in cmd.redirects:
            if redirect.op == "<":
                source = redirect.target
        text = cmd.stdin_text
        if text is None and source is not None:
            text = self.lookup(source)
        self.apply_text(text, strip, source or "a patch on stdin", "-R" in argv)

    def apply_patch(self, patch_file: str, strip: int, reverse: bool) -> None:
        self.apply_text(self.lookup(patch_file), strip, patch_file, reverse)

    def apply_text(self, text: str | None, strip: int, name: str, reverse: bool) -> None:
        parsed = parse_patch(text, strip) if text is not None and not reverse else None
        if parsed is None:
            self.unattributed.append(f"applied {name}, whose hunks are not known")
            return
        for file_patch in parsed:
            self.write("patch", file_patch.path, patch=file_patch)
            self.remember(file_patch.path, None)

    def python(self, cmd: Command, argv: list[str]) -> None:
        code: str | None = None
        if "-c" in argv:
            index = argv.index("-c")
            code = argv[index + 1] if index + 1 < len(argv) else None
        else:
            scripts = [a for a in argv[1:] if not a.startswith("-")]
            if scripts and scripts[0].endswith(".py"):
                code = self.lookup(scripts[0])
            elif not scripts or scripts[0] == "-":
                code = cmd.stdin_text
        if code is None:
            return
        targets, unnamed = python_targets(code)
        for target in targets:
            self.write("unknown", target, why="written by a Python script")
            self.remember(target, None)
        if unnamed:
            self.unattributed.append("a Python script wrote a file it did not name")


def _reverts_worktree(argv: list[str]) -> bool:
    """``git stash`` (push/pop/apply) and ``git reset --hard`` rewrite every edited file."""
    if argv[1] == "stash":
        return len(argv) == 2 or argv[2] in ("push", "pop", "apply", "save")
    return argv[1] == "reset" and "--hard" in argv


def _lines_of(text: str | None) -> list[str] | None:
    return None if text is None else plain_lines(text)


def is_pure_write(pipeline: Pipeline) -> bool:
    """One command whose only job is to write (so a failure means nothing was written)."""
    if len(pipeline.commands) != 1:
        return False
    argv = pipeline.commands[0].argv
    name = argv[0] if argv else ""
    return name in ("sed", "patch", "cp", "mv") or argv[:2] == ["git", "apply"]
