"""Poetry's version constraints (``^4.44``, ``~4.44.1``, ``4.45.*``, ``>=4.44 <4.46``, ``a || b``) -> PEP 440.

Poetry writes dependencies as a table (``transformers = "^4.44"``, ``{ version = "^4.44", extras = [...] }``
or a list of such tables for per-Python constraints), and its constraint language differs from PEP 440:
a bare version is an exact pin, ``^`` allows changes that do not touch the leftmost non-zero part, ``~``
allows patch changes, spaces separate clauses like commas, and ``||`` is "or". Each "or" branch becomes
one PEP 440 specifier set.
"""

from __future__ import annotations

import re
from typing import Any

_RELEASE = re.compile(r"^v?(\d+(?:\.\d+)*)(.*)$")


class PoetryConstraintError(ValueError):
    """A Poetry constraint this translation does not understand; the message quotes it."""


def _bump(parts: list[int], index: int) -> str:
    return ".".join(str(p) for p in [*parts[:index], parts[index] + 1])


def _range(op: str, version: str, constraint: str) -> str:
    match = _RELEASE.match(version)
    if match is None:
        raise PoetryConstraintError(f"{constraint!r}: {op}{version} is not a version")
    parts = [int(p) for p in match[1].split(".")]
    if op == "^":
        nonzero = [i for i, p in enumerate(parts) if p]
        index = nonzero[0] if nonzero else len(parts) - 1
    else:  # "~": patch-level changes, or minor ones when only the major is given
        index = 0 if len(parts) == 1 else 1
    return f">={version},<{_bump(parts, index)}"


def _clause(clause: str, constraint: str) -> str:
    clause = clause.strip()
    if clause in ("*", ""):
        return ""
    if clause.startswith("~="):
        return clause
    if clause[0] in "^~":
        return _range(clause[0], clause[1:].strip(), constraint)
    if clause[0] in "<>!=":
        if clause.startswith("=") and not clause.startswith("=="):
            clause = "=" + clause  # Poetry accepts "=1.2" for "==1.2"
        return re.sub(r"\s+", "", clause)
    return f"=={clause}"  # a bare version (or X.Y.*) is an exact pin in Poetry


def to_pep440(constraint: str) -> tuple[str, ...]:
    """The PEP 440 specifier set of each ``||`` branch of a Poetry constraint ("" means any version)."""
    branches = []
    for branch in re.split(r"\s*\|\|?\s*", constraint.strip()):
        # Clauses are separated by commas or by spaces ("">=1.2 <1.5"); an operator may be followed by a
        # space (">= 1.2"), so glue it back first.
        glued = re.sub(r"(\^|~=|~|[<>!=]=?|==)\s+", r"\1", branch)
        clauses = [c for c in re.split(r"[,\s]+", glued) if c]
        branches.append(",".join(p for p in (_clause(c, constraint) for c in clauses) if p))
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    for branch in branches:
        try:
            SpecifierSet(branch)
        except InvalidSpecifier as exc:
            raise PoetryConstraintError(
                f"{constraint!r} is not a Poetry version constraint ({exc})"
            ) from None
    return tuple(branches)


def dependency_constraints(value: Any) -> tuple[str, ...] | None:
    """Poetry constraint strings of one dependency entry; ``None`` when it has no version (git, path)."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, dict):
        version = value.get("version")
        return (version,) if isinstance(version, str) else None
    if isinstance(value, list):  # multiple-constraint form: one table per Python/platform, any may apply
        found = [c for item in value for c in (dependency_constraints(item) or ())]
        return tuple(found) or None
    return None
