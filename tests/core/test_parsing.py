"""The definition index reparses incrementally and re-queries only the changed region: after
any sequence of edits its answer must equal a query over the whole tree, and, while the text
has no syntax error, a parse from scratch."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fresh_ls.core.languages import language_for_path
from fresh_ls.core.parsing import DefinitionIndex, single_edit
from fresh_ls.core.symbols import extract_definitions, parse_definitions
from fresh_ls.core.text import sha256_bytes
from tests.core._walks import walked

SEEDS = {
    "m.py": (
        "import os\n\nRATE = 1\n\n\nclass Cart:\n    def add(self, x):\n        return x\n\n"
        "    def total(self):\n        return 2\n\n\ndef helper():\n    pass\n\n\n"
        "@decorate\ndef wrapped():\n    f = lambda y: y\n    return f\n"
    ),
    "m.js": (
        "const RATE = 1;\n\nclass Cart {\n  add(x) {\n    return x;\n  }\n}\n\n"
        "function helper() {\n  return 2;\n}\n\nconst f = (y) => y;\n"
    ),
    "m.go": (
        "package m\n\ntype Cart struct {\n\tn int\n}\n\nfunc (c *Cart) Add(x int) int {\n"
        "\treturn x\n}\n\nfunc Helper() int {\n\treturn 2\n}\n"
    ),
}
SNIPPETS = [
    "",
    "\n",
    "    x = 1\n",
    "def extra():\n    return 0\n",
    "class Z:\n    pass\n",
    "}\n",
    "function g() {\n  return 1;\n}\n",
    "func G() {}\n",
    "(",
    ")",
    '"',
    "  ",
    "# c\n",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    path=st.sampled_from(sorted(SEEDS)),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 40), st.sampled_from(SNIPPETS)),
        min_size=1,
        max_size=8,
    ),
)
# Found by this test: the last edit deletes a prefix up to leading whitespace, so the
# restricted region is the empty (0, 0), which tree-sitter's byte range reads as the whole
# file; every kept definition then came out twice, nested in itself ("Cart.Add.Cart.Add").
@example(path="m.go", edits=[(0.0, 0, "  "), (0.0, 0, "\n"), (0.0, 2, "")])
def test_incremental_definitions_equal_a_full_parse(
    path: str, edits: list[tuple[float, int, str]]
) -> None:
    index = DefinitionIndex()
    data = SEEDS[path].encode()
    index.definitions(path, data, sha256_bytes(data))
    for where, cut, snippet in edits:
        at = int(where * len(data))
        data = data[:at] + snippet.encode() + data[at + cut :]
        sha = sha256_bytes(data)
        got = index.definitions(path, data, sha)
        if got is None:  # the index judged the text unparseable as a whole
            continue
        # The restricted query must find what a query over the whole (same) tree finds.
        tree = index._trees[(language_for_path(path) or "", sha)]
        assert got == extract_definitions(language_for_path(path) or "", tree, data)
        # tree-sitter's error recovery depends on the edit history, so only an error-free
        # text is also compared with a parse from scratch.
        if not tree.root_node.has_error:
            assert got == parse_definitions(path, data)


def test_restricted_extraction_is_used_after_an_edit() -> None:
    index = DefinitionIndex()
    data = SEEDS["m.py"].encode()
    index.definitions("m.py", data, sha256_bytes(data))
    edited = data.replace(b"return 2", b"return 3")
    assert single_edit(data, edited) is not None
    defs = index.definitions("m.py", edited, sha256_bytes(edited))
    assert index.restricted_extractions == 1
    assert defs == parse_definitions("m.py", edited)


def test_deleting_a_prefix_up_to_leading_whitespace_keeps_each_definition_once() -> None:
    index = DefinitionIndex()
    before = b"\n " + SEEDS["m.go"].encode()
    after = before[1:]
    edit = single_edit(before, after)
    assert edit is not None and (edit.start_byte, edit.new_end_byte) == (0, 0)
    index.definitions("m.go", before, sha256_bytes(before))
    defs = index.definitions("m.go", after, sha256_bytes(after))
    assert index.restricted_extractions == 1
    assert defs == parse_definitions("m.go", after)
    assert [d.name for d in defs or []] == ["Cart", "Cart.Add", "Helper"]


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=40), st.binary(max_size=40), st.sampled_from([b"", b"x\n" * 3000]))
def test_single_edit_is_the_walk_of_the_common_head_and_tail(
    a: bytes, b: bytes, around: bytes
) -> None:
    old, new = around + a + around, around + b + around
    edit = single_edit(old, new)
    if old == new:
        assert edit is None
        return
    assert edit is not None
    start, end_old, end_new = walked(old, new)
    assert (edit.start_byte, edit.old_end_byte, edit.new_end_byte) == (start, end_old, end_new)
    assert edit.start_point == (old.count(b"\n", 0, start), start - old.rfind(b"\n", 0, start) - 1)
    assert edit.new_end_point[0] == new.count(b"\n", 0, end_new)
