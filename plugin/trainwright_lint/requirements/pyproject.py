"""``pyproject.toml``: PEP 621 ``[project]`` dependencies, PEP 735 ``[dependency-groups]`` and Poetry.

``[project] dependencies`` and Poetry's ``[tool.poetry.dependencies]`` are required; optional
dependencies (extras), dependency groups, Poetry groups and ``dev-dependencies``, and Poetry entries
with ``optional = true`` are not (they count only when nothing required names the library).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trainwright_lint.requirements.model import Declared, declared_in
from trainwright_lint.requirements.pep508 import (
    normalise,
)
from trainwright_lint.requirements.poetry import PoetryConstraintError, dependency_constraints, to_pep440


def read_pyproject(data: dict[str, Any], path: Path, library: str, problems: list[str]) -> list[Declared]:
    """Declarations of ``library`` in an already parsed ``pyproject.toml``."""
    table = data.get("project")
    project: dict[str, Any] = table if isinstance(table, dict) else {}
    found = _pep508(project.get("dependencies"), path, library, problems, "[project] dependencies", True)
    extras = project.get("optional-dependencies")
    for extra, items in extras.items() if isinstance(extras, dict) else ():
        where = f"[project.optional-dependencies] {extra}"
        found += _pep508(items, path, library, problems, where, False)
    groups = data.get("dependency-groups")
    for group, items in groups.items() if isinstance(groups, dict) else ():
        found += _pep508(items, path, library, problems, f"[dependency-groups] {group}", False)
    poetry = data.get("tool", {}).get("poetry") if isinstance(data.get("tool"), dict) else None
    if isinstance(poetry, dict):
        found += _poetry_table(poetry.get("dependencies"), path, library, problems, True)
        found += _poetry_table(poetry.get("dev-dependencies"), path, library, problems, False)
        poetry_groups = poetry.get("group")
        for group in poetry_groups.values() if isinstance(poetry_groups, dict) else ():
            if isinstance(group, dict):
                found += _poetry_table(group.get("dependencies"), path, library, problems, False)
    return found


def _pep508(
    items: Any, path: Path, library: str, problems: list[str], where: str, required: bool
) -> list[Declared]:
    return declared_in(items if isinstance(items, list) else (), path, library, problems, where, required)


def _poetry_table(
    table: Any, path: Path, library: str, problems: list[str], required: bool
) -> Iterable[Declared]:
    if not isinstance(table, dict):
        return []
    found = []
    for name, value in table.items():
        if normalise(name) != library:
            continue
        constraints = dependency_constraints(value)
        if constraints is None:
            continue  # git / path / url dependency: no version to read
        optional = isinstance(value, dict) and value.get("optional") is True
        try:
            # A list of constraints (one per Python version or platform) means any one of them applies.
            alternatives = tuple(branch for c in constraints for branch in to_pep440(c))
        except PoetryConstraintError as exc:
            problems.append(f"{path.name}: [tool.poetry] {name}: {exc}; ignored")
            continue
        display = " || ".join(constraints)
        found.append(Declared(display, alternatives, path, required=required and not optional))
    return found
