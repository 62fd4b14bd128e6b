"""aider's file views and edits, read out of its chat messages (aider has no tools).

Views: aider puts the files in the chat into one user message, re-read from the disk for
every request (``get_files_content`` in aider 0.86.2)::

    <files_content_prefix or read_only_files_prefix>
    \\n<path>\\n<open fence>\\n<the file's text><close fence>\\n   (once per file)

The fence is the first of aider's fences (```, ````, ``<source>``, ``<code>``, ``<pre>``,
``<codeblock>``, ``<sourcecode>``) that starts no line of any file in the chat, so a line
that is the open fence alone always starts a block. ``file_blocks`` finds each block: the
file's path, its text exactly as shown, and the span of the block (path line to close fence,
without the newline after it) in the message text. A message that does not begin with one of
aider's prefixes, or whose blocks do not close as aider writes them, holds no view.

Writes: each SEARCH/REPLACE block of an assistant reply (``edit_blocks``), minus those a
later user message reports as failed to match (``failed_edits``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The openings of aider's messages that carry whole files (``base_prompts.py``).
FILES_PREFIXES = (
    "I have *added these files to the chat* so you can go ahead and edit them.\n",
    "Here are some READ ONLY files, provided for your reference.\n",
)
#: The user message that ends aider's example conversation (``example_messages``).
EXAMPLES_END = "I switched to a new code base."

FENCES = (
    ("```", "```"),
    ("````", "````"),
    *((f"<{n}>", f"</{n}>") for n in ("source", "code", "pre", "codeblock", "sourcecode")),
)


@dataclass(frozen=True)
class FileBlock:
    path: str
    text: str  # the file's text as shown, between the fences
    start: int  # the block's span in the message text: its path line ...
    end: int  # ... to the end of its close fence (the newline after it excluded)


def _header(fence: str) -> re.Pattern[str]:
    return re.compile(r"\n([^\n`]+)\n" + re.escape(fence) + r"\n")


def file_blocks(message: str) -> list[FileBlock]:
    """The whole-file blocks of one aider user message, in order; [] when it has none."""
    if not message.startswith(FILES_PREFIXES):
        return []
    # The first block comes first: its fence is the one whose header appears earliest.
    firsts = [(m.start(), o, c) for o, c in FENCES if (m := _header(o).search(message))]
    if not firsts:
        return []
    _, open_, close = min(firsts)
    header_at = _header(open_)
    blocks: list[FileBlock] = []
    at = min(firsts)[0]
    while at < len(message):
        header = header_at.match(message, at)
        if header is None:
            return []  # not laid out as aider lays out its blocks: no view at all
        # The close fence: the first one followed by the end or by the next block (a
        # file's lines never start with the fence; a file without a final newline has the
        # close fence on its last line).
        search = header.end()
        while True:
            end = message.find(close + "\n", search)
            if end < 0:
                return []
            after = end + len(close) + 1
            if after == len(message) or header_at.match(message, after):
                break
            search = end + 1
        blocks.append(FileBlock(header.group(1), message[header.end() : end], at + 1, after - 1))
        at = after
    return blocks


@dataclass(frozen=True)
class Edit:
    path: str
    original: str  # the SEARCH lines, each ending in "\n"
    updated: str  # the REPLACE lines


_SEARCH = re.compile(r"^<{5,9} SEARCH>?\s*$")
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} REPLACE<?\s*$")


def _filename(line: str) -> str | None:
    name = line.strip()
    if name.startswith(("```", "<", "#", "~~~")):
        return None
    name = name.strip("*").rstrip(":").strip().strip("`").strip()
    if not name or " " in name:
        return None
    return name


def edit_blocks(reply: str) -> list[Edit]:
    """The SEARCH/REPLACE blocks of an assistant reply: the path is the nearest line before
    the block that names a file (above its fence), else the previous block's path."""
    lines = reply.splitlines(keepends=True)
    edits: list[Edit] = []
    path: str | None = None
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i].rstrip("\n")):
            i += 1
            continue
        for back in range(i - 1, max(i - 4, -1), -1):
            found = _filename(lines[back])
            if found is not None:
                path = found
                break
        j = i + 1
        while j < len(lines) and not _DIVIDER.match(lines[j].rstrip("\n")):
            j += 1
        k = j + 1
        while k < len(lines) and not _REPLACE.match(lines[k].rstrip("\n")):
            k += 1
        if k >= len(lines):
            break  # an unfinished block edits nothing
        if path is not None:
            edits.append(Edit(path, "".join(lines[i + 1 : j]), "".join(lines[j + 1 : k])))
        i = k + 1
    return edits


def failed_edits(report: str) -> set[tuple[str, str, str]]:
    """(path, original, updated) of each edit an aider failure report names
    (``# N SEARCH/REPLACE block(s) failed to match!``)."""
    found = set()
    pattern = re.compile(
        r"^## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in "
        r"(.+)\n<<<<<<< SEARCH\n(.*?)=======\n(.*?)>>>>>>> REPLACE\n",
        re.M | re.S,
    )
    for match in pattern.finditer(report):
        found.add((match.group(1), match.group(2), match.group(3)))
    return found
