"""The server's handlers come from the protocol's method table: one handler per served
method, each wrapped by the method's kind, and nothing served that the table does not name."""

from __future__ import annotations

from typing import Any

import pytest

from fresh_ls import protocol as P
from fresh_ls.server.connection import handler_table


def _noop(_: Any) -> None:
    return None


def _every() -> dict[str, Any]:
    return {m.name: _noop for m in P.CLIENT_METHODS.values() if m.served}


def test_every_served_method_gets_its_handler_in_the_tables_order() -> None:
    table = handler_table(_every())
    assert [m.name for m, _ in table] == [m.name for m in P.CLIENT_METHODS.values() if m.served]
    kinds = {m.name: m.notification for m, _ in table}
    assert kinds[P.DID_WRITE] is True
    assert kinds[P.OBSERVE] is False


def test_a_missing_handler_is_an_error() -> None:
    handlers = _every()
    del handlers[P.GATE]
    with pytest.raises(RuntimeError, match="missing \\['fresh/gate'\\]"):
        handler_table(handlers)


def test_a_handler_for_a_method_the_table_does_not_name_is_an_error() -> None:
    handlers = _every() | {"fresh/nothing": _noop}
    with pytest.raises(RuntimeError, match="extra \\['fresh/nothing'\\]"):
        handler_table(handlers)
