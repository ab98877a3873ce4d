"""No import cycles among the modules of ``table_engine/`` and ``provider/paimon_provider/``.

Every import counts, function-level (lazy) ones included: a lazy import only hides a cycle from Python, not from a
reader. Imports under ``if TYPE_CHECKING:`` are left out (they never run). ``from pkg import name`` is an edge to the
submodule ``pkg.name`` when that is a module, else to ``pkg`` (its ``__init__``); importing ``a.b.c`` also runs
``a/__init__`` and ``a/b/__init__``, but those edges are left out: a package ``__init__`` that re-exports its
submodules would otherwise put every submodule in a cycle with it.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = (ROOT / "table_engine", ROOT / "provider" / "paimon_provider")



def modules() -> dict[str, pathlib.Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted(pkg.rglob("*.py")):
            out[".".join(path.relative_to(pkg.parent).with_suffix("").parts).removesuffix(".__init__")] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _Imports(ast.NodeVisitor):
    """The modules one module imports (absolute names, not yet resolved to known modules)."""

    def __init__(self, module: str, is_package: bool, known: set[str]) -> None:
        self.package = module if is_package else module.rpartition(".")[0]
        self.known = known
        self.found: set[str] = set()

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for stmt in node.orelse:  # the else branch of ``if TYPE_CHECKING`` does run
                self.visit(stmt)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(a.name for a in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            parts = self.package.split(".")
            base = ".".join(parts[:len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            self.found.add(sub if sub in self.known else base)


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        visitor = _Imports(name, path.name == "__init__.py", known)
        visitor.visit(ast.parse(path.read_text(), str(path)))
        edges = set()
        for target in visitor.found:
            while target and target not in known:  # ``pkg.mod.func`` -> ``pkg.mod``; outside modules vanish
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.add(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(sorted(c)) for c in found)


def test_the_check_sees_lazy_imports_and_skips_type_checking_blocks() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [frozenset({"a", "b", "c"})]
    known = {"pkg", "pkg.x", "pkg.y"}
    visitor = _Imports("pkg.x", False, known)
    visitor.visit(ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg import z\nelse:\n    import os\n"
        "def f():\n    from . import y\n    from pkg.y import thing\n"))
    assert visitor.found == {"typing", "os", "pkg.y"}
