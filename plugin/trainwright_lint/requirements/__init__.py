"""The project's own requirement on a library (transformers, TRL), read from its files.

Sources, in precedence order; the first that states a version wins and the rest are not read:

1. a lock file at the project root: ``uv.lock``, ``poetry.lock``, ``pdm.lock``, ``pylock.toml``;
2. ``pyproject.toml``: ``[project]`` dependencies and optional dependencies, ``[dependency-groups]``,
   Poetry's ``[tool.poetry.dependencies]``, groups and dev-dependencies;
3. ``setup.cfg``: ``[options] install_requires`` (``file:`` too) and ``[options.extras_require]``;
4. ``setup.py``: a static ``install_requires`` / ``extras_require`` (read with ``ast``, never run);
5. requirements files: ``requirements.txt``, other ``requirements*.txt``, ``requirements/*.txt``,
   ``constraints*.txt``, each with its ``-r``/``-c`` includes (the first file that states one wins).

Why a lock first: it pins the release that is actually installed, so it is the most precise answer.
Why metadata before requirements files: the metadata is the one declaration that pip, uv and Poetry
install the project from and that every user of it gets, while requirements files are per environment
(dev, docs, CI), often several and disagreeing. A project that wants a pinned requirements file (pip-
compile output) checked instead sets ``[tool.trainwright] transformers-version``.

Within one source, required dependencies beat optional ones (extras, groups), which count only when
nothing required states a version; the statements used are intersected (pip installs a release that
satisfies all of them, and a ``-c`` constraint narrows that). A statement without a version
(``transformers``) says nothing and is skipped. Markers are evaluated leniently (see
:func:`~trainwright_lint.requirements.pep508.marker_applies`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from trainwright_lint.requirements.locks import LOCK_FILES, read_lock
from trainwright_lint.requirements.model import Declared
from trainwright_lint.requirements.pep508 import normalise
from trainwright_lint.requirements.pyproject import read_pyproject
from trainwright_lint.requirements.reqfiles import candidate_files, read_requirements_file
from trainwright_lint.requirements.setuptools import read_setup_cfg, read_setup_py

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib
    except ImportError:  # pragma: no cover
        tomllib = None  # type: ignore[assignment]

SOURCES_TEXT = "a lock file, pyproject.toml, setup.cfg, setup.py or requirements*.txt"


@dataclass(frozen=True)
class Declaration:
    """What the project states about ``library``: ``alternatives`` are PEP 440 specifier sets (any may
    hold), ``display`` is the statement as written, ``source`` the file(s) relative to the root."""

    library: str
    display: str
    alternatives: tuple[str, ...]
    source: str
    exact: bool


def find_declaration(root: Path, library: str, problems: list[str]) -> Declaration | None:
    """The declared requirement on ``library`` in the project at ``root`` (``None`` when none states a
    version). Statements that cannot be parsed are skipped and described in ``problems``, and so is a
    whole file nested too deeply for the parsers (a 5,000-level TOML array, a 100,000-term expression
    in ``setup.py``: ``tomllib`` and ``ast`` recurse per level), which ended the run in a traceback."""
    library = normalise(library)
    for name, read in _sources(root, library, problems):
        try:
            declared = read()
        except (RecursionError, MemoryError) as exc:
            problems.append(f"{name}: cannot read: nested too deeply ({exc.__class__.__name__}); ignored")
            continue
        declaration = _combine(declared, library, root, problems)
        if declaration is not None:
            return declaration
    return None


Source = tuple[str, Callable[[], list[Declared]]]  # a file's name for messages, and its reader


def _sources(root: Path, library: str, problems: list[str]) -> list[Source]:
    sources: list[Source] = []
    for name in LOCK_FILES:
        if (root / name).is_file():
            sources.append((name, partial(read_lock, root / name, library, problems)))
    if (root / "pyproject.toml").is_file():
        pyproject = root / "pyproject.toml"
        sources.append(("pyproject.toml", lambda: _read_pyproject(pyproject, library, problems)))
    if (root / "setup.cfg").is_file():
        sources.append(("setup.cfg", lambda: read_setup_cfg(root / "setup.cfg", library, root, problems)))
    if (root / "setup.py").is_file():
        sources.append(("setup.py", lambda: read_setup_py(root / "setup.py", library, problems)))
    for path in candidate_files(root):
        constraint = path.name.startswith("constraints")
        reader = partial(read_requirements_file, path, library, root, problems, constraint=constraint)
        sources.append((_relative(path, root), reader))
    return sources


def _read_pyproject(path: Path, library: str, problems: list[str]) -> list[Declared]:
    if tomllib is None:  # pragma: no cover - Python 3.10 without tomli
        problems.append("pyproject.toml: reading it on Python 3.10 needs tomli (pip install tomli)")
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        problems.append(f"pyproject.toml: cannot parse: {exc}")
        return []
    return read_pyproject(data, path, library, problems)


def _combine(declared: list[Declared], library: str, root: Path, problems: list[str]) -> Declaration | None:
    versioned = [d for d in declared if d.versioned]
    if not versioned:
        return None
    # Here only: ``ranges`` brings ``packaging`` (6 ms), which a project that states no version never needs.
    from trainwright_lint.requirements.ranges import TooManyAlternatives, combine

    required = [d for d in versioned if d.required and not d.constraint]
    optional = [d for d in versioned if not d.required and not d.constraint]
    chosen = (required or optional) + [d for d in versioned if d.constraint]
    files = dict.fromkeys(_relative(d.file, root) for d in chosen)
    try:
        alternatives = combine([d.alternatives for d in chosen])
    except TooManyAlternatives as exc:
        problems.append(f"{', '.join(files)}: {exc}; not used")
        return None
    shown: list[str] = []
    for d in chosen:
        text = d.display if len(d.alternatives) == 1 or len(chosen) == 1 else f"({d.display})"
        if text not in shown:
            shown.append(text)
    return Declaration(
        library=library,
        display=",".join(shown),
        alternatives=alternatives,
        source=", ".join(files),
        exact=all(d.exact for d in chosen),
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


__all__ = ["SOURCES_TEXT", "Declaration", "Declared", "find_declaration"]
