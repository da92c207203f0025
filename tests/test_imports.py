"""The import graph of the kgroup package has no cycle.

Every import statement counts, wherever it sits: at module level, inside a function (a deferred
import hides a cycle, it does not remove it) and under ``if TYPE_CHECKING:`` (mypy and readers
follow those too). ``from a import b`` is an import of the module ``a.b`` when there is one,
else of ``a``. Imports made by name at run time (``importlib.import_module``, as
``kgroup.broker.handlers`` finds its modules) are not seen.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "kgroup"


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package under ``root``, by dotted name (a package by its own)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that module ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for a in node.names:
                sub = f"{base}.{a.name}"
                if sub in known:
                    out.add(sub)
                elif base in known:
                    out.add(base)
    out.discard(name)
    return out


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> Iterator[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each
    sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(v: str) -> Iterator[list[str]]:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                yield from visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                yield sorted(component)

    for v in sorted(edges):
        if v not in index:
            yield from visit(v)


def test_no_import_cycles() -> None:
    edges = graph()
    found = list(cycles(edges))
    lines = [
        f"  {m} imports {', '.join(sorted(edges[m] & set(component)))}"
        for component in found
        for m in component
    ]
    assert not found, "import cycles in kgroup:\n" + "\n".join(lines)


def test_graph_sees_every_kind_of_import() -> None:
    # The check is only as good as its edges: one of each kind it must see.
    edges = graph()
    assert "kgroup.broker.state" in edges["kgroup.broker.context"]  # under TYPE_CHECKING
    assert "kgroup.broker.handlers" in edges["kgroup.broker.handlers.api_versions"]  # deferred
    assert "kgroup.broker.coordinators.runtime" in edges["kgroup.broker.coordinators.groups"]
    assert "kgroup.errors" in edges["kgroup.broker.coordinators.runtime"]  # from kgroup import x


def test_cycles_are_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.b\n"
    )
    (pkg / "b.py").write_text("def f():\n    from pkg.sub import c\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("from .. import a\n")
    (pkg / "d.py").write_text("from pkg import a\n")
    assert list(cycles(graph(pkg))) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
