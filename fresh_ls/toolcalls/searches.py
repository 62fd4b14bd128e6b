"""Search results as views: which numbered lines of which files a ``grep -n`` printed.

Agents search before they edit (``grep -n``, ``grep -rn``, ``rg -n``, ``git grep -n``, Claude
Code's Grep tool) and then edit by the line numbers the search printed, so those lines are a
view as much as a ``cat -n`` is, only sparse. This module reads one search command (its
argv, by an allow-list of programs and flags) and its printed output back into the lines
each file showed.

It never guesses. A flag it does not know, a mode that prints no line numbers or changes the
text (``-c``, ``-l``, ``-o``, ``--replace``, ``--column``, no ``-n``), a line whose path is
ambiguous (a path holding ``:``, a context line whose path is not one a match line named)
gives nothing for that command or that line. Every line whose file is known
(``text_of``) must equal that line of the file, so an agent's note glued to a line, a clipped
line or a file that changed since drops out. The same command shape (``SearchCommand``) is
what ``search_rerun`` checks before running a search again.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fresh_ls.toolcalls.numbered import plain_lines
from fresh_ls.toolcalls.shell_parse import Command, parse

TextLookup = Callable[[str, str | None], str | None]
Program = Literal["grep", "rg", "git grep", "Grep"]


@dataclass(frozen=True)
class Searched:
    """Lines of one file that a search printed (grep -n, rg -n, git grep -n, Claude Code's
    Grep): ``lines`` holds (line number, text as shown without decoration or line ending),
    ascending, match and context lines alike."""

    path: str
    cwd: str | None
    lines: tuple[tuple[int, str], ...]


# -- the command -----------------------------------------------------------------------------


@dataclass
class SearchCommand:
    """One search as the allow-list understood it."""

    program: Program
    argv: list[str]  # the command's words, quotes removed
    options: list[tuple[str, str | None]]  # canonical name, value
    patterns: list[str]
    paths: list[str]  # path operands as written (none: the working directory)
    recursive: bool
    #: Whether each printed line names its file: True, False, or None (decided by the output:
    #: one operand that may be a file or a folder).
    with_filename: bool | None
    #: Whether files are printed as headings (rg --heading): True, False, or None (either).
    heading: bool | None
    cwd: str | None = None
    #: Filters after the search in its pipeline (``| head -20``): the lines shown are still
    #: the lines printed.
    filtered: bool = False
    names: set[str] = field(default_factory=set)

    def has(self, *names: str) -> bool:
        return any(name in self.names for name in names)


@dataclass(frozen=True)
class _Spec:
    flags: frozenset[str]  # canonical names without a value
    valued: frozenset[str]  # canonical names that take a value
    aliases: Mapping[str, str]  # long (or alternative) spelling -> canonical
    digits_context: bool  # -3 means -C 3


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Long spellings every search tool here shares.
_ALIASES = {
    "--line-number": "-n",
    "--ignore-case": "-i",
    "--fixed-strings": "-F",
    "--word-regexp": "-w",
    "--invert-match": "-v",
    "--after-context": "-A",
    "--before-context": "-B",
    "--context": "-C",
    "--max-count": "-m",
}
#: ... those grep and rg share (git grep has none of them)
_FILE_ALIASES = {
    "--with-filename": "-H",
    "--line-regexp": "-x",
    "--text": "-a",
    "--regexp": "-e",
    "--colour": "--color",
}
#: ... and those grep and git grep share (rg has one regex syntax of its own, and -r there
#: means --replace).
_GREP_ALIASES = {
    **_ALIASES,
    "--recursive": "-r",
    "--extended-regexp": "-E",
    "--basic-regexp": "-G",
    "--perl-regexp": "-P",
}

_GREP = _Spec(
    flags=_names(
        "-n -r -R -H -i -y -E -F -G -P -w -x -v -s -I -a --no-ignore-case --no-group-separator"
    ),
    valued=_names("-e -A -B -C -m --include --exclude --exclude-dir --color"),
    aliases={
        **_GREP_ALIASES,
        **_FILE_ALIASES,
        "--dereference-recursive": "-R",
        "--no-messages": "-s",
    },
    digits_context=True,
)

_RG = _Spec(
    flags=_names(
        "-n -i -S -s -F -w -x -v -P -H -L -a -U -u -. --heading --no-heading --hidden --no-ignore "
        "--no-messages --multiline-dotall --no-config --crlf"
    ),
    valued=_names("-e -g --iglob -t -T -A -B -C -m -d -M -j --color --sort --sortr --max-filesize"),
    aliases={
        **_ALIASES,
        **_FILE_ALIASES,
        "--smart-case": "-S",
        "--case-sensitive": "-s",
        "--pcre2": "-P",
        "--follow": "-L",
        "--multiline": "-U",
        "--unrestricted": "-u",
        "--glob": "-g",
        "--type": "-t",
        "--type-not": "-T",
        "--max-depth": "-d",
        "--max-columns": "-M",
        "--threads": "-j",
    },
    digits_context=False,
)

_GIT_GREP = _Spec(
    flags=_names("-n -i -I -E -F -G -P -w -v -r -H --heading --break --untracked"),
    valued=_names("-e -A -B -C -m --max-depth --color"),
    aliases=_GREP_ALIASES,
    digits_context=True,
)

_SPECS: dict[str, _Spec] = {"grep": _GREP, "rg": _RG, "git grep": _GIT_GREP}
_COUNTED = {"-A", "-B", "-C", "-m", "-d", "-M", "-j", "--max-depth", "--max-filesize"}


def _options(
    words: list[str], spec: _Spec
) -> tuple[list[tuple[str, str | None]], list[str]] | None:
    """Options (canonical name, value) and operands, or None for anything not allowed."""
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    rest = iter(words)
    for word in rest:
        if word == "--":
            operands.extend(rest)
            break
        if word.startswith("--"):
            name, eq, inline = word.partition("=")
            name = spec.aliases.get(name, name)
            if name in spec.flags and not eq:
                options.append((name, None))
                continue
            value = inline if eq else next(rest, None)
            if name not in spec.valued or value is None:
                return None
            options.append((name, value))
            continue
        if not word.startswith("-") or len(word) == 1:
            operands.append(word)
            continue
        if spec.digits_context and word[1:].isdigit():
            options.append(("-C", word[1:]))
            continue
        for j in range(1, len(word)):
            name = "-" + word[j]
            if name in spec.flags:
                options.append((name, None))
                continue
            # a valued short option takes the rest of the word, else the next word
            if name not in spec.valued:
                return None
            value = word[j + 1 :] or next(rest, None)
            if value is None:
                return None
            options.append((name, value))
            break
    for name, given in options:
        if name in _COUNTED and (given is None or not given.isdigit()):
            return None
        if name == "--color" and given not in ("never", "auto"):
            return None  # colours put escapes in the text
    return options, operands


def _pipeline_filters(later: list[Command]) -> bool:
    """Only ``head``/``tail`` by whole lines (no file operand) may follow a search."""
    for command in later:
        argv = command.argv
        if command.redirects or not argv or argv[0] not in ("head", "tail"):
            return False
        rest = argv[1:]
        if rest and rest[0] in ("-n", "--lines") and len(rest) == 2:
            rest = [rest[1]]
        value = rest[0] if rest else "10"
        if len(rest) > 1:
            return False
        if value.startswith("--lines="):
            value = value.split("=", 1)[1]
        elif value.startswith("-n"):
            value = value[2:]
        elif value.startswith("-"):
            value = value[1:]
        if not value.lstrip("+").isdigit():
            return False
    return True


def _quiet_stderr(command: Command) -> bool:
    """The redirections a search may carry and still print to the model what it printed:
    ``2>/dev/null`` and ``2>&1``."""
    for redirect in command.redirects:
        if redirect.fd != 2:
            return False
        if not (
            (redirect.op == ">" and redirect.target == "/dev/null")
            or (redirect.op == ">&" and redirect.target == "1")
        ):
            return False
    return True


def search_command(argv: list[str], cwd: str | None = None) -> SearchCommand | None:
    """The search ``argv`` asks for (grep, rg or git grep, allowed flags only, with line
    numbers), or None."""
    if not argv:
        return None
    if argv[0] in ("grep", "egrep", "fgrep"):
        program: Program = "grep"
        words = argv[1:]
        if argv[0] != "grep":
            words = ["-E" if argv[0] == "egrep" else "-F", *words]
    elif argv[0] == "rg":
        program, words = "rg", argv[1:]
    elif argv[0] == "git":
        rest = argv[1:]
        if rest[:1] == ["--no-pager"]:
            rest = rest[1:]
        if rest[:1] != ["grep"]:
            return None
        program, words = "git grep", rest[1:]
    else:
        return None
    parsed = _options(words, _SPECS[program])
    if parsed is None:
        return None
    options, operands = parsed
    names = {name for name, _ in options}
    if "-n" not in names:
        return None  # no line numbers: the lines shown cannot be placed
    patterns = [value or "" for name, value in options if name == "-e"]
    if not patterns:
        if not operands:
            return None
        patterns, operands = [operands[0]], operands[1:]
    recursive = program != "grep" or bool(names & {"-r", "-R"})
    with_filename: bool | None
    heading: bool | None = False
    if "-H" in names or len(operands) > 1 or program == "git grep":
        with_filename = True
    elif not operands:
        with_filename = recursive
    else:
        with_filename = None if recursive else False
    if program == "grep" and not operands and not recursive:
        return None  # grep reads its standard input
    if program == "rg":
        heading = True if "--heading" in names else False if "--no-heading" in names else None
    if program == "git grep":
        heading = "--heading" in names
    return SearchCommand(
        program,
        list(argv),
        options,
        patterns,
        operands,
        recursive,
        with_filename,
        heading,
        cwd,
        names=names,
    )


def _cd(cwd: str | None, argv: list[str]) -> str | None:
    if len(argv) != 2:
        return None
    target = argv[1]
    if target.startswith("/"):
        return posixpath.normpath(target)
    if cwd is None or target in ("~", "-") or target.startswith("~"):
        return None
    return posixpath.normpath(posixpath.join(cwd, target))


def shell_search(command: str, cwd: str | None) -> SearchCommand | None:
    """The search a shell command line runs: ``[cd DIR &&] SEARCH [2>/dev/null] [| head]``."""
    try:
        pipelines = parse(command)
    except Exception:
        return None
    where = cwd
    while len(pipelines) > 1 and pipelines[0].commands[0].argv[:1] == ["cd"]:
        first = pipelines[0]
        if len(first.commands) != 1 or first.connector != "&&" or first.commands[0].redirects:
            return None
        where = _cd(where, first.commands[0].argv)
        pipelines = pipelines[1:]
    if len(pipelines) != 1 or pipelines[0].connector not in ("", ";"):
        return None
    commands = pipelines[0].commands
    search = commands[0]
    if not _quiet_stderr(search) or not _pipeline_filters(commands[1:]):
        return None
    found = search_command(search.argv, where)
    if found is not None:
        found.filtered = len(commands) > 1
    return found


def grep_tool(args: Any, cwd: str | None) -> SearchCommand | None:
    """Claude Code's Grep in content mode with line numbers (its ``-n`` defaults to true)."""
    if not isinstance(args, Mapping) or args.get("output_mode") != "content":
        return None
    pattern = args.get("pattern")
    if not isinstance(pattern, str) or args.get("-n", True) is not True or args.get("-o"):
        return None
    path = args.get("path")
    if path is not None and not isinstance(path, str):
        return None
    paths = [path] if path else []
    return SearchCommand(
        "Grep",
        [],
        [],
        [pattern],
        paths,
        True,
        None if paths else True,
        False,
        cwd,
        names={"-n"},
    )


# -- the output ------------------------------------------------------------------------------

_BARE = re.compile(r"^(\d+)([:-])(.*)$")
_MATCH = re.compile(r"^([^:\n]+):(\d+):(.*)$")
_SECOND_SPLIT = re.compile(r".*?:\d+:")
_OMITTED = re.compile(r"\[Omitted long (?:matching |context )?line")
_NOTE = re.compile(
    r"^(?:(?:grep|rg|git|fatal|error|warning): |Binary file .* matches$|"
    r"\[Showing results with pagination|The search stopped before it finished)"
)
Mode = Literal["bare", "prefixed", "heading"]


@dataclass(frozen=True)
class PrintedLine:
    """One numbered line of a search's output: ``raw[:start]`` is its decoration (path,
    number, separator), ``raw[start:]`` the text of line ``number`` of ``path``."""

    index: int  # position among the output's lines
    path: str
    number: int
    start: int
    #: Another split of the line would name another path (``a:3:b.py:5:x``): the line counts
    #: only when the file's own text confirms this reading.
    ambiguous: bool = False


def _context_path(line: str, known: list[str]) -> tuple[str, int, int] | None:
    """``PATH-N-text`` where PATH is a path a match line named: (path, number, start)."""
    found: list[tuple[str, int, int]] = []
    for path in known:
        if not line.startswith(path + "-"):
            continue
        rest = line[len(path) + 1 :]
        match = re.match(r"(\d+)-", rest)
        if match:
            found.append((path, int(match.group(1)), len(path) + 1 + match.end()))
    return found[0] if len(found) == 1 else None


def _under(path: str, search: SearchCommand) -> bool:
    """A printed path is one the search could print: below a folder operand (as written), or
    an operand itself. Git and Claude Code print paths their own way: any path."""
    if search.program in ("git grep", "Grep") or not search.paths:
        return True
    for operand in search.paths:
        if path == operand:
            return True
        prefix = operand if operand.endswith("/") else operand + "/"
        if search.recursive and path.startswith(prefix):
            return True
    return False


def _parse(lines: list[str], mode: Mode, search: SearchCommand) -> list[PrintedLine]:
    out: list[PrintedLine] = []
    if mode == "bare":
        if len(search.paths) > 1:
            return []
        path = search.paths[0] if search.paths else ""
        if not path:
            return []
        for index, line in enumerate(lines):
            match = _BARE.match(line)
            if match:
                out.append(PrintedLine(index, path, int(match.group(1)), match.end(2)))
        return out
    if mode == "prefixed":
        known: list[str] = []
        for line in lines:
            match = _MATCH.match(line)
            if match and _under(match.group(1), search) and match.group(1) not in known:
                known.append(match.group(1))
        for index, line in enumerate(lines):
            match = _MATCH.match(line)
            if match and match.group(1) in known:
                number, start = int(match.group(2)), match.end(2) + 1
                twice = _SECOND_SPLIT.match(line, start) is not None
                out.append(PrintedLine(index, match.group(1), number, start, twice))
                continue
            context = _context_path(line, known)
            if context is not None:
                out.append(PrintedLine(index, context[0], context[1], context[2]))
        return out
    current: str | None = None
    for index, line in enumerate(lines):
        match = _BARE.match(line)
        # rg parts files by a blank line; git grep --heading (without --break) does not
        at_start = (
            index == 0
            or lines[index - 1] == ""
            or (search.program == "git grep" and current is not None and match is None)
        )
        if match and current is not None:
            out.append(PrintedLine(index, current, int(match.group(1)), match.end(2)))
        elif line == "--" and current is not None:
            continue
        elif at_start and line and not _NOTE.match(line) and _under(line, search):
            current = line
        else:
            current = None
    return out


def _modes(search: SearchCommand) -> list[Mode]:
    modes: list[Mode] = []
    if search.with_filename is not True:
        modes.append("bare")
    if search.with_filename is not False:
        if search.heading is not True:
            modes.append("prefixed")
        if search.heading is not False:
            modes.append("heading")
    return modes


def printed_lines(search: SearchCommand, lines: list[str]) -> list[PrintedLine]:
    """The numbered lines of ``lines`` (the search's own output, one entry a line), in the
    one output shape the command allows that reads them; none when two shapes read it."""
    best: list[PrintedLine] = []
    tie = False
    for mode in _modes(search):
        parsed = _parse(lines, mode, search)
        if len(parsed) > len(best):
            best, tie = parsed, False
        elif parsed and len(parsed) == len(best):
            tie = True
    if tie:
        return []
    return best


def output_lines(body: str) -> list[str]:
    """A search's printed output as lines, ``\\r\\n`` read as a line end."""
    return plain_lines(body)


def terminal_shows(decoration: str, line: str, shown: str) -> bool:
    """Whether ``shown`` is the file's ``line`` as a terminal printed it: OpenHands reads its
    shell through a terminal, which turns each TAB into spaces up to the next tab stop (every
    8 columns, counted from the start of the printed line, decoration included). Such a line
    is registered with the file's own text, so a later change to it is still seen."""
    return "\t" in line and (decoration + line).expandtabs(8) == decoration + shown


def searched(search: SearchCommand, body: str, text_of: TextLookup) -> list[Searched]:
    """The lines each file showed, per file in order of first appearance.

    A line whose file is known must equal that line of the file now; a file none of whose
    lines pass gives nothing.
    """
    lines = output_lines(body)
    cwd = search.cwd
    files: dict[str, dict[int, str]] = {}
    texts: dict[str, list[str] | None] = {}
    for printed in printed_lines(search, lines):
        if printed.path not in texts:
            text = text_of(printed.path, cwd)
            texts[printed.path] = plain_lines(text) if text is not None else None
        shown = lines[printed.index][printed.start :]
        if _OMITTED.match(shown):
            continue  # rg's stand-in for a line longer than --max-columns
        current = texts[printed.path]
        if current is None and printed.ambiguous:
            continue
        if current is not None:
            if printed.number < 1 or printed.number > len(current):
                continue
            line = current[printed.number - 1]
            if line != shown and not terminal_shows(
                lines[printed.index][: printed.start], line, shown
            ):
                continue
            shown = line
        files.setdefault(printed.path, {})[printed.number] = shown
    return [
        Searched(path, cwd, tuple(sorted(numbered.items())))
        for path, numbered in files.items()
        if numbered
    ]


def line_ranges(found: Searched) -> list[tuple[int, int]]:
    """The printed lines as ascending runs of consecutive numbers (``fresh/observe``'s
    ``ranges``, first and last line of each)."""
    runs: list[tuple[int, int]] = []
    for number, _ in found.lines:
        if runs and number == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def shown_text(found: Searched) -> str:
    """The printed lines joined in order, each ending in a newline (``fresh/observe``'s
    ``text`` for ``ranges``)."""
    return "".join(text + "\n" for _, text in found.lines)


#: What a search result's view id adds to its tool call's id: ``<call id>~s<k>`` for the
#: ``k``-th file it printed (the proxy and the replay name them so; never a tool-call id).
SEARCH_VIEW_MARK = "~s"


def search_view_id(call_id: str, k: int) -> str:
    """The view id of the ``k``-th file a search result shows."""
    return f"{call_id}{SEARCH_VIEW_MARK}{k}"


def is_search_view(view_id: str) -> bool:
    return SEARCH_VIEW_MARK in view_id
