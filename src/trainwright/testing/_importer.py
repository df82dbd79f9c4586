"""Import a user's module as its project imports it: inside its package (child side).

Why: a Trainer subclass in ``mypkg/trainer.py`` that says ``from .utils import pad`` or
``from mypkg.data import Collator`` only imports as ``mypkg.trainer`` with the project's root on
``sys.path``. Loaded alone from its file it fails before training starts, alike before and after a
fix, and the fix is never judged. So a module given with its project ``root`` is imported by its
dotted name: the chain of folders holding ``__init__.py`` above it (or, for a module using relative
imports in folders without one, its path below the root as a namespace package).

The oracle's child trains several programs in one interpreter, and the original and the fixed copy
of a project have the same dotted names: :func:`forget` drops every module loaded from a project's
root (and the ``sys.path`` entries added for it) before the next program is imported.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

_RELATIVE = re.compile(r"^\s*from\s+\.", re.MULTILINE)


def dotted_name(path: Path, root: Path) -> tuple[Path, str]:
    """``(import root, dotted name)`` of the module file ``path`` inside the project ``root``."""
    parts = [path.stem]
    folder = path.parent
    while folder != root and (folder / "__init__.py").is_file() and folder != folder.parent:
        parts.insert(0, folder.name)
        folder = folder.parent
    if len(parts) == 1 and _RELATIVE.search(path.read_text(errors="replace")):
        for base in (root / "src", root):  # a namespace package: relative imports need a parent
            if base.is_dir() and path.is_relative_to(base) and base != path.parent:
                names = list(path.relative_to(base).with_suffix("").parts)
                if all(n.isidentifier() for n in names):
                    return base, ".".join(names)
    return folder, ".".join(parts)


def import_file(path: Path, name: str) -> ModuleType:
    """``path`` loaded alone as module ``name``, its folder on ``sys.path`` (as ``python path`` has)."""
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def import_in_project(path: Path, root: Path) -> ModuleType:
    """``path`` imported by its dotted name, with its import root, its own folder and the project root
    (and ``root/src``) on ``sys.path``, as the project's own scripts and tests import it. Call
    :func:`forget` with the same ``root`` once the program is done, whether this raised or not."""
    base, dotted = dotted_name(path, root)
    wanted = [str(base), str(path.parent), str(root)]
    if (root / "src").is_dir():
        wanted.append(str(root / "src"))
    sys.path[:0] = [p for p in dict.fromkeys(wanted) if p not in sys.path]
    importlib.invalidate_caches()
    return importlib.import_module(dotted)


def _under(module: ModuleType, prefix: str) -> bool:
    """Whether ``module`` was loaded from below ``prefix``. Read from its ``__dict__``: a lazy module's
    ``__getattr__`` would import on the way, and ``__path__`` is not always a list of strings."""
    try:
        own = vars(module)
    except TypeError:
        return False
    locations: list[object] = [own.get("__file__")]
    path = own.get("__path__")
    if isinstance(path, (list, tuple)) or type(path).__name__ == "_NamespacePath":
        locations += list(path)  # type: ignore[arg-type]  # a _NamespacePath is iterable, not typed so
    return any(isinstance(p, str) and p.startswith(prefix) for p in locations)


def forget(root: Path) -> None:
    """Drop the modules loaded from the project ``root`` and its ``sys.path`` entries, so the next
    program's same dotted names load from its own files."""
    top = str(root)
    prefixes = {top + "/", str(root.resolve()) + "/"}
    sys.path[:] = [p for p in sys.path if p != top and not p.startswith(tuple(prefixes))]
    for name, module in list(sys.modules.items()):
        if module is not None and any(_under(module, prefix) for prefix in prefixes):
            del sys.modules[name]
    importlib.invalidate_caches()
