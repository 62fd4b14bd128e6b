"""Search results and files outside the root in a proxied request.

A search (``grep -n``, ``rg -n``, ``git grep -n``, Claude Code's Grep) prints numbered lines
of several files, and agents edit by those numbers. The proxy registers each file's printed
lines as one sparse view (``fresh/observe`` ``ranges``, view id ``<call id>~s<k>``). When
one of them is no longer fresh, the proxy prints that tool result again, in place, as the
same command would print it now:

- a plain read-only search is run again (``search_rerun.rerun_argv``: an allow-list of
  programs and flags, every path inside the root, no shell, a time limit and an output cap);
  a re-run also shows matches that are new or gone;
- anything else is rebuilt from the files: each printed line with the current text of that
  line (``search_rerun.rebuild``), a line that no longer exists said to be gone.

Either way one line says the result was refreshed, and how. The re-rendered text depends only
on the files (and, for a re-run, on what the search finds), so while nothing changes every
request carries the same bytes and a prompt cache keeps serving it.

A tool result that shows a file outside every root is never read back into a request; it
gets one added line (``outside_note``), the same on every request from its first on, so no
cached prefix moves.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from fresh_ls.toolcalls import search_rerun
from fresh_ls.toolcalls.agents import Searched, ToolCall
from fresh_ls.toolcalls.roots import AgentRoots

#: Re-rendered results kept (per proxy), by tool call and the content of the files it showed.
RERUN_CACHE_SIZE = 256


def outside_note(path: str, roots: list[str]) -> str:
    """The line added to a tool result that shows a file outside every root."""
    where = ", ".join(roots)
    return f"fresh-ls does not track {path} (outside {where}): read it again before relying on it"


def refreshed_note(rerun: bool) -> str:
    how = (
        "the same search run again just now"
        if rerun
        else "the printed lines as the files hold them now (new matches elsewhere are not shown)"
    )
    return f"[fresh-ls] This search result was refreshed: {how}."


@dataclass
class SearchResult:
    """One search tool result of a session and the views of the files it printed."""

    call: ToolCall
    cwd: str | None
    views: list[tuple[str, str, Searched]] = field(default_factory=list)  # (id, rel, lines)

    @property
    def view_ids(self) -> list[str]:
        return [v for v, _, _ in self.views]


class Renderer:
    """Prints stale search results again (``search_rerun.refresh``: a re-run when allowed,
    else a rebuild), off the event loop, with a small cache of what it printed, keyed by
    the call and the content of the files it showed: while they hold, the same bytes."""

    def __init__(self, paths: AgentRoots) -> None:
        self.paths = paths
        self._done: OrderedDict[tuple[str, str], str] = OrderedDict()

    async def render(self, found: SearchResult) -> str | None:
        """The tool result of ``found`` as it would print now, the note first; None when
        it is no search this can print again."""
        key = (found.call.call_id, self._content_key(found))
        if key in self._done:
            self._done.move_to_end(key)
            return self._done[key]
        cwd = found.cwd or self.paths.cwd
        local = self._local(cwd)
        redone = await asyncio.to_thread(
            search_rerun.refresh,
            found.call,
            cwd,
            self.paths.text_of,
            inside=self._inside if local is not None else None,
            local_cwd=local,
        )
        if redone is None:
            return None
        text = f"{refreshed_note(redone.how == 'rerun')}\n{redone.output}"
        self._done[key] = text
        while len(self._done) > RERUN_CACHE_SIZE:
            self._done.popitem(last=False)
        return text

    def _local(self, cwd: str) -> str | None:
        """The agent's working directory on this machine (None: not in the root)."""
        if os.path.isdir(cwd) and self._inside(cwd):
            return os.path.realpath(cwd)
        rel = self.paths.rel(cwd)
        if rel is None or rel.startswith("/"):
            return None
        local = self.paths.root / rel
        return str(local) if local.is_dir() else None

    def _inside(self, path: str) -> bool:
        """Whether ``path`` is, on this machine, the root or inside it or an ``also``
        folder (a re-run reads what is there: an agent's spelling of the root that does
        not exist here is no path inside)."""
        real = Path(os.path.realpath(path))
        return any(real == r or real.is_relative_to(r) for r in (self.paths.root, *self.paths.also))

    def _content_key(self, found: SearchResult) -> str:
        h = hashlib.sha256()
        for _, rel, _ in found.views:
            text = self.paths.text_of(rel, str(self.paths.root))
            h.update(rel.encode("utf-8", "surrogatepass") + b"\0")
            h.update((text or "\0missing").encode("utf-8", "surrogatepass") + b"\0")
        return h.hexdigest()
