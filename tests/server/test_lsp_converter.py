"""The LSP converter fails fast: a wrong shape costs one check, not one exception per
character or element (the protocol fuzz found a 12 s stall from a 70 KB string)."""

from __future__ import annotations

import cattrs
import pytest
from lsprotocol import types as lsp

from fresh_ls.server.lsp_converter import lsp_converter


def _errors(value: object, kind: type) -> list[Exception]:
    with pytest.raises(cattrs.ClassValidationError) as caught:
        lsp_converter().structure(value, kind)
    return list(caught.value.exceptions)


def test_a_string_where_an_array_belongs_is_one_error() -> None:
    errors = _errors({"changes": "x" * 70_000}, lsp.DidChangeWatchedFilesParams)
    assert len(errors) == 1
    assert "expected an array, got str" in str(errors[0])


def test_an_object_where_an_array_belongs_is_refused() -> None:
    errors = _errors({"changes": {"uri": "file:///a", "type": 1}}, lsp.DidChangeWatchedFilesParams)
    assert len(errors) == 1


def test_the_first_bad_element_stops_the_walk() -> None:
    bad = [{"uri": "file:///a", "type": "not a number"}] * 10_000
    errors = _errors({"changes": bad}, lsp.DidChangeWatchedFilesParams)
    assert len(errors) == 1


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ({"changes": [{"uri": "file:///a", "type": 1}]}, lsp.DidChangeWatchedFilesParams),
        (
            {
                "textDocument": {"uri": "file:///a", "version": 3},
                "contentChanges": [
                    {"text": "whole"},
                    {
                        "range": {
                            "start": {"line": 0, "character": 0},
                            "end": {"line": 0, "character": 1},
                        },
                        "text": "y",
                    },
                ],
            },
            lsp.DidChangeTextDocumentParams,
        ),
        ({"processId": None, "rootUri": None, "capabilities": {}}, lsp.InitializeParams),
    ],
)
def test_well_formed_messages_structure_as_before(value: object, kind: type) -> None:
    ours = lsp_converter().structure(value, kind)
    from pygls.protocol import default_converter

    assert ours == default_converter().structure(value, kind)
