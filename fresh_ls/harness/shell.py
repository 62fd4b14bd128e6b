"""A bridge for harnesses whose agent reads and writes files with shell commands.

After each command, ``ShellBridge.record`` turns what it did into protocol calls: a read of
one file (``cat F``, ``cat -n F``, ``nl -ba F``, ``sed -n 'A,Bp' F``, ``head``/``tail`` of one
file, and the numbered listing ``nl -ba F | sed -n 'A,Bp'`` that mini-swe-agent's prompts
recommend) becomes a view named by the tool call's id (``fresh/observe``, with the text the
command printed); a write (``sed -i``, redirections and heredocs, ``tee``, ``cp``/``mv``,
patches, formatters, scripts seen earlier) becomes ``fresh/didWrite``. Before each model
request, ``ShellBridge.rewrite`` rewrites the outgoing messages (``harness.rewrite``).

The command parsing is the audit's (``fresh_ls.toolcalls.shell_effects``): what the audit counts
as a view in a transcript is what the bridge registers live. The numbered-listing-through-a-
filter form is added here: its line numbers are printed by ``nl``, so they are known.
"""

from __future__ import annotations

import logging
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fresh_ls.client import (
    FileUnreadableError,
    InvalidParamsError,
    PathOutsideRootError,
)
from fresh_ls.harness.rewrite import Format, ResultId, Rewritten, ViewIds, rewrite_request
from fresh_ls.toolcalls.filtered_reads import numbered_filter_read
from fresh_ls.toolcalls.lines import END
from fresh_ls.toolcalls.numbered import plain_lines
from fresh_ls.toolcalls.roots import AgentRoots
from fresh_ls.toolcalls.shell_effects import Read, analyze
from fresh_ls.toolcalls.shell_parse import parse

log = logging.getLogger("fresh_ls.harness")

#: Observe errors that mean "this read is no view" (the file vanished, a binary file, a
#: path outside the root, a range the file no longer has), not "the sidecar is broken".
_SKIPPED = (FileUnreadableError, InvalidParamsError, PathOutsideRootError)


@dataclass
class Recorded:
    """What one command turned into."""

    views: list[dict[str, Any]] = field(default_factory=list)  # fresh/observe results
    wrote: list[str] = field(default_factory=list)  # root-relative paths reported written
    skipped: list[str] = field(default_factory=list)  # reads that could not be views, and why


class ShellBridge:
    """Views and writes of one agent conversation (``session``) that works through a shell.

    ``root`` is the repository on this machine (where the fresh-ls server runs);
    ``agent_root`` the same directory as the agent's commands name it (``/testbed`` in a
    container; default: ``root``); ``cwd`` the directory the commands run in (default:
    ``agent_root``).
    """

    def __init__(
        self,
        client: Any,
        root: str | Path,
        session: str,
        *,
        agent_root: str | None = None,
        cwd: str | None = None,
        policy: str | None = None,
        budget_bytes: int | None = None,
    ) -> None:
        self.client = client
        self.root = Path(root).resolve()
        self.session = session
        self.agent_root = posixpath.normpath(agent_root or os.path.abspath(root))
        # Without a separate agent_root, both spellings of the root name it (a symlinked
        # temp dir and its real path).
        spellings = [self.agent_root]
        if agent_root is None and str(self.root) != self.agent_root:
            spellings.append(str(self.root))
        self.paths = AgentRoots(self.root, spellings, cwd or self.agent_root)
        self.policy = policy
        self.budget_bytes = budget_bytes
        self.paths_seen: set[str] = set()
        self.last: Rewritten | None = None

    # -- paths ----------------------------------------------------------------------------

    @property
    def cwd(self) -> str:
        return self.paths.cwd

    def rel(self, path: str, cwd: str | None = None) -> str | None:
        """The root-relative path of ``path`` as the agent wrote it, or None outside."""
        return self.paths.rel(path, cwd)

    def _text_of(self, path: str, cwd: str | None) -> str | None:
        return self.paths.text_of(path, cwd)

    def _total_of(self, path: str, cwd: str | None) -> int | None:
        text = self._text_of(path, cwd)
        return len(plain_lines(text)) if text is not None else None

    # -- after a command ------------------------------------------------------------------

    def record(
        self, view_id: str, command: str, output: str, returncode: int | None = 0
    ) -> Recorded:
        """Register what ``command`` (the tool call ``view_id``) read and wrote."""
        effects = analyze(command, output, returncode, self.cwd, self._text_of, self._total_of)
        reads = list(effects.reads)
        if not reads and returncode in (None, 0):
            work = [p for p in parse(command) if p.commands[0].argv[:1] != ["cd"]]
            if len(work) == 1:
                extra = numbered_filter_read(work[0], output, effects.cwd_after or self.cwd)
                if extra is not None:
                    reads.append(extra)
        done = Recorded()
        for write in effects.writes:
            rel = self.rel(write.path, write.cwd)
            if rel is not None and rel not in done.wrote:
                done.wrote.append(rel)
        if effects.reverts_all_edits:
            done.wrote.extend(sorted(p for p in self.paths_seen if p not in done.wrote))
        for rel in done.wrote:
            self.client.did_write(rel, session=self.session)
        # A call is one view at most (the parser only counts a call that is a single read),
        # named by the tool call's own id, so the request's tool result maps to it as is.
        for read in reads[:1]:
            rel = self.rel(read.path, read.cwd)
            if rel is None:
                done.skipped.append(f"{read.path}: outside {self.agent_root}")
                continue
            try:
                done.views.append(self._observe(view_id, rel, read))
            except _SKIPPED as exc:
                done.skipped.append(f"{rel}: {exc.message}")
                log.debug("not a view: %s", exc)
                continue
            self.paths_seen.add(rel)
        return done

    def _observe(self, view_id: str, rel: str, read: Read) -> dict[str, Any]:
        if read.last >= END or not read.lines:
            # Position unknown (``tail`` of a file we cannot count): the whole file, as now.
            return self.client.observe(self.session, rel, view_id=view_id)
        shown = range(read.first, read.last + 1)
        text = "".join(read.lines.get(n, "") + "\n" for n in shown)
        return self.client.observe(
            self.session,
            rel,
            view_id=view_id,
            first_line=read.first,
            last_line=read.last,
            text=text,
        )

    # -- before a request -----------------------------------------------------------------

    def rewrite(
        self,
        request: Any,
        *,
        view_ids: ViewIds = None,
        fmt: Format | None = None,
        result_id: ResultId | None = None,
    ) -> Rewritten:
        """The request to send instead of ``request`` (which is left as it was)."""
        self.last = rewrite_request(
            self.client,
            self.session,
            request,
            view_ids=view_ids,
            fmt=fmt,
            policy=self.policy,
            budget_bytes=self.budget_bytes,
            result_id=result_id,
        )
        return self.last
