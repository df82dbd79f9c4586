"""tw201 fix (unsafe): the move to a callback, written by ``rules/_move_cst.py`` (shared with TW20x)."""

from __future__ import annotations

from trainwright_lint.rules._move_cst import Fixer

__all__ = ["Fixer"]
