"""Module attributes imported on first access (PEP 562 ``__getattr__``).

Why: ``import trainwright`` must stay cheap and work without torch (the linter imports the catalogue),
and a missing ``train`` extra should surface as one clear ``ImportError`` when a trainer is first used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that returns ``exports[name]``'s attribute ``name``
    (``exports`` maps a public name to the module defining it), importing that module on first use."""

    def __getattr__(name: str) -> Any:
        module_name = exports.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module_name), name)

    return __getattr__
