"""What a project file says about a library's version: one :class:`Declared` per statement.

Readers also take a ``problems`` list: a statement they cannot parse (or a missing ``-r`` file) is
skipped and described there, so one bad line warns instead of stopping the lint run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from trainwright_lint.requirements.pep508 import RequirementSyntaxError, marker_applies, parse_requirement


@dataclass(frozen=True)
class Declared:
    """One statement of a version requirement (a dependency line, a lock entry) in one file.

    ``alternatives`` are PEP 440 specifier sets of which any one may hold (Poetry's ``||``); ``("",)``
    means the statement names no version. ``required`` is false in an extra, an optional group or a
    dev group; ``constraint`` marks a pip constraints file (``-c``), which narrows but does not require;
    ``exact`` marks a lock entry.
    """

    display: str
    alternatives: tuple[str, ...]
    file: Path
    required: bool = True
    constraint: bool = False
    exact: bool = False

    @property
    def versioned(self) -> bool:
        return all(self.alternatives)  # "" in any "or" branch admits every version


def declared_in(
    items: Iterable[object], path: Path, library: str, problems: list[str], where: str, required: bool
) -> list[Declared]:
    """The PEP 508 strings of one list (``[project] dependencies``, ``install_requires``, ...) that name
    ``library`` with a marker that applies here; a string that does not parse is described in ``problems``.
    Non-strings (``{include-group = ...}``), blank lines and comments are skipped."""
    found = []
    for item in items:
        if not isinstance(item, str) or not item.strip() or item.strip().startswith("#"):
            continue
        try:
            requirement = parse_requirement(item.strip(), library)
        except RequirementSyntaxError as exc:
            problems.append(f"{path.name}: {where}: {exc}; ignored")
            continue
        if requirement is not None and marker_applies(requirement.marker):
            found.append(Declared(requirement.specifier, (requirement.specifier,), path, required=required))
    return found
