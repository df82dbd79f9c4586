"""No function over 60 lines in ``src/`` or ``plugin/``: a longer one is split into named steps.

Measured with ``ast`` from the ``def`` line to the function's last line (docstring included, decorators not).
Tests and scripts are not walked: a test reads best as one story from setup to assertion, and a script's
``main`` is argument handling; neither is code other code calls.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 60
WALKED = ("src", "plugin")


def long_functions(roots: tuple[str, ...] = WALKED, limit: int = LIMIT, base: Path = ROOT) -> dict[str, int]:
    """``"path:qualified.name" -> lines`` for every function or method over ``limit`` lines under ``roots``."""
    found: dict[str, int] = {}
    for root in roots:
        for path in sorted((base / root).rglob("*.py")):
            relative = path.relative_to(base).as_posix()
            _visit(ast.parse(path.read_bytes()), relative, "", limit, found)
    return found


def _visit(node: ast.AST, path: str, prefix: str, limit: int, found: dict[str, int]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{child.name}"
            if not isinstance(child, ast.ClassDef):
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > limit:
                    found[f"{path}:{name}"] = lines
            _visit(child, path, f"{name}.", limit, found)
        else:
            _visit(child, path, prefix, limit, found)


def test_no_function_over_sixty_lines() -> None:
    """No exceptions: every function in ``src/`` and ``plugin/`` fits in the limit (issue 36)."""
    over = long_functions()
    assert over == {}, f"functions over {LIMIT} lines (split them into named steps): {over}"


def test_the_walk_finds_a_long_function(tmp_path) -> None:
    """The measure itself: a 61-line function is reported with its class, a 60-line one is not."""
    body = "\n".join(f"        x{i} = {i}" for i in range(59))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        f"class C:\n    def long(self):\n{body}\n        return x0\n\n    def short(self):\n{body}\n"
    )
    assert long_functions(("pkg",), base=tmp_path) == {"pkg/m.py:C.long": 61}
