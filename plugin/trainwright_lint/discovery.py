"""Which files ``trainwright lint PATHS`` looks at: ``*.py`` under the paths, minus ``.gitignore``-style
excludes (every ``.gitignore`` from the project root down, plus ``exclude`` from the config) and the
usual tool directories. A file named explicitly on the command line is always linted, as in ruff;
with ``force_exclude`` (``--force-exclude``, what the pre-commit hook passes, since pre-commit names
every changed file) a config ``exclude`` applies to named files too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ALWAYS_SKIPPED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
        ".nox",
        ".eggs",
        "node_modules",
        "build",
        "dist",
        ".hypothesis",
    }
)


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    base: str  # directory (posix, relative to the root) the pattern file lives in; "" for the root


def _translate(glob: str) -> str:
    """gitignore glob -> regex over a posix path relative to the pattern's base."""
    anchored = "/" in glob.rstrip("/")
    glob = glob.lstrip("/")
    i, out = 0, []
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                out.append(glob[i : end + 1].replace("[!", "[^"))
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    return f"^{prefix}{body}(?:/.*)?$"


def parse_patterns(lines: Iterable[str], base: str = "") -> list[Pattern]:
    patterns = []
    for raw in lines:
        line = raw.rstrip("\n").rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        line = line.removeprefix("\\")
        dir_only = line.endswith("/")
        patterns.append(Pattern(re.compile(_translate(line.rstrip("/") or line)), negate, dir_only, base))
    return patterns


def is_ignored(rel: str, is_dir: bool, patterns: Iterable[Pattern]) -> bool:
    """Last matching pattern wins (gitignore semantics)."""
    ignored = False
    for p in patterns:
        if p.base:
            if not rel.startswith(p.base + "/"):
                continue
            sub = rel[len(p.base) + 1 :]
        else:
            sub = rel
        if p.dir_only and not is_dir:
            # "build/" also excludes files below a directory named build.
            parts = sub.split("/")[:-1]
            if not any(p.regex.match("/".join(parts[: i + 1])) for i in range(len(parts))):
                continue
        elif not p.regex.match(sub):
            continue
        ignored = not p.negate
    return ignored


def _gitignore(directory: Path, root: Path) -> list[Pattern]:
    path = directory / ".gitignore"
    if not path.is_file():
        return []
    base = "" if directory == root else directory.relative_to(root).as_posix()
    try:
        return parse_patterns(path.read_text(encoding="utf-8", errors="replace").splitlines(), base)
    except OSError:
        return []


def iter_python_files(
    paths: Iterable[str | Path], root: Path, exclude: Iterable[str] = (), force_exclude: bool = False
) -> Iterator[Path]:
    """Python files under ``paths`` in a stable order, honouring .gitignore files and ``exclude``."""
    root = root.resolve()
    config_patterns = parse_patterns(exclude)
    seen: set[Path] = set()
    for given in paths:
        start = Path(given)
        resolved = start.resolve()
        rel_of = _rel_fn(root)
        if resolved.is_file():
            excluded = force_exclude and is_ignored(rel_of(resolved), False, config_patterns)
            if resolved not in seen and not excluded:
                seen.add(resolved)
                yield start
            continue
        if not resolved.is_dir():
            raise FileNotFoundError(f"{given}: no such file or directory")
        inherited: list[Pattern] = list(config_patterns)
        # .gitignore files between the root and the starting directory apply too.
        if resolved == root or root in resolved.parents:
            chain = (
                [root, *reversed([p for p in resolved.parents if root in p.parents])]
                if resolved != root
                else []
            )
            for d in chain:
                inherited += _gitignore(d, root)
        yield from _walk(start, resolved, root, inherited, seen)


def _rel_fn(root: Path):  # type: ignore[no-untyped-def]
    def rel(p: Path) -> str:
        try:
            return p.relative_to(root).as_posix()
        except ValueError:
            return p.as_posix().lstrip("/")

    return rel


def _walk(
    shown: Path, resolved: Path, root: Path, patterns: list[Pattern], seen: set[Path]
) -> Iterator[Path]:
    rel = _rel_fn(root)
    patterns = patterns + _gitignore(resolved, root)
    try:
        entries = sorted(os.scandir(resolved), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = resolved / entry.name
        if entry.is_dir(follow_symlinks=False):
            if entry.name in ALWAYS_SKIPPED or is_ignored(rel(path), True, patterns):
                continue
            yield from _walk(shown / entry.name, path, root, patterns, seen)
        elif entry.name.endswith(".py") and entry.is_file():
            if path in seen or is_ignored(rel(path), False, patterns):
                continue
            seen.add(path)
            yield shown / entry.name
