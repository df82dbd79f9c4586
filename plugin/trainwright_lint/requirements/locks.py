"""Lock files: ``uv.lock``, ``poetry.lock``, ``pdm.lock`` and ``pylock.toml`` (PEP 751).

A lock pins what is actually installed, so each locked version of the library becomes an exact
``==`` pin (a lock may hold several for different Pythons or platforms: any of them may be in use).
All four are TOML with one ``[[package]]`` (``[[packages]]`` in pylock.toml) table per package whose
first keys are ``name`` and ``version``. Why not parse the whole file: a lock of a torch project runs
to megabytes (``tomllib`` takes a good fraction of a second on those, on every commit); only the
tables whose ``name`` line is the library are parsed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from trainwright_lint.requirements.model import Declared
from trainwright_lint.requirements.pep508 import normalise

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib
    except ImportError:  # pragma: no cover
        tomllib = None  # type: ignore[assignment]

LOCK_FILES = ("uv.lock", "poetry.lock", "pdm.lock", "pylock.toml")
_NAME = re.compile(r'^[ \t]*name\s*=\s*"([^"]+)"', re.MULTILINE)
_SUBTABLE = re.compile(r"\n[ \t]*\[")


def read_lock(path: Path, library: str, problems: list[str]) -> list[Declared]:
    key = "packages" if path.name == "pylock.toml" else "package"
    header = re.compile(rf"^[ \t]*\[\[{key}\]\][ \t]*(?:#.*)?$", re.MULTILINE)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path.name}: cannot read: {exc}")
        return []
    if library not in text.lower():
        return []
    versions: list[str] = []
    for chunk in header.split(text.replace("\r\n", "\n"))[1:]:
        first = _NAME.search(chunk)
        if first is None or normalise(first[1]) != library:
            continue
        table = _SUBTABLE.split(chunk, 1)[0]  # the package's own keys, before its sub-tables
        if tomllib is None:  # pragma: no cover - Python 3.10 without tomli
            match = re.search(r'^[ \t]*version\s*=\s*"([^"]+)"', table, re.MULTILINE)
            version = match[1] if match else None
        else:
            try:
                version = tomllib.loads(table).get("version")
            except tomllib.TOMLDecodeError as exc:
                problems.append(f"{path.name}: the {library} entry is not valid TOML ({exc}); ignored")
                continue
        if isinstance(version, str) and version not in versions:
            versions.append(version)
    if not versions:
        return []
    display = " || ".join(versions)
    return [Declared(display, tuple(f"=={v}" for v in versions), path, exact=True)]
