"""The engine package's shape: no import circle, anchored placement only through its narrow
interface (``anchored.Ground``), never a private member of the Engine."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import fresh_ls

PACKAGE = Path(fresh_ls.__file__).resolve().parent
ENGINE = PACKAGE / "engine"
MODULES = sorted(p.stem for p in ENGINE.glob("*.py") if p.stem != "__init__")


def _imports(path: Path) -> set[str]:
    """The ``fresh_ls`` modules a file imports (``from fresh_ls.engine import wire`` names
    ``fresh_ls.engine.wire``), wherever the import stands (``TYPE_CHECKING`` too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("fresh_ls")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fresh_ls"):
            assert node.module is not None
            found.add(node.module)
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                if (PACKAGE.parent / (candidate.replace(".", "/") + ".py")).exists():
                    found.add(candidate)
    return found


def _module_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def test_the_engine_package_holds_what_it_owns() -> None:
    assert {"engine", "session", "anchored", "attribution", "plans", "store", "wire"} <= set(
        MODULES
    )
    for gone in ("engine", "anchored", "attribution", "plans", "store", "wire"):
        assert not (PACKAGE / f"{gone}.py").exists(), f"fresh_ls/{gone}.py is back"


def test_no_import_circle_in_the_engine_or_the_core() -> None:
    files = [*ENGINE.glob("*.py"), *(PACKAGE / "core").glob("*.py")]
    graph = {_module_of(f): _imports(f) for f in files}
    inside = set(graph)
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node] & inside):
            if state.get(nxt) == "open":
                cycle = [*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt]
                pytest.fail(f"import circle: {' -> '.join(cycle)}")
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_the_core_imports_nothing_of_the_engine() -> None:
    for f in (PACKAGE / "core").glob("*.py"):
        assert not any(m.startswith("fresh_ls.engine") for m in _imports(f)), f.name


@pytest.mark.parametrize("module", MODULES)
def test_each_engine_module_imports_alone(module: str) -> None:
    """In a fresh interpreter, first of all: a circle that happens to work in one import
    order breaks in another, so each module goes first once."""
    out = subprocess.run(
        [sys.executable, "-P", "-c", f"import fresh_ls.engine.{module}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr


def test_anchored_placement_uses_no_private_member_and_never_the_engine() -> None:
    tree = ast.parse((ENGINE / "anchored.py").read_text("utf-8"))
    private = sorted(
        {
            f"{ast.unparse(node.value)}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not (node.attr.startswith("__") and node.attr.endswith("__"))
        }
    )
    assert private == [], f"anchored.py reaches into private members: {private}"
    assert "fresh_ls.engine.engine" not in _imports(ENGINE / "anchored.py")
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    assert "Engine" not in names


def test_the_transport_decides_no_project_default() -> None:
    """The placement and the budget default live in the engine (``Engine.project``)."""
    text = (PACKAGE / "server" / "connection.py").read_text("utf-8")
    assert "DEFAULT_BUDGET_BYTES" not in text
    assert "Placement.ANCHORED" not in text
