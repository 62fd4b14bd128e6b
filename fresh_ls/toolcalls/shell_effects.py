"""What one bash call read (as a view) and wrote (as edits), in order.

The call is parsed once (``shell_parse``); ``cd`` moves the working directory for what
follows; a call that is one read (after any ``cd``) is a view (``shell_reads``); every command
is checked for writes (``shell_writes``). A single write whose command failed changed nothing.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field

from fresh_ls.toolcalls.shell_parse import parse
from fresh_ls.toolcalls.shell_reads import Read, read_of
from fresh_ls.toolcalls.shell_writes import TextLookup, Write, WriteCollector, is_pure_write

__all__ = ["Effects", "Read", "Write", "analyze"]


@dataclass
class Effects:
    reads: list[Read] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    # Writes whose target file we cannot name (a patch we never saw).
    unattributed: list[str] = field(default_factory=list)
    reverts_all_edits: bool = False
    cwd_after: str | None = None


def _cd(cwd: str | None, argv: list[str]) -> str | None:
    target = argv[1] if len(argv) > 1 else "~"
    if target.startswith("/"):
        return posixpath.normpath(target)
    if target in ("~", "-") or cwd is None:
        return None
    return posixpath.normpath(posixpath.join(cwd, target))


def analyze(
    command: str,
    output: str,
    exit_code: int | None,
    cwd: str | None,
    text_of: TextLookup,
    total_of: Callable[[str, str | None], int | None],
) -> Effects:
    """Reads and writes of one bash call.

    ``text_of(path, cwd)`` returns a file's full text when every line of it is known (used for
    scripts and patches the agent wrote earlier); ``total_of`` its line count when known.
    """
    writes = WriteCollector(cwd, text_of)
    effects = Effects()
    pipelines = parse(command)
    work = [p for p in pipelines if p.commands[0].argv[:1] != ["cd"] or len(p.commands) > 1]
    for index, pipeline in enumerate(pipelines):
        first = pipeline.commands[0]
        if first.argv[:1] == ["cd"] and len(pipeline.commands) == 1:
            writes.cwd = _cd(writes.cwd, first.argv)
            continue
        failed_last = index == len(pipelines) - 1 and exit_code not in (None, 0)
        if len(work) == 1 and not failed_last:
            read = read_of(pipeline, output, writes.cwd, total_of)
            if read is not None:
                effects.reads.append(read)
                continue
        if failed_last and is_pure_write(pipeline):
            continue  # the write failed: it changed nothing
        for cmd in pipeline.commands:
            if cmd.argv or cmd.redirects:
                writes.command(cmd)
    effects.writes = writes.writes
    effects.unattributed = writes.unattributed
    effects.reverts_all_edits = writes.reverts_all_edits
    effects.cwd_after = writes.cwd
    return effects
