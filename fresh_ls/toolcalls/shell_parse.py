"""A small shell parser, enough to see what one bash tool call read or wrote.

Agents' shell calls are short: ``cd dir && sed -n '10,20p' f``, ``cat > f <<'EOF' ... EOF``,
``sed -i 's/a/b/' f``. We need the simple commands, their arguments with quotes removed, their
redirections and heredoc bodies, and how they are chained. Anything fancier (subshells, command
substitution) is kept as opaque words; the callers treat what they do not understand as
"not a read" and, for writes, as unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][\w.\-]*)\2")
_SEPARATORS = {"&&", "||", ";", "\n", "&", "(", ")"}


@dataclass
class Redirect:
    op: str  # ">", ">>", "<", "<<", "<<<", ">&" (descriptor duplication)
    fd: int | None
    target: str
    body: str | None = None  # heredoc or here-string text


@dataclass
class Command:
    argv: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)

    @property
    def stdin_text(self) -> str | None:
        for redirect in self.redirects:
            if redirect.op in ("<<", "<<<") and redirect.body is not None:
                return redirect.body
        return None

    def writes(self) -> list[Redirect]:
        return [
            r
            for r in self.redirects
            if r.op in (">", ">>") and r.target and not r.target.startswith("/dev/")
        ]


@dataclass
class Pipeline:
    commands: list[Command]
    connector: str = ""  # what follows it: "&&", "||", ";" or ""


def _split_heredocs(text: str) -> tuple[str, list[str]]:
    """Remove heredoc bodies from ``text``; return the rest and the bodies in order."""
    out: list[str] = []
    bodies: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        for match in _HEREDOC.finditer(line):
            strip_tabs, delimiter = match.group(1) == "-", match.group(3)
            body: list[str] = []
            while i < len(lines):
                candidate = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if candidate.strip() == delimiter:
                    break
                body.append(candidate)
            bodies.append("\n".join(body) + ("\n" if body else ""))
    return "\n".join(out), bodies


def _tokens(text: str) -> list[tuple[str, str]]:
    """Words (quotes removed) and operators, as ``("w", text)`` / ``("op", text)``."""
    tokens: list[tuple[str, str]] = []
    word: list[str] = []
    quoted = False
    i = 0

    def flush() -> None:
        nonlocal quoted
        if word or quoted:
            tokens.append(("w", "".join(word)))
        word.clear()
        quoted = False

    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                word.append(text[i + 1])
            i += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            word.append(text[i + 1 : end])
            quoted = True
            i = end + 1
            continue
        if ch == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                if text[j] == "\\" and j + 1 < len(text) and text[j + 1] in '"\\$`':
                    word.append(text[j + 1])
                    j += 2
                    continue
                word.append(text[j])
                j += 1
            quoted = True
            i = j + 1
            continue
        if ch in " \t":
            flush()
            i += 1
            continue
        if ch == "#" and not word and not quoted:
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        two, three = text[i : i + 2], text[i : i + 3]
        if ch in "<>":
            fd = "".join(word) if word and not quoted and "".join(word).isdigit() else None
            if fd is None:
                flush()
            else:
                word.clear()
            for op in ("<<<", "<<-", ">>", "<<", ">&", "<", ">"):
                if text.startswith(op, i):
                    tokens.append(("op", (fd or "") + op))
                    i += len(op)
                    break
            continue
        if ch == "&" and text.startswith("&>", i):
            flush()
            tokens.append(("op", "&>>" if three == "&>>" else "&>"))
            i += 3 if three == "&>>" else 2
            continue
        if two in ("&&", "||"):
            flush()
            tokens.append(("op", two))
            i += 2
            continue
        if ch in "|;\n&()":
            flush()
            tokens.append(("op", ch))
            i += 1
            continue
        word.append(ch)
        i += 1
    flush()
    return tokens


def parse(text: str) -> list[Pipeline]:
    """The pipelines of a shell call, in order."""
    rest, bodies = _split_heredocs(text)
    body_iter = iter(bodies)
    pipelines: list[Pipeline] = []
    commands: list[Command] = [Command()]
    tokens = _tokens(rest)
    i = 0

    def close(connector: str) -> None:
        nonlocal commands
        kept = [c for c in commands if c.argv or c.redirects]
        if kept:
            pipelines.append(Pipeline(kept, connector))
        elif pipelines and connector:
            pipelines[-1].connector = connector
        commands = [Command()]

    while i < len(tokens):
        kind, value = tokens[i]
        i += 1
        if kind == "w":
            current = commands[-1]
            if not current.argv and re.match(r"^[A-Za-z_]\w*=", value):
                continue  # an environment assignment before the command
            current.argv.append(value)
            continue
        if value == "|":
            commands.append(Command())
            continue
        if value in _SEPARATORS:
            close("" if value in ("\n", "(", ")") else value)
            continue
        fd_text = re.match(r"^\d*", value)
        digits = fd_text.group(0) if fd_text else ""
        op = value[len(digits) :]
        fd = int(digits) if digits else None
        target = ""
        if i < len(tokens) and tokens[i][0] == "w":
            target = tokens[i][1]
            i += 1
        body = None
        if op in ("<<", "<<-"):
            op, body = "<<", next(body_iter, "")
        elif op == "<<<":
            body = target + "\n"
        elif op in ("&>", "&>>"):
            op = ">>" if op == "&>>" else ">"
        if op == ">&" and not target.isdigit() and target != "-":
            op = ">"  # ">& file" writes both streams to the file
        commands[-1].redirects.append(Redirect(op, fd, target, body))
    close("")
    return pipelines
