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
    """``path`` imported by its dotted name, with its import root and the project root (and
    ``root/src``) first on ``sys.path``, as the project's own scripts and tests import it, and its own
    folder last. Call :func:`forget` with the same ``root`` once the program is done, whether this raised
    or not.

    Why its folder last: a module inside a package is imported by a project with that folder nowhere on
    the path, and a sibling named as an installed package would shadow it. transformer-vae's
    ``transformer_vae/sklearn.py`` says ``from sklearn import svm``; with its folder first on the path,
    ``sklearn`` was that module itself, half imported. Last, a sibling still answers an import that no
    installed package does (``from utils import pad`` of a module that was also run as a script)."""
    base, dotted = dotted_name(path, root)
    wanted = [str(base), str(root)]
    if (root / "src").is_dir():
        wanted.append(str(root / "src"))
    sys.path[:0] = [p for p in dict.fromkeys(wanted) if p not in sys.path]
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    _drop_leftovers(dotted.partition(".")[0])
    importlib.invalidate_caches()
    module = importlib.import_module(dotted)
    found = vars(module).get("__file__")
    if found is None or Path(found).resolve() != path.resolve():
        raise ImportError(
            f"`{dotted}` imports {found or 'a module with no file'}, not {path}: a package of that name "
            "on the path shadows the project's module"
        )
    return module


def _drop_leftovers(top: str) -> None:
    """Drop ``top`` and its submodules from ``sys.modules`` where they are not loaded from the current
    ``sys.path`` (a ``None`` entry, or a module of a project already forgotten), so ``top`` is found
    on the path again. Why: ``uclaml/SPPO``'s ``sppo/trainer.py`` is the module ``trainer``, and a
    ``trainer`` package another project left in ``sys.modules`` was returned in its place
    ("module 'trainer' has no attribute 'SPPOTrainer'"). A module loaded from the path (an installed
    package) stays: replacing it under other importers' feet would break them."""
    entries = {form + "/" for p in sys.path for form in (p or ".", str(Path(p or ".").resolve()))}
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        module = sys.modules.get(name)
        if module is None:
            sys.modules.pop(name, None)
            continue
        located = [p for p in _locations(module) if isinstance(p, str)]  # none: built in, kept
        if located and not any(_under(module, entry) for entry in entries):
            sys.modules.pop(name, None)


def _locations(module: ModuleType) -> list[object]:
    """Where ``module`` was loaded from: its ``__file__`` and ``__path__``. Read from its ``__dict__``:
    a lazy module's ``__getattr__`` would import on the way. A namespace package's ``__path__`` is
    read from its last computed list: iterating it recomputes it from the parent package, and raised
    ``KeyError`` once the parent was dropped (``nixietune.querygen`` without ``nixietune``), which
    stopped :func:`forget` half-way and left every later program's modules behind."""
    try:
        own = vars(module)
    except TypeError:
        return []
    locations: list[object] = [own.get("__file__")]
    path = own.get("__path__")
    if isinstance(path, (list, tuple)):
        locations += list(path)
    elif type(path).__name__ == "_NamespacePath":
        locations += list(getattr(path, "_path", []))
    return locations


def _under(module: ModuleType, prefix: str) -> bool:
    """Whether ``module`` was loaded from below ``prefix``."""
    return any(isinstance(p, str) and p.startswith(prefix) for p in _locations(module))


def forget(root: Path) -> None:
    """Drop the modules loaded from the project ``root`` and its ``sys.path`` entries, so the next
    program's same dotted names load from its own files."""
    top = str(root)
    prefixes = {top + "/", str(root.resolve()) + "/"}
    sys.path[:] = [p for p in sys.path if p != top and not p.startswith(tuple(prefixes))]
    for name, module in list(sys.modules.items()):
        if module is not None and any(_under(module, prefix) for prefix in prefixes):
            sys.modules.pop(name, None)
    importlib.invalidate_caches()
