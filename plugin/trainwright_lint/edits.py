"""What every rule's edit description shares: plain picklable data the fixer is asked to apply.

A rule attaches one of these to its finding (``Finding.fix``): the finding carries everything its fix
needs, so the fixer never re-classifies a class. Each fixable rule defines its own edit type next to
its planner (``rules/twNNN_<name>.py``) and the libcst transform that applies it in a companion module
(``rules/twNNN_<name>_fix.py``, named by the rule's ``fix_module``: imported only by ``fixes/``, so lint
never imports libcst). Positions are the finding's 1-based line of the ``def`` / call / attribute;
the transforms find the node by that line and its shape, never by column (ast counts columns in UTF-8
bytes, libcst in characters).
"""

from __future__ import annotations

from collections.abc import Iterable


class Edit:
    """Base of the rules' edit types (frozen dataclasses with an ``unsafe: bool`` field): how the
    output formats and the fixer recognise a fix the fixer applies."""

    __slots__ = ()
    unsafe: bool
    line: int  # the finding's line the edit is addressed by (the fixer's segments are chosen by it)

    def describe(self) -> str:  # pragma: no cover - every edit type defines it
        """One sentence saying what the fix changes (ruff's fix ``message``)."""
        raise NotImplementedError


def quoted(names: Iterable[str]) -> str:
    """```a`, `b``: names as a fix's description lists them."""
    return ", ".join(f"`{n}`" for n in names)
