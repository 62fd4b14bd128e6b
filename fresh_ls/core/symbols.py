"""The definition index: functions, classes and their kin, as line ranges with dotted names.

All language knowledge lives in ``queries/<language>.scm``; this module only interprets
captures, so every language gets the same naming, nesting and de-duplication rules.

Capture convention of the query files:

* ``@definition.<kind>`` is the whole definition node (its extent); ``<kind>`` is one of
  function, method, class, struct, enum, union, interface, trait, impl, module,
  namespace, type.
* ``@name`` is the name node. ``::`` in its text reads as ``.``, so C++ ``a::b`` and Ruby
  ``A::B`` join the dotted path like nesting does.
* ``@scope`` (optional) is a qualifier prepended to the name: a Go receiver type, the
  ``Cart`` of a C++ ``Cart::total`` defined out of class.
* Captures starting with ``_`` are helpers for predicates and are ignored.

A query may match one definition through a wrapper too (a decorated Python def, an
``export`` statement, a ``template <...>`` head, ``const f = ...;``). Per name node the
widest match wins, so the extent includes the wrapper without the query needing a way to
say "not inside X", which tree-sitter queries cannot express.

The hot path runs on every edit of files of thousands of lines, so the only Python work is
per match of the query (definitions), never per syntax node.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # imported on the first query (fresh_ls.core.languages)
    import tree_sitter

from fresh_ls.core.languages import get_parser, get_query, language_for_path

# A "function" directly inside one of these is a method. Modules and namespaces are not
# here: a function in a Ruby module or C++ namespace has no receiver.
CLASS_LIKE_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "union"})

_DEFINITION_PREFIX = "definition."


@dataclass(frozen=True, slots=True)
class Definition:
    name: str  # dotted path from the outermost definition, e.g. "Cart.total"
    symbol_kind: str  # the <kind> of the capture, "function" promoted to "method" in a class
    first_line: int  # 1-based inclusive
    last_line: int  # 1-based inclusive
    start_byte: int
    end_byte: int
    parent: int | None  # index into the returned list of the innermost enclosing definition
    ordinal: int  # 0-based among definitions with the same name and symbol_kind


class _Match(NamedTuple):
    start: int
    end: int
    pattern: int
    kind: str
    node: tree_sitter.Node
    name_node: tree_sitter.Node
    scope_node: tree_sitter.Node | None


class RawDefinition(NamedTuple):
    """A definition as the query found it, before nesting gives it a dotted name.

    Free of tree nodes, so the ones outside an edit can be kept (shifted) across a
    reparse instead of being found again by a query over the whole file.
    """

    start: int
    end: int
    pattern: int
    kind: str
    own: str  # its own name, with the @scope qualifier when there is one
    first_line: int
    last_line: int


def _text(source: bytes, node: tree_sitter.Node) -> str:
    text = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
    if "::" in text:
        text = ".".join(part.strip() for part in text.split("::"))
    return text


def _collect(
    language: str, tree: tree_sitter.Tree, byte_range: tuple[int, int] | None = None
) -> list[_Match]:
    """One match per definition node, widest wrapper per name, sorted for nesting."""
    import tree_sitter

    cursor = tree_sitter.QueryCursor(get_query(language))
    if byte_range is not None:
        # tree-sitter reads an end byte of 0 as "no end": the empty range at the start of
        # the file (an edit that deletes a prefix before leading whitespace) would query the
        # whole file. No node meets it, as none meets an empty range at a node's boundary.
        if byte_range[1] == 0:
            return []
        cursor.set_byte_range(*byte_range)
    matches = cursor.matches(tree.root_node)
    by_name: dict[tuple[int, int], _Match] = {}
    for pattern, captures in matches:
        name_nodes = captures.get("name")
        if not name_nodes:
            continue
        for capture_name, nodes in captures.items():
            if capture_name.startswith(_DEFINITION_PREFIX):
                node = nodes[0]
                kind = capture_name[len(_DEFINITION_PREFIX) :]
                break
        else:
            continue
        name_node = name_nodes[0]
        scope_nodes = captures.get("scope")
        match = _Match(
            node.start_byte,
            node.end_byte,
            pattern,
            kind,
            node,
            name_node,
            scope_nodes[0] if scope_nodes else None,
        )
        key = (name_node.start_byte, name_node.end_byte)
        seen = by_name.get(key)
        if seen is None or _wider_first(match) < _wider_first(seen):
            by_name[key] = match

    # A node reached by two patterns through different name nodes (a fallback shape) keeps
    # the pattern written first in the .scm file.
    by_span: dict[tuple[int, int], _Match] = {}
    for match in by_name.values():
        span = (match.start, match.end)
        seen = by_span.get(span)
        if seen is None or match.pattern < seen.pattern:
            by_span[span] = match
    return sorted(by_span.values(), key=_wider_first)


def _wider_first(match: _Match | RawDefinition) -> tuple[int, int, int]:
    return (match.start, -match.end, match.pattern)


def collect_raw(
    language: str,
    tree: tree_sitter.Tree,
    source: bytes,
    byte_range: tuple[int, int] | None = None,
) -> list[RawDefinition]:
    """The definitions whose nodes meet ``byte_range`` (the whole file without one).

    As tree-sitter counts meeting: a node meets ``(start, end)`` when it starts before
    ``end`` and ends after ``start``, so an empty range finds only nodes strictly around it.
    """
    out = []
    for match in _collect(language, tree, byte_range):
        own = _text(source, match.name_node)
        if match.scope_node is not None:
            own = f"{_text(source, match.scope_node)}.{own}"
        first_line, last_line = _line_span(match.node)
        out.append(
            RawDefinition(
                match.start, match.end, match.pattern, match.kind, own, first_line, last_line
            )
        )
    return out


def _line_span(node: tree_sitter.Node) -> tuple[int, int]:
    """1-based inclusive lines. An end at column 0 is just past a newline, on that line."""
    first_row = node.start_point.row
    end_row, end_column = node.end_point
    last_row = end_row - 1 if end_column == 0 and end_row > first_row else end_row
    return first_row + 1, last_row + 1


def extract_definitions(language: str, tree: tree_sitter.Tree, source: bytes) -> list[Definition]:
    """Definitions sorted by (start_byte, -end_byte), nested by byte containment.

    ``source`` must be the bytes ``tree`` was parsed from: names are sliced out of it
    rather than read through ``Node.text``, which fails for trees parsed by callback.
    """
    return build_definitions(collect_raw(language, tree, source))


def build_definitions(
    raw: list[RawDefinition], kept: Sequence[Definition] = ()
) -> list[Definition]:
    """Nest raw definitions by byte containment: dotted names, parents, ordinals, and a
    function inside a class-like definition promoted to a method.

    ``kept``: the definitions already built for the first ``len(kept)`` of ``raw`` in
    this order, each ending before the rest begin (those before an edit's region,
    ``DefinitionIndex``): they are taken as they are, since nothing after them changes a
    name, parent or ordinal before it; only their ordinals are counted again. Building
    each of a 5,000-line file's 278 definitions anew was most of the definitions' share
    of the first request after an edit."""
    definitions: list[Definition] = list(kept)
    stack: list[int] = []  # indices of the definitions enclosing the current one
    ordinals: dict[tuple[str, str], int] = {}
    for d in kept:  # ordinals rise along the list: the last one of a key counts it
        ordinals[(d.name, d.symbol_kind)] = d.ordinal + 1
    ordered = sorted(raw, key=_wider_first)
    for match in ordered[len(kept) :] if kept else ordered:
        while stack and (
            definitions[stack[-1]].end_byte < match.end
            or definitions[stack[-1]].end_byte <= match.start
        ):
            stack.pop()
        parent = stack[-1] if stack else None
        kind = match.kind
        if parent is None:
            name = match.own
        else:
            enclosing = definitions[parent]
            name = f"{enclosing.name}.{match.own}"
            if kind == "function" and enclosing.symbol_kind in CLASS_LIKE_KINDS:
                kind = "method"
        ordinal = ordinals.get((name, kind), 0)
        ordinals[(name, kind)] = ordinal + 1
        definitions.append(
            Definition(
                name=name,
                symbol_kind=kind,
                first_line=match.first_line,
                last_line=match.last_line,
                start_byte=match.start,
                end_byte=match.end,
                parent=parent,
                ordinal=ordinal,
            )
        )
        stack.append(len(definitions) - 1)
    return definitions


def innermost_at_line(defs: list[Definition], line: int) -> int | None:
    """Index of the innermost definition whose lines hold ``line``, or None.

    ``defs`` must be as ``extract_definitions`` returns them. The last definition starting
    at or before ``line`` is inside the answer (or is it), because definitions nest, so
    climbing its parents finds the answer in O(depth) after a binary search.
    """
    index = bisect_right(defs, line, key=lambda d: d.first_line) - 1
    while index >= 0:
        definition = defs[index]
        if definition.last_line >= line:
            return index
        parent = definition.parent
        if parent is None:
            return None
        index = parent
    return None


def parse_definitions(path: str, source: bytes) -> list[Definition] | None:
    """Parse and index ``source`` as the language of ``path``; None when unsupported."""
    language = language_for_path(path)
    if language is None:
        return None
    tree = get_parser(language).parse(source)
    return extract_definitions(language, tree, source)
