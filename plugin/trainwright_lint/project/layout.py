"""Where an import leads: Python's own search rules, applied to the files of a project.

Why not module names: a repository is rarely one clean package. ML repositories run scripts from
their folders (``python train/train.py`` puts ``train/`` first on ``sys.path``, so ``from trainer
import MyTrainer`` means ``train/trainer.py``), keep code under ``src/``, use folders without
``__init__.py`` (namespace packages), and often have the same module name in two folders. So a
module is identified by its file, and an import is resolved *from the importing file*, searching
the places Python would search, nearest first:

1. relative imports (``from ..base import X``): from the importing file's folder, exactly;
2. absolute imports: the importing file's own folder (the script folder), then each folder above it
   up to the project root (a package root is one of them), then ``<root>/src``.

A hit is a ``.py`` file, a package's ``__init__.py``, or a folder (a namespace package, which defines
no names itself but has submodules). Nothing is found for a name outside the project: the caller
then treats it as a library (transformers, TRL, torch, ...).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class ModuleLocation:
    """A module found in the project: ``path`` is its file (None for a namespace package) and
    ``directory`` the folder that holds its submodules (None for a plain module file)."""

    path: str | None
    directory: str | None


@lru_cache(maxsize=65536)
def _isfile(path: str) -> bool:
    return os.path.isfile(path)


@lru_cache(maxsize=65536)
def _isdir(path: str) -> bool:
    return os.path.isdir(path)


def clear_caches() -> None:
    """Forget file-system answers (tests create and delete files between runs)."""
    _isfile.cache_clear()
    _isdir.cache_clear()
    _search_dirs.cache_clear()


def locate_in(directory: str, parts: tuple[str, ...]) -> ModuleLocation | None:
    """The module ``a.b.c`` (``parts``) under ``directory``, if it exists there."""
    if not parts:
        return None
    base = os.path.join(directory, *parts)
    init = os.path.join(base, "__init__.py")
    if _isfile(init):
        return ModuleLocation(init, base)
    if _isfile(base + ".py"):
        return ModuleLocation(base + ".py", None)
    if _isdir(base) and all(p.isidentifier() for p in parts):
        return ModuleLocation(None, base)
    return None


_INSTALLED = frozenset({"site-packages", "dist-packages"})
# Always the installed library, never a project folder of that name: transformers' source sits next
# to a venv's project files (``.venv/lib/.../site-packages/transformers``), and its classes are what
# the catalogue describes.
LIBRARY_NAMES = frozenset({"transformers"})
# Libraries projects vendor a copy of inside one of their packages (``mypkg/trl/``). Python puts no
# package folder on ``sys.path``, so ``from trl import GRPOTrainer`` in ``mypkg/...`` means the installed
# TRL; only a ``trl`` folder on an import root (the project root, ``src/``, a script folder that is
# not a package) is the project's own.
VENDORED_NAMES = frozenset({"trl"})


@lru_cache(maxsize=4096)
def _search_dirs(file_dir: str, root: str) -> tuple[str, ...]:
    """The importing file's folder and the folders above it up to the project root, but never an
    installation folder (``site-packages``): imports that lead there are libraries."""
    dirs: list[str] = []
    current = file_dir
    inside = current == root or current.startswith(root + os.sep)
    while True:
        if os.path.basename(current) in _INSTALLED:
            break
        dirs.append(current)
        if not inside or current == root:
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    src = os.path.join(root, "src")
    if _isdir(src) and src not in dirs:
        dirs.append(src)
    if root not in dirs:
        dirs.append(root)
    return tuple(dirs)


class ImportRoots:
    """Resolves ``import``/``from`` statements of one project's files to project files."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)

    def search_dirs(self, importing_file: str) -> tuple[str, ...]:
        """Folders an absolute import of ``importing_file`` is looked up in, nearest first."""
        return _search_dirs(os.path.dirname(importing_file), self.root)

    def find_absolute(self, importing_file: str, dotted: str) -> ModuleLocation | None:
        parts = tuple(dotted.split("."))
        if parts[0] in LIBRARY_NAMES:
            return None
        vendorable = parts[0] in VENDORED_NAMES
        for directory in self.search_dirs(importing_file):
            if vendorable and _isfile(os.path.join(directory, "__init__.py")):
                continue  # a package folder is not an import root
            found = locate_in(directory, parts)
            if found is not None:
                return found
        return None

    def find_relative(self, importing_file: str, level: int, dotted: str | None) -> ModuleLocation | None:
        """``from <level dots><dotted> import ...``; ``dotted`` None means the package itself."""
        directory = os.path.dirname(importing_file)
        for _ in range(level - 1):
            parent = os.path.dirname(directory)
            if parent == directory:
                return None
            directory = parent
        if not dotted:
            init = os.path.join(directory, "__init__.py")
            return ModuleLocation(init if _isfile(init) else None, directory)
        return locate_in(directory, tuple(dotted.split(".")))

    def submodule(self, location: ModuleLocation, name: str) -> ModuleLocation | None:
        """``pkg.name`` when ``pkg`` is a package or namespace folder."""
        if location.directory is None or not name.isidentifier():
            return None
        return locate_in(location.directory, (name,))


def dotted_name_of(path: str, root: str) -> str:
    """A readable dotted name for a project file (``src/pkg/mod.py`` -> ``pkg.mod``): for messages
    only; identity is the path."""
    rel = os.path.relpath(path, root)
    if rel.startswith(".."):
        rel = os.path.basename(path)
    parts = rel[:-3].split(os.sep) if rel.endswith(".py") else rel.split(os.sep)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    return ".".join(parts) or os.path.basename(os.path.dirname(path))
