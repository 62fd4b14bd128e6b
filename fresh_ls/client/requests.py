# GENERATED from the method table of fresh_ls/protocol/__init__.py by `make protocol`
# (python -P -m fresh_ls.protocol.ts): do not edit. tests/test_ext_contract.py fails
# while it is stale.
"""The client's typed methods, one per method of the contract, shared by
``SyncClient`` and ``AsyncClient``: each fills the wire params from its arguments
(``view_id`` -> ``viewId``, a None left out: absent means the default) and hands them
to the front's ``_result`` or ``notify``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from fresh_ls import ids
from fresh_ls import methods as M

_R = TypeVar("_R")  # what a request method gives: a result, or an awaitable of one
_N = TypeVar("_N")  # what a notification method gives: None, or an awaitable


def wire_params(args: dict[str, Any], **records: tuple[str, ...]) -> dict[str, Any]:
    """A method's arguments as wire params: camelCase keys (``camel`` of the protocol),
    None left out (absent means the default), ``self`` skipped, and each sequence of
    tuples named in ``records`` as objects with those keys."""
    out = {}
    for key, value in args.items():
        if key == "self" or value is None:
            continue
        if key in records:
            value = [dict(zip(records[key], item, strict=True)) for item in value]
        head, *rest = key.split("_")
        out[head + "".join(r[:1].upper() + r[1:] for r in rest)] = value
    return out


class Requests(Generic[_R, _N]):
    """The typed methods; ``_result`` and ``notify`` are the front's (a blocking call,
    or an awaitable)."""

    def _result(self, method: str, params: dict[str, Any]) -> _R:  # pragma: no cover
        raise NotImplementedError

    def notify(self, method: str, params: Any) -> _N:  # pragma: no cover
        raise NotImplementedError

    def observe(
        self,
        session: str,
        path: str,
        *,
        view_id: str | None = None,
        first_line: int | None = None,
        last_line: int | None = None,
        ranges: Sequence[tuple[int, int]] | None = None,
        text: str | None = None,
        kind: str | None = None,
        result: str | None = None,
    ) -> _R:
        """``fresh/observe``: register a view; ``{viewId, path, firstLine, lastLine, status,
        units}``. ``result``: the tool result as the model saw it, decorated (lets
        ``placement: anchored`` patch it in place). ``ranges``: a sparse view (v1.3), as
        ``(firstLine, lastLine)`` pairs, instead of ``first_line``/``last_line``. Without
        ``view_id`` the client mints one (``fresh_ls.ids``), so sending it again after a
        reconnection replaces the view rather than adding a second."""
        view_id = view_id or ids.view_id()
        return self._result(M.OBSERVE, wire_params(locals(), ranges=("firstLine", "lastLine")))

    def stale(self, session: str, view_ids: list[str] | None = None) -> _R:
        """``fresh/stale``: ``{views: [...]}`` with statuses, diffs and who changed what."""
        return self._result(M.STALE, wire_params(locals()))

    def statuses(self, session: str, view_ids: list[str] | None = None) -> _R:
        """``fresh/statuses``: ``{views: [{viewId, status}]}``: each view's status, without
        units or diffs (an addition)."""
        return self._result(M.STATUSES, wire_params(locals()))

    def project(
        self,
        session: str,
        *,
        budget_bytes: int | None = None,
        policy: str | None = None,
        view_ids: list[str] | None = None,
        placement: str | None = None,
        results: list[str] | None = None,
        bytes_after: list[int] | None = None,
    ) -> _R:
        """``fresh/project``: ``{planId, entries, omitted, markers, usedBytes, budgetBytes,
        rendered}``, and with ``placement="anchored"`` (``results``: the tool-call ids of
        the request's tool results, oldest first) also ``{placement, refreshes}``."""
        return self._result(M.PROJECT, wire_params(locals()))

    def commit(self, plan_id: str) -> _R:
        """``fresh/commit``: ``{ok, changed}``."""
        return self._result(M.COMMIT, wire_params(locals()))

    def forget(self, session: str, view_ids: list[str] | None = None) -> _R:
        """``fresh/forget``: ``{forgotten}``."""
        return self._result(M.FORGET, wire_params(locals()))

    def status(self) -> _R:
        """``fresh/status``: ``{version, root, sessions, sources, watching, stateDir, ...}``."""
        return self._result(M.STATUS, wire_params(locals()))

    def view_text(self, session: str, view_id: str) -> _R:
        """``fresh/viewText``: what a view showed (an addition)."""
        return self._result(M.VIEW_TEXT, wire_params(locals()))

    def check_edit(
        self,
        session: str,
        path: str,
        *,
        old_text: str | None = None,
        first_line: int | None = None,
        last_line: int | None = None,
        whole_file: bool | None = None,
    ) -> _R:
        """``fresh/checkEdit``: may this session's edit of that region go ahead (v1.2)?
        ``{verdict, reason, units, text, viewId?}``."""
        return self._result(M.CHECK_EDIT, wire_params(locals()))

    def gate(self, session: str, view_ids: list[str] | None = None) -> _R:
        """``fresh/gate``: ``{proceed, stale}``: do these views still hold (v1.2)?"""
        return self._result(M.GATE, wire_params(locals()))

    def did_write(
        self,
        path: str,
        *,
        session: str | None = None,
        first_line: int | None = None,
        last_line: int | None = None,
    ) -> _N:
        """``fresh/didWrite``: this agent (``session``) wrote ``path``."""
        return self.notify(M.DID_WRITE, wire_params(locals()))
