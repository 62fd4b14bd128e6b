"""The converter pygls structures standard LSP messages with, bounded in cost.

lsprotocol's converter validates in detail: it structures every element of an array and
collects one exception per bad element. Given a string where an array belongs, it walks the
string character by character, and the cost grows faster than the length (a 70 KB string
held one connection for 12 s in the protocol fuzz). Here an array must be a JSON array, and
its elements are structured one by one, stopping at the first that cannot be read: a bad
message costs at most one pass over what was sent, and its answer is still -32602.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, get_args, get_origin

import cattrs
from cattrs.cols import is_sequence
from pygls.protocol import default_converter

StructureHook = Callable[[Any, Any], Any]


def _array_hook(kind: Any, converter: cattrs.Converter) -> StructureHook:
    args = get_args(kind)
    element: Any = args[0] if args else Any
    # As lsprotocol's own hooks do: a ``list`` stays a list, any other sequence is a tuple.
    as_list = kind is list or get_origin(kind) is list

    def structure(value: Any, _kind: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise TypeError(f"expected an array, got {type(value).__name__}")
        if element is Any:
            items = list(value)
        else:
            items = [converter.structure(item, element) for item in value]
        return items if as_list else tuple(items)

    return structure


def _plain_sequence(kind: Any) -> bool:
    """Lists and homogeneous sequences; fixed-shape tuples keep lsprotocol's own hook."""
    if not is_sequence(kind):
        return False
    args = get_args(kind)
    return not (len(args) > 1 and args[-1] is not Ellipsis)


@functools.cache
def lsp_converter() -> cattrs.Converter:
    """One converter for every connection: it holds no per-connection state."""
    converter = default_converter()
    converter.register_structure_hook_factory(
        _plain_sequence, lambda kind: _array_hook(kind, converter)
    )
    return converter
