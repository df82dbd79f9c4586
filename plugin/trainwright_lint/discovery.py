"""Which files ``trainwright lint PATHS`` looks at: ``*.py`` under the paths, minus ``.gitignore``-style
excludes (every ``.gitignore`` from the project root down, plus ``exclude`` from the config) and the
usual tool directories. A file named explicitly on the command line is always linted, as in ruff;
with ``force_exclude`` (``--force-exclude``, what the pre-commit hook passes, since pre-commit names
every changed file) a config ``exclude`` applies to named files too.

Also where a lint run's project is (:func:`find_project_root`, :func:`config_start`) and, as ruff does,
warnings when the given paths hold no Python file or name excluded paths (:func:`discovery_warnings`).
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
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
    """One gitignore / exclude line, compiled once: discovery tests every path against every pattern."""

    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    base: str  # directory (posix, relative to the root) the pattern file lives in; "" for the root
    text: str = field(default="", compare=False)  # as written, for messages


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


#: what a pattern git can never match compiles to (``[z-a]``: git's wildmatch matches nothing with it)
_NEVER = re.compile(r"(?!)")


def parse_patterns(lines: Iterable[str], base: str = "", *, strict: bool = False) -> list[Pattern]:
    """``lines`` of a ``.gitignore`` (or the ``exclude`` setting) compiled. A line no path can match
    (a reversed range ``[z-a]``, a trailing backslash) matches nothing, as in git; with ``strict`` (the
    user's own ``exclude`` setting) it is a ``ValueError`` naming the pattern instead."""
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
        try:
            regex = re.compile(_translate(line.rstrip("/") or line))
        except re.error as exc:
            if strict:
                raise ValueError(
                    f'[tool.trainwright] exclude "{raw.strip()}": not a valid pattern ({exc.msg}); '
                    "write ranges low to high, e.g. [a-z]"
                ) from None
            regex = _NEVER
        patterns.append(Pattern(regex, negate, dir_only, base, raw.strip()))
    return patterns


def is_ignored(rel: str, is_dir: bool, patterns: Iterable[Pattern]) -> bool:
    """Last matching pattern wins (gitignore semantics)."""
    return deciding_pattern(rel, is_dir, patterns) is not None


def deciding_pattern(rel: str, is_dir: bool, patterns: Iterable[Pattern]) -> Pattern | None:
    """The pattern that ignores ``rel`` (the last match, when it is not a ``!`` one), else ``None``."""
    ignored: Pattern | None = None
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
        ignored = None if p.negate else p
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
    config_patterns = parse_patterns(exclude, strict=True)
    seen: set[Path] = set()
    for given in paths:
        start = Path(given)
        resolved = real_path(start)
        rel_of = _rel_fn(root)
        if _is_looping_link(resolved):  # named, so linted: reported as a file that cannot be read
            if resolved not in seen:
                seen.add(resolved)
                yield start
            continue
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


def _rel_fn(root: Path) -> Callable[[Path], str]:
    def rel(p: Path) -> str:
        try:
            return p.relative_to(root).as_posix()
        except ValueError:
            return p.as_posix().lstrip("/")

    return rel


def real_path(path: str | Path) -> Path:
    """``path`` with links resolved, as ``Path.resolve`` does, but a link that loops stays as it is
    instead of raising ``RuntimeError`` (Python 3.11): discovery reports such a file, never crashes."""
    return Path(os.path.realpath(path))


def real_paths(paths: Iterable[str]) -> list[str]:
    """``os.path.realpath`` of each of ``paths``, each folder resolved once: a file that is not a link
    is its folder's real path joined with its name, which is what ``realpath`` finds too, after one
    ``lstat`` per folder of the path for every file (a tenth of a lint's file-system time on TRL)."""
    if os.name != "posix":  # pragma: no cover - Windows resolves junctions and drives its own way
        return [os.path.realpath(p) for p in paths]
    folders: dict[str, str] = {}
    out = []
    for path in paths:
        head, name = os.path.split(path)
        if name in ("", ".", "..") or os.path.islink(path):
            out.append(os.path.realpath(path))
            continue
        folder = folders.get(head)
        if folder is None:
            folder = folders[head] = os.path.realpath(head)
        out.append(os.path.join(folder, name))
    return out


def _is_looping_link(path: Path) -> bool:
    """A symbolic link whose resolution loops (``a.py -> a.py``): ``stat`` says ``ELOOP``."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _is_python_file(entry: os.DirEntry[str]) -> bool:
    """A ``*.py`` regular file, or a link looping into itself: that one is yielded so that the run
    reports it (TW000, "cannot read file (Too many levels of symbolic links)"), as it reports any
    file it cannot read; a dangling link is not a file and is skipped."""
    if not entry.name.endswith(".py"):
        return False
    try:
        return entry.is_file()
    except OSError as exc:
        return exc.errno == errno.ELOOP


def _walk(
    shown: Path, resolved: Path, root: Path, patterns: list[Pattern], seen: set[Path]
) -> Iterator[Path]:
    """Depth-first, by name, with an explicit stack: trees thousands of folders deep must not
    exhaust the interpreter's recursion limit (a 1,500-level tree raised ``RecursionError``)."""
    rel = _rel_fn(root)
    stack: list[Iterator[tuple[Path, Path, list[Pattern], os.DirEntry[str]]]] = [
        _entries(shown, resolved, root, patterns)
    ]
    while stack:
        item = next(stack[-1], None)
        if item is None:
            stack.pop()
            continue
        folder_shown, folder, folder_patterns, entry = item
        path = folder / entry.name
        if entry.is_dir(follow_symlinks=False):
            if entry.name in ALWAYS_SKIPPED or is_ignored(rel(path), True, folder_patterns):
                continue
            stack.append(_entries(folder_shown / entry.name, path, root, folder_patterns))
        elif _is_python_file(entry):
            if path in seen or is_ignored(rel(path), False, folder_patterns):
                continue
            seen.add(path)
            yield folder_shown / entry.name


def _entries(
    shown: Path, resolved: Path, root: Path, patterns: list[Pattern]
) -> Iterator[tuple[Path, Path, list[Pattern], os.DirEntry[str]]]:
    """One folder's entries by name, each with the folder and the patterns that apply in it."""
    patterns = patterns + _gitignore(resolved, root)
    try:
        entries = sorted(os.scandir(resolved), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        yield shown, resolved, patterns, entry


# ------------------------------------------------------------------------------------ project layout

PROJECT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def find_project_root(start: Path) -> Path | None:
    """The directory of the nearest ``pyproject.toml``, ``setup.cfg``, ``setup.py`` or ``.git`` at or
    above ``start`` (``None`` when there is none: callers then use ``start`` itself): where the
    project's requirements are read. Not cached: files appear between calls in one process (the
    flake8 plugin caches its answer per directory instead)."""
    start = real_path(start)
    directory = start.parent if start.is_file() else start
    for candidate in (directory, *directory.parents):
        if any((candidate / marker).exists() for marker in PROJECT_MARKERS):
            return candidate
    return None


def config_start(paths: Sequence[str | Path], cwd: Path | None = None) -> Path:
    """Where to look for the configuration and the project root of a run over ``paths``.

    The working directory when every path is inside its project (pre-commit runs at the repository
    root and names changed files: the answer must not depend on which files changed), else the
    deepest directory common to the paths (``trainwright lint ../other-project`` reads that project).
    """
    cwd = (cwd or Path.cwd()).resolve()
    resolved = [real_path(p) for p in paths] or [cwd]
    home = find_project_root(cwd)
    if home is not None and all(p == home or home in p.parents for p in resolved):
        return cwd
    dirs = [p if p.is_dir() else p.parent for p in resolved]
    return Path(os.path.commonpath([str(d) for d in dirs]))


def exclusion_reason(path: Path, root: Path, exclude: Iterable[str] = ()) -> str | None:
    """Why ``path`` is excluded (``[tool.trainwright] exclude "legacy/"``, ``.gitignore "build/"``), or
    ``None`` when neither an ``exclude`` pattern nor a ``.gitignore`` between the root and it covers it."""
    root = root.resolve()
    resolved = real_path(path)
    if resolved != root and root not in resolved.parents:
        return None
    rel = resolved.relative_to(root).as_posix() if resolved != root else ""
    if not rel:
        return None
    is_dir = resolved.is_dir()
    pattern = deciding_pattern(rel, is_dir, parse_patterns(exclude))
    if pattern is not None:
        return f'[tool.trainwright] exclude "{pattern.text}"'
    parts = rel.split("/")
    gitignores: list[Pattern] = []
    directory = root
    for part in parts[:-1]:
        gitignores += _gitignore(directory, root)
        directory = directory / part
    gitignores += _gitignore(directory, root)
    pattern = deciding_pattern(rel, is_dir, gitignores)
    if pattern is not None:
        where = f"{pattern.base}/.gitignore" if pattern.base else ".gitignore"
        return f'{where} "{pattern.text}"'
    return None


def discovery_warnings(
    paths: Sequence[str | Path],
    files: Sequence[str | Path],
    root: Path,
    exclude: Iterable[str] = (),
    force_exclude: bool = False,
) -> list[str]:
    """What to tell the user about the file list (exit status unchanged), as ruff does: named paths that
    were skipped because they are excluded, and a run that found no Python file at all.

    A named file is skipped only with ``force_exclude`` (and then only by ``exclude``: that is what the
    pre-commit hook relies on); a named directory is skipped when it is itself excluded.
    """
    config_patterns = parse_patterns(exclude)
    rel = _rel_fn(root.resolve())
    named_files: list[str] = []
    named_dirs: list[str] = []
    for given in paths:
        path = Path(given)
        if path.is_file():
            pattern = (
                deciding_pattern(rel(real_path(path)), False, config_patterns) if force_exclude else None
            )
            if pattern is not None:
                named_files.append(f'{given} ([tool.trainwright] exclude "{pattern.text}")')
        elif path.is_dir() and not _contributed(path, files):
            reason = exclusion_reason(path, root, exclude)
            if reason is not None:
                named_dirs.append(f"{given} ({reason})")
    out = []
    if named_files:
        out.append(
            f"excluded, so not linted: {_listed(named_files)}; name files without --force-exclude to lint "
            "them anyway"
        )
    if named_dirs:
        out.append(
            f"excluded, so not linted: {_listed(named_dirs)}; name the files in it to lint them anyway"
        )
    if not files:
        out.append("No Python files found under the given path(s)")
    return out


def _contributed(directory: Path, files: Sequence[str | Path]) -> bool:
    prefix = str(directory).rstrip("/\\") + os.sep
    return any(str(f).startswith(prefix) for f in files) if str(directory) != "." else bool(files)


def _listed(items: list[str]) -> str:
    return ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")
