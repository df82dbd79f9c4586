"""setuptools metadata: ``setup.cfg`` (``install_requires``, ``extras_require``) and a static ``setup.py``.

``setup.py`` is read with :mod:`ast`, never executed (running a project's setup script from a linter
would run arbitrary code, and it usually needs the project's build dependencies): a keyword of the
``setup(...)`` call counts when it is a list/tuple of string literals, a name assigned such a list at
module level, or a ``+`` of those; for ``extras_require``, a dict literal of such lists. Anything
computed (read from a file, built in a loop) is not seen, and the next source in the order is used.
"""

from __future__ import annotations

import ast
from pathlib import Path

from trainwright_lint.requirements.model import Declared, declared_in
from trainwright_lint.requirements.reqfiles import read_requirements_file


def read_setup_cfg(path: Path, library: str, root: Path, problems: list[str]) -> list[Declared]:
    import configparser  # only for a project that has a setup.cfg: most lint runs never need it

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as exc:
        problems.append(f"{path.name}: cannot parse: {exc}")
        return []
    found: list[Declared] = []
    if parser.has_option("options", "install_requires"):
        value = parser.get("options", "install_requires")
        if value.strip().startswith("file:"):  # install_requires = file: requirements.txt
            for name in value.strip()[5:].replace(",", " ").split():
                found += read_requirements_file(path.parent / name, library, root, problems)
        else:
            found += declared_in(value.splitlines(), path, library, problems, "install_requires", True)
    if parser.has_section("options.extras_require"):
        for extra, value in parser.items("options.extras_require"):
            found += declared_in(
                value.splitlines(), path, library, problems, f"extras_require {extra}", False
            )
    return found


def read_setup_py(path: Path, library: str, problems: list[str]) -> list[Declared]:
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError) as exc:
        problems.append(f"{path.name}: cannot parse: {exc}")
        return []
    names = _module_assignments(tree)
    found: list[Declared] = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and _callee(call.func) == "setup"):
            continue
        for keyword in call.keywords:
            if keyword.arg == "install_requires":
                strings = _strings(keyword.value, names) or []
                found += declared_in(strings, path, library, problems, "install_requires", True)
            elif keyword.arg == "extras_require":
                for extra, strings in _extras(keyword.value, names):
                    found += declared_in(strings, path, library, problems, f"extras_require {extra}", False)
    return found


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):  # setuptools.setup(...)
        return func.attr
    return None


def _module_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """``NAME = <expr>`` at module level (the last assignment wins, as it would at run time)."""
    names: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            names[node.target.id] = node.value
    return names


def _strings(node: ast.expr, names: dict[str, ast.expr], depth: int = 0) -> list[str] | None:
    """The string literals of a static list expression; ``None`` when it is computed."""
    if depth > 10:
        return None
    if isinstance(node, ast.Name) and node.id in names:
        return _strings(names[node.id], names, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple)):
        out = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return out if len(out) == len(node.elts) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _strings(node.left, names, depth + 1), _strings(node.right, names, depth + 1)
        return None if left is None or right is None else left + right
    return None


def _extras(node: ast.expr, names: dict[str, ast.expr]) -> list[tuple[str, list[str]]]:
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if not isinstance(node, ast.Dict):
        return []
    out = []
    for key, value in zip(node.keys, node.values):
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            strings = _strings(value, names)
            if strings is not None:
                out.append((key.value, strings))
    return out
