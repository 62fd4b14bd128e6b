"""The definition index, table-driven: per language, source -> exact (name, kind, lines).

Every table lists *all* expected definitions, so a plain assignment that leaks in (or a
definition that goes missing) fails the comparison.
"""

from __future__ import annotations

import pytest

from fresh_ls.core.languages import (
    EXTENSIONS,
    SUPPORTED_LANGUAGES,
    get_parser,
    get_query,
    language_for_path,
)
from fresh_ls.core.symbols import (
    Definition,
    collect_raw,
    extract_definitions,
    innermost_at_line,
    parse_definitions,
)

Row = tuple[str, str, int, int]  # (name, symbol_kind, first_line, last_line)


def _defs(language: str, source: str) -> list[Definition]:
    data = source.encode("utf-8")
    return extract_definitions(language, get_parser(language).parse(data), data)


def _rows(language: str, source: str) -> list[Row]:
    return [(d.name, d.symbol_kind, d.first_line, d.last_line) for d in _defs(language, source)]


PYTHON = """\
import functools

RATE = 10
limit: int = 5

def total(items):
    return sum(items)

class Cart:
    discount = 0.1
    key = lambda self, item: item.price

    @property
    def size(self):
        return 0

    def add(self, item):
        def check(x):
            return x
        return check(item)

@functools.cache
def cached():
    pass

square = lambda x: x * x
handler: object = lambda: None
obj.attr = lambda: 1
"""

JAVASCRIPT = """\
const RATE = 10;
let name = "x", other = 3;
function total(items) {
  return items.length;
}
function* ids() { yield 1; }
const double = (x) => x * 2;
const legacy = function () {
  return 1;
};
class Cart {
  static make = () => new Cart();
  add(item) {
    const inner = () => item;
    return inner();
  }
  get size() { return 0; }
}
const obj = { meth() {}, arrow: () => 1 };
export function exported() {}
export const C2 = class {};
"""

TYPESCRIPT = """\
const RATE: number = 10;
type Id = string;
type Point = { x: number; y: number };
interface Shape {
  area(): number;
}
enum Color { Red, Green }
abstract class Base {
  abstract area(): number;
  describe(): string { return "base"; }
}
export class Square extends Base implements Shape {
  area(): number { return 1; }
}
namespace Geo {
  export function dist(): number { return 0; }
}
declare module "lib" {}
const area = (s: Shape): number => s.area();
function over(a: string): void;
function over(a: any): void {}
"""

TSX = """\
export const App = () => <div>{items.map((i) => <Item key={i} />)}</div>;
interface Props { n: number }
function Row({ n }: Props) {
  return <span>{n}</span>;
}
"""

GO = """\
package shop

var Rate = 10
const Max = 5
type ID = string
type Count int

type Cart struct {
	items []int
}

type Sizer interface {
	Size() int
}

type (
	Pair struct{ a, b int }
	Empty struct{}
)

func Total(c Cart) int {
	add := func(x int) int { return x }
	n := 3
	return add(n)
}

func (c Cart) Size() int { return len(c.items) }

func (c *Cart) Add(x int) {
	c.items = append(c.items, x)
}

func (b *Box[T]) Get() T { return b.v }

var hook = func() {}
"""

RUST = """\
const RATE: u32 = 10;
static NAME: &str = "x";
type Alias = Vec<u8>;
mod external;

fn total(xs: &[u32]) -> u32 {
    let double = |x: u32| x * 2;
    let n = 3;
    xs.iter().map(|x| double(*x)).sum::<u32>() + n
}

struct Cart {
    items: Vec<u32>,
}

enum Kind { A, B }

trait Sized2 {
    fn size(&self) -> usize;
    fn twice(&self) -> usize { self.size() * 2 }
}

impl Cart {
    fn total(&self) -> u32 { 0 }
}

impl Sized2 for Cart {
    fn size(&self) -> usize { 0 }
}

impl<T> Wrapper<T> {
    fn get(&self) {}
}

mod inner {
    pub fn helper() {}
}
"""

JAVA = """\
package shop;

public class Cart {
    static final int RATE = 10;
    private int count = 0;
    Runnable onChange = () -> {};

    public Cart() {}

    int total(int a) {
        Runnable r = () -> {
            count++;
        };
        int local = 3;
        return a;
    }

    int total() { return 0; }

    abstract void hook();

    class Line {}
}

interface Shape {
    double area();
    default String name() { return "shape"; }
}

enum Color { RED, GREEN; Color next() { return RED; } }

record Point(int x, int y) {}
"""

C = """\
#include <stdlib.h>

static int rate = 10;
int proto(int a);
struct Fwd;

int total(int *xs, int n) {
    return n;
}

char *dup(const char *s) {
    return NULL;
}

struct Cart {
    int count;
};

typedef struct {
    int x;
} Point;

union Value { int i; float f; };
enum Color { RED, GREEN };
"""

CPP = """\
#include <vector>

int rate = 10;

namespace shop {

class Cart {
 public:
  int total() const { return 0; }
  void add(int x);
};

void Cart::add(int x) {
  auto log = [](int v) { return v; };
}

int helper() { return 1; }

}  // namespace shop

int shop::Cart::count() { return 0; }

template <typename T>
T maxOf(T a, T b) {
  return a;
}

struct Point { int x; };
auto square = [](int x) { return x * x; };
int *make() { return nullptr; }
"""

RUBY = """\
RATE = 10
name = "x"

module Shop
  class Cart
    def total
      0
    end

    def self.build(items)
      new
    end
  end

  def helper; end
end

double = ->(x) { x * 2 }
triple = lambda { |x| x * 3 }
other = foo { 1 }

def top_level
  1
end
"""

TABLE: list[tuple[str, str, list[Row]]] = [
    (
        "python",
        PYTHON,
        [
            ("total", "function", 6, 7),
            ("Cart", "class", 9, 20),
            ("Cart.key", "method", 11, 11),
            ("Cart.size", "method", 13, 15),
            ("Cart.add", "method", 17, 20),
            ("Cart.add.check", "function", 18, 19),
            ("cached", "function", 22, 24),
            ("square", "function", 26, 26),
            ("handler", "function", 27, 27),
        ],
    ),
    (
        "javascript",
        JAVASCRIPT,
        [
            ("total", "function", 3, 5),
            ("ids", "function", 6, 6),
            ("double", "function", 7, 7),
            ("legacy", "function", 8, 10),
            ("Cart", "class", 11, 18),
            ("Cart.make", "method", 12, 12),
            ("Cart.add", "method", 13, 16),
            ("Cart.add.inner", "function", 14, 14),
            ("Cart.size", "method", 17, 17),
            ("exported", "function", 20, 20),
            ("C2", "class", 21, 21),
        ],
    ),
    (
        "typescript",
        TYPESCRIPT,
        [
            ("Point", "type", 3, 3),
            ("Shape", "interface", 4, 6),
            ("Color", "enum", 7, 7),
            ("Base", "class", 8, 11),
            ("Base.describe", "method", 10, 10),
            ("Square", "class", 12, 14),
            ("Square.area", "method", 13, 13),
            ("Geo", "namespace", 15, 17),
            ("Geo.dist", "function", 16, 16),
            ("lib", "module", 18, 18),
            ("area", "function", 19, 19),
            ("over", "function", 21, 21),
        ],
    ),
    (
        "tsx",
        TSX,
        [
            ("App", "function", 1, 1),
            ("Props", "interface", 2, 2),
            ("Row", "function", 3, 5),
        ],
    ),
    (
        "go",
        GO,
        [
            ("Cart", "struct", 8, 10),
            ("Sizer", "interface", 12, 14),
            ("Pair", "struct", 17, 17),
            ("Empty", "struct", 18, 18),
            ("Total", "function", 21, 25),
            ("Total.add", "function", 22, 22),
            ("Cart.Size", "method", 27, 27),
            ("Cart.Add", "method", 29, 31),
            ("Box.Get", "method", 33, 33),
            ("hook", "function", 35, 35),
        ],
    ),
    (
        "rust",
        RUST,
        [
            ("total", "function", 6, 10),
            ("total.double", "function", 7, 7),
            ("Cart", "struct", 12, 14),
            ("Kind", "enum", 16, 16),
            ("Sized2", "trait", 18, 21),
            ("Sized2.twice", "method", 20, 20),
            ("Cart", "impl", 23, 25),
            ("Cart.total", "method", 24, 24),
            ("Cart", "impl", 27, 29),
            ("Cart.size", "method", 28, 28),
            ("Wrapper", "impl", 31, 33),
            ("Wrapper.get", "method", 32, 32),
            ("inner", "module", 35, 37),
            ("inner.helper", "function", 36, 36),
        ],
    ),
    (
        "java",
        JAVA,
        [
            ("Cart", "class", 3, 23),
            ("Cart.onChange", "method", 6, 6),
            ("Cart.Cart", "method", 8, 8),
            ("Cart.total", "method", 10, 16),
            ("Cart.total.r", "function", 11, 13),
            ("Cart.total", "method", 18, 18),
            ("Cart.Line", "class", 22, 22),
            ("Shape", "interface", 25, 28),
            ("Shape.name", "method", 27, 27),
            ("Color", "enum", 30, 30),
            ("Color.next", "method", 30, 30),
            ("Point", "class", 32, 32),
        ],
    ),
    (
        "c",
        C,
        [
            ("total", "function", 7, 9),
            ("dup", "function", 11, 13),
            ("Cart", "struct", 15, 17),
            ("Point", "struct", 19, 21),
            ("Value", "union", 23, 23),
            ("Color", "enum", 24, 24),
        ],
    ),
    (
        "cpp",
        CPP,
        [
            ("shop", "namespace", 5, 19),
            ("shop.Cart", "class", 7, 11),
            ("shop.Cart.total", "method", 9, 9),
            ("shop.Cart.add", "method", 13, 15),
            ("shop.Cart.add.log", "function", 14, 14),
            ("shop.helper", "function", 17, 17),
            ("shop.Cart.count", "method", 21, 21),
            ("maxOf", "function", 23, 26),
            ("Point", "struct", 28, 28),
            ("square", "function", 29, 29),
            ("make", "function", 30, 30),
        ],
    ),
    (
        "ruby",
        RUBY,
        [
            ("Shop", "module", 4, 16),
            ("Shop.Cart", "class", 5, 13),
            ("Shop.Cart.total", "method", 6, 8),
            ("Shop.Cart.build", "method", 10, 12),
            ("Shop.helper", "function", 15, 15),
            ("double", "function", 18, 18),
            ("triple", "function", 19, 19),
            ("top_level", "function", 22, 24),
        ],
    ),
]


@pytest.mark.parametrize(("language", "source", "expected"), TABLE, ids=[t[0] for t in TABLE])
def test_definitions_per_language(language: str, source: str, expected: list[Row]) -> None:
    assert _rows(language, source) == expected


def test_every_supported_language_has_a_table_row_and_a_query() -> None:
    assert {t[0] for t in TABLE} == set(SUPPORTED_LANGUAGES)
    for language in SUPPORTED_LANGUAGES:
        assert get_query(language).pattern_count > 0


# --- focused cases -------------------------------------------------------------------


def test_java_overloads_share_a_name_and_differ_by_ordinal() -> None:
    defs = _defs("java", JAVA)
    totals = [(d.first_line, d.ordinal) for d in defs if d.name == "Cart.total"]
    assert totals == [(10, 0), (18, 1)]


def test_rust_impls_of_one_type_count_separately_from_the_struct() -> None:
    defs = _defs("rust", RUST)
    assert [(d.symbol_kind, d.ordinal) for d in defs if d.name == "Cart"] == [
        ("struct", 0),
        ("impl", 0),
        ("impl", 1),
    ]


def test_go_receivers_value_pointer_and_generic() -> None:
    src = (
        "package p\n"
        "func (c Cart) A() {}\n"
        "func (c *Cart) B() {}\n"
        "func (b Box[T]) C() {}\n"
        "func (*Cart) D() {}\n"
    )
    assert [d.name for d in _defs("go", src)] == ["Cart.A", "Cart.B", "Box.C", "Cart.D"]


def test_python_decorators_are_inside_the_extent() -> None:
    src = "class A:\n    @staticmethod\n    @other\n    def m():\n        pass\n"
    (cls, method) = _defs("python", src)
    assert (method.name, method.first_line, method.last_line) == ("A.m", 2, 5)
    assert src.encode()[method.start_byte :].startswith(b"@staticmethod")
    assert method.parent == 0
    assert cls.parent is None


def test_wrappers_widen_the_extent_once() -> None:
    # export + decorator (TS), `type` keyword (Go), `template <...>` head (C++): each is one
    # definition whose bytes start at the wrapper, not two nested ones.
    ts_src = "@Component({\n  a: 1,\n})\nexport class Foo {}\n"
    (foo,) = _defs("typescript", ts_src)
    assert (foo.name, foo.first_line, foo.last_line, foo.start_byte) == ("Foo", 1, 4, 0)

    go_src = "package p\ntype Cart struct {\n}\n"
    (cart,) = _defs("go", go_src)
    assert go_src.encode()[cart.start_byte : cart.end_byte] == b"type Cart struct {\n}"

    cpp_src = "template <class T>\nstruct Box { T get() { return v; } };\n"
    box, get = _defs("cpp", cpp_src)
    assert (box.name, box.first_line, box.start_byte) == ("Box", 1, 0)
    assert (get.name, get.symbol_kind, get.parent) == ("Box.get", "method", 0)


def test_single_declarator_statement_is_the_extent_but_several_are_split() -> None:
    src = "const f = () => 1;\nlet a = () => 1, b = function () {};\n"
    f, a, b = _defs("javascript", src)
    assert src.encode()[f.start_byte : f.end_byte] == b"const f = () => 1;"
    assert src.encode()[a.start_byte : a.end_byte] == b"a = () => 1"
    assert (b.name, b.parent) == ("b", None)


def test_cpp_qualified_scopes_become_dots() -> None:
    src = (
        "namespace a::b { void f() {} }\n"
        "int x::y::Z::g() { return 0; }\n"
        "template <class T> T Box<T>::get() { return v; }\n"
        "Cart::~Cart() {}\n"
    )
    assert [(d.name, d.symbol_kind) for d in _defs("cpp", src)] == [
        ("a.b", "namespace"),
        ("a.b.f", "function"),
        ("x.y.Z.g", "method"),
        ("Box.get", "method"),
        ("Cart.~Cart", "method"),
    ]


def test_c_pointer_returning_functions() -> None:
    src = (
        "char *one(void) { return 0; }\n"
        "char **two(void) { return 0; }\n"
        "int (*three(void))(int) { return 0; }\n"
    )
    assert [d.name for d in _defs("c", src)] == ["one", "two", "three"]


def test_ruby_singleton_methods_and_scoped_class_names() -> None:
    src = (
        "class Shop::Cart\n"
        "  def self.build; end\n"
        "  class << self\n"
        "    def meta; end\n"
        "  end\n"
        "end\n"
        "def obj.single; end\n"
    )
    assert [(d.name, d.symbol_kind) for d in _defs("ruby", src)] == [
        ("Shop.Cart", "class"),
        ("Shop.Cart.build", "method"),
        ("Shop.Cart.meta", "method"),
        ("obj.single", "method"),
    ]


def test_function_under_a_module_or_namespace_is_not_promoted_to_method() -> None:
    defs = _defs("rust", "mod m { fn f() {} }\ntrait T { fn g() {} }\n")
    assert [(d.name, d.symbol_kind) for d in defs] == [
        ("m", "module"),
        ("m.f", "function"),
        ("T", "trait"),
        ("T.g", "method"),
    ]


def test_parent_indices_and_ordinals() -> None:
    src = (
        "class A:\n    def f(self): pass\n    def f(self): pass\nclass B:\n    def f(self): pass\n"
    )
    defs = _defs("python", src)
    assert [(d.name, d.parent, d.ordinal) for d in defs] == [
        ("A", None, 0),
        ("A.f", 0, 0),
        ("A.f", 0, 1),
        ("B", None, 0),
        ("B.f", 3, 0),
    ]


def test_sorted_by_start_then_widest_first() -> None:
    defs = _defs("cpp", CPP)
    keys = [(d.start_byte, -d.end_byte) for d in defs]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


# --- error tolerance -----------------------------------------------------------------


def test_python_syntax_error_elsewhere_keeps_other_definitions() -> None:
    src = "def a():\n    return 1\n\nx = = 3\n\ndef b(:\n    pass\n\ndef c():\n    pass\n"
    rows = _rows("python", src)
    # `b` may or may not be recovered from its broken signature; a and c must be exact.
    assert [r for r in rows if r[0] != "b"] == [("a", "function", 1, 2), ("c", "function", 9, 10)]


def test_javascript_syntax_error_elsewhere_keeps_other_definitions() -> None:
    src = "function a() {}\nlet = = ;\nfunction b() {\n  return 1;\n}\nclass K { m() {} }\n"
    assert _rows("javascript", src) == [
        ("a", "function", 1, 1),
        ("b", "function", 3, 5),
        ("K", "class", 6, 6),
        ("K.m", "method", 6, 6),
    ]


# --- line arithmetic -----------------------------------------------------------------


def test_definition_ending_at_column_zero_ends_on_the_previous_row() -> None:
    # With the closing brace missing, Go's error recovery ends the function just after the
    # final newline, i.e. at column 0 of row 3 (0-based). That is line 3, not line 4.
    src = "package p\nfunc f() {\n  x()\n"
    tree = get_parser("go").parse(src.encode())
    fn = tree.root_node.children[1]
    assert (fn.type, tuple(fn.end_point)) == ("function_declaration", (3, 0))
    assert _rows("go", src) == [("f", "function", 2, 3)]


def test_crlf_and_multibyte_names_keep_lines_and_bytes() -> None:
    src = "x = 1\r\ndef café():\r\n    pass\r\n"
    (d,) = _defs("python", src)
    assert (d.name, d.first_line, d.last_line) == ("café", 2, 3)
    assert src.encode()[d.start_byte : d.end_byte] == "def café():\r\n    pass".encode()


# --- innermost_at_line -----------------------------------------------------------------

NESTED = """\
import os

class A:
    x = 1

    def f(self):
        return 1

    def g(self):
        def inner():
            pass
        return inner

def top():
    pass
"""


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (1, None),
        (2, None),
        (3, "A"),
        (4, "A"),
        (5, "A"),
        (6, "A.f"),
        (7, "A.f"),
        (8, "A"),
        (9, "A.g"),
        (10, "A.g.inner"),
        (11, "A.g.inner"),
        (12, "A.g"),
        (13, None),
        (14, "top"),
        (15, "top"),
        (16, None),
        (0, None),
    ],
)
def test_innermost_at_line(line: int, expected: str | None) -> None:
    defs = _defs("python", NESTED)
    index = innermost_at_line(defs, line)
    assert (None if index is None else defs[index].name) == expected


def test_innermost_at_line_on_empty_list() -> None:
    assert innermost_at_line([], 1) is None


def test_innermost_at_line_prefers_the_later_sibling_on_a_shared_line() -> None:
    defs = _defs("javascript", "function a() {\n}function b() {\n}\n")
    assert [(d.name, d.first_line, d.last_line) for d in defs] == [("a", 1, 2), ("b", 2, 3)]
    assert innermost_at_line(defs, 2) == 1
    assert innermost_at_line(defs, 1) == 0


# --- languages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("stub.pyi", "python"),
        ("x.mjs", "javascript"),
        ("x.jsx", "javascript"),
        ("x.cts", "typescript"),
        ("x.tsx", "tsx"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("A.java", "java"),
        ("x.h", "c"),
        ("x.hpp", "cpp"),
        ("x.cc", "cpp"),
        ("x.rb", "ruby"),
        ("UPPER.PY", "python"),
        ("Makefile", None),
        ("notes.md", None),
        (".py", None),
    ],
)
def test_language_for_path(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


def test_extension_table_is_exactly_the_brief() -> None:
    assert len(EXTENSIONS) == 22


def test_parse_definitions_unsupported_and_supported() -> None:
    assert parse_definitions("notes.md", b"# title\n") is None
    assert parse_definitions("empty.py", b"") == []
    defs = parse_definitions("m.py", b"def f():\n    pass\n")
    assert defs == [
        Definition(
            name="f",
            symbol_kind="function",
            first_line=1,
            last_line=2,
            start_byte=0,
            end_byte=17,
            parent=None,
            ordinal=0,
        )
    ]


def test_get_parser_rejects_unknown_language() -> None:
    with pytest.raises(ValueError, match="unsupported language"):
        get_parser("cobol")


def test_collect_raw_over_a_range_meets_nodes_by_half_open_overlap() -> None:
    data = b" package m\n\nfunc A() {}\n"  # A spans bytes 12-23
    tree = get_parser("go").parse(data)

    def names(byte_range: tuple[int, int]) -> list[str]:
        return [r.own for r in collect_raw("go", tree, data, byte_range)]

    assert names((11, 12)) == [] and names((23, 24)) == []
    assert names((12, 12)) == [] and names((13, 13)) == ["A"]
    assert names((22, 23)) == ["A"]
    # tree-sitter reads an end of 0 as no end; the empty range at the start meets nothing.
    assert names((0, 0)) == []
