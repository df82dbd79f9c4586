"""The layers run one way: no import cycle inside ``trainwright`` or ``trainwright_lint``, counting
imports written inside functions (an import moved into a function to dodge a cycle is still one),
and the library never imports the linter.

The graph is built with ``ast`` from the source, as the maintainers' before-stop check builds it, so a
cycle fails here before it reaches review.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "trainwright": ROOT / "src" / "trainwright",
    "trainwright_lint": ROOT / "plugin" / "trainwright_lint",
}


def modules(packages: dict[str, Path] = PACKAGES) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name, top in packages.items():
        for path in sorted(top.rglob("*.py")):
            dotted = ".".join([name, *path.relative_to(top).with_suffix("").parts])
            found[dotted.removesuffix(".__init__")] = path
    return found


def import_graph(packages: dict[str, Path] = PACKAGES) -> dict[str, set[str]]:
    mods = modules(packages)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_bytes())
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        edges: set[str] = set()
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                while target and target not in mods:
                    target = target.rsplit(".", 1)[0] if "." in target else ""
                if target and target != name and not name.startswith(target + "."):
                    edges.add(target)
        graph[name] = edges
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    sys.setrecursionlimit(10_000)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
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
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles_in_either_package() -> None:
    cycles = strongly_connected(import_graph())
    assert cycles == [], "import cycles (imports inside functions count): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_library_never_imports_the_linter() -> None:
    graph = import_graph()
    offenders = {
        m: sorted(e for e in edges if e.startswith("trainwright_lint")) for m, edges in graph.items()
    }
    assert {m: e for m, e in offenders.items() if m.startswith("trainwright.") and e} == {}


def test_the_detector_sees_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    """The check itself can fail: two modules importing each other, one of them inside a function."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import helper\n")
    (pkg / "b.py").write_text("def helper():\n    from . import a\n    return a\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    assert strongly_connected(import_graph({"pkg": pkg})) == [["pkg.a", "pkg.b"]]
