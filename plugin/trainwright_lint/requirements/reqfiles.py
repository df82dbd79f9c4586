"""pip requirements and constraints files, following ``-r``/``-c`` includes.

Includes are relative to the including file (as pip resolves them). Each file is read once per walk
(once as requirements, once as constraints at most): ``a.txt: -r b.txt`` / ``b.txt: -r a.txt``
terminates, and includes forming diamonds (each level naming the next twice) cost one read per file.
Tracking only the files on the current include path read a 16-level diamond 65,536 times (34 s) and a
26-level one for minutes. Every requirement line on the library in the file and its includes is
returned once; those from ``-c`` files are marked as constraints.
"""

from __future__ import annotations

import re
from pathlib import Path

from trainwright_lint.requirements.model import Declared
from trainwright_lint.requirements.pep508 import RequirementSyntaxError, marker_applies, parse_requirement

_INCLUDE = re.compile(r"^(?:(-r|--requirement)|(-c|--constraint))(?:\s*=\s*|\s+|(?=[^\s=-]))(?P<path>\S+)")
_TRAILING_OPTION = re.compile(r"\s+--?[A-Za-z][\w-]*(?:[=\s]\S+)?.*$")  # "pkg==1 --hash=sha256:..."
_COMMENT = re.compile(r"(^|\s)#.*$")


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, line) with comments removed and ``\\`` continuations joined."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = _COMMENT.sub("", raw).rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = (pending + line).strip(), ""
        if line:
            out.append((start, line))
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def read_requirements_file(
    path: Path,
    library: str,
    root: Path,
    problems: list[str],
    *,
    constraint: bool = False,
    read: set[tuple[Path, bool]] | None = None,
) -> list[Declared]:
    """Declarations of ``library`` in ``path`` and, recursively, in the files it includes; ``read``
    holds the (file, as a constraint) pairs this walk has already read, which give nothing again."""
    read = set() if read is None else read
    key = (path.resolve(), constraint)
    if key in read:
        return []  # a cycle, or a diamond: its declarations are in the result already
    read.add(key)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        problems.append(f"{_shown(path, root)}: cannot read: {exc.strerror or exc}")
        return []
    found: list[Declared] = []
    for number, line in logical_lines(text):
        include = _INCLUDE.match(line)
        if include:
            target = path.parent / include["path"]
            if not target.is_file():
                problems.append(f"{_shown(path, root)}:{number}: {line}: no such file {_shown(target, root)}")
                continue
            found += read_requirements_file(
                target, library, root, problems, constraint=constraint or bool(include[2]), read=read
            )
            continue
        if line.startswith("-"):
            continue  # -e, --index-url, --hash, ...: nothing about a version
        line = _TRAILING_OPTION.sub("", line)
        try:
            requirement = parse_requirement(line, library)
        except RequirementSyntaxError as exc:
            problems.append(f"{_shown(path, root)}:{number}: {exc}; line ignored")
            continue
        if requirement is None or not marker_applies(requirement.marker):
            continue
        found.append(
            Declared(
                display=requirement.specifier,
                alternatives=(requirement.specifier,),
                file=path,
                constraint=constraint,
            )
        )
    return found


def _shown(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def candidate_files(root: Path) -> list[Path]:
    """Requirements files at the project root, in the order they are consulted: ``requirements.txt``,
    other ``requirements*.txt``, ``requirements/*.txt``, then stand-alone ``constraints*.txt``."""
    first = root / "requirements.txt"
    others = sorted(p for p in root.glob("requirements*.txt") if p.name != "requirements.txt")
    nested = sorted((root / "requirements").glob("*.txt")) if (root / "requirements").is_dir() else []
    constraints = sorted(root.glob("constraints*.txt"))
    return [p for p in ([first] if first.is_file() else []) + others + nested + constraints if p.is_file()]
