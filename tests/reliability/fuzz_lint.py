"""The linter's fuzz target: generated programs and hostile project configurations, with a seed and a
time box. ``tests/reliability/test_rel_fuzz.py`` runs it in CI (fixed seed, under a minute);
``scripts/fuzz.py --minutes N`` runs it longer with fresh seeds.

Two kinds of case, alternating:

* **programs**: hypothesmith programs, each also wrapped in a ``Trainer`` subclass that uses
  ``self.tokenizer`` (a fixable finding on the target), with a hostile change drawn by the seed (a
  UTF-8 BOM, a coding line, CRLF or CR line endings, a form feed in front of a line, a deeply nested
  expression). Checked as ``trainwright fix`` does it (``driver.relinter`` and ``fixes.fix_bytes``):
  lint raises nothing, every fix lint offers as safe (``[*]``) is applied by fix without refusal, the
  fixed file parses and a second fix changes nothing.
* **projects**: a project folder with a trainer and a random mix of hostile settings and files (the
  round of issue 38: odd ``file-timeout`` values, ``exclude`` and ``.gitignore`` lines with bad ranges,
  junk codes, deeply nested ``pyproject.toml``, Poetry ``||`` groups, ``-r``/``-c`` include graphs with
  cycles and diamonds, a deep ``setup.py`` expression, looping symlinks, deep folders), run through the
  real CLI entry point (``lint`` or ``fix``): the exit status is 0, 1 or 2 and nothing ends in a
  traceback or an "internal error".

A failure is returned with the seed that reproduces it (``scripts/fuzz.py --replay SEED``).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import math
import os
import random
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import hypothesmith
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from trainwright_lint.cli import main
from trainwright_lint.configuration import LintConfig
from trainwright_lint.driver import relinter
from trainwright_lint.engine import single_file_workspace
from trainwright_lint.fixes import FixError, fix_bytes, wanted
from trainwright_lint.output.fix_record import has_safe_fix
from trainwright_lint.sourcefile import decode_source

TARGET = "5.24.0"
TRAINER = "from transformers import Trainer\n\n\nclass T(Trainer):\n    def log_size(self):\n        return len(self.tokenizer)\n"


@dataclass(frozen=True)
class Failure:
    kind: str  # "program" or "project"
    seed: int
    what: str  # the input, shortened
    error: str  # the traceback or the broken invariant


class _TimeUp(BaseException):
    """Ends hypothesis's loop at the time box (a ``BaseException``: hypothesis does not shrink it)."""


# ------------------------------------------------------------------------------------------- programs


def _hostile(text: str, rng: random.Random) -> bytes:
    """``text`` with one hostile change drawn by ``rng``, as the bytes of a file."""
    change = rng.choice(["none", "bom", "coding", "crlf", "cr", "form feed", "nesting", "deep chain"])
    lines = text.splitlines(keepends=True)
    if change == "bom":
        return (
            b"\xef\xbb\xbf"
            + rng.choice([b"", b"# -*- coding: latin-1 -*-\n", b"# coding: utf-8\n"])
            + text.encode()
        )
    if change == "coding":
        return f"# -*- coding: {rng.choice(['latin-1', 'utf-8', 'cp1252', 'ascii'])} -*-\n{text}".encode()
    if change in ("crlf", "cr"):
        return text.replace("\n", "\r\n" if change == "crlf" else "\r").encode()
    if change == "form feed" and lines:
        at = rng.randrange(len(lines))
        lines[at] = rng.choice(["\f", "\f    ", "  \f"]) + lines[at]
    elif change == "nesting":
        depth = rng.choice([10, 99, 139, 140, 160, 199, 200])
        kind = rng.choice([("[", "]"), ("(", ")"), ("f(", ")"), ("{1: ", "}")])
        lines.append(f"        x = {kind[0] * depth}1{kind[1] * depth}\n")
    elif change == "deep chain":
        lines.append(
            "        x = " + " + ".join(["self.state.global_step"] * rng.choice([50, 500, 2000])) + "\n"
        )
    return "".join(lines).encode("utf-8", "surrogatepass")


def check_program(data: bytes, path: str) -> str | None:
    """The broken invariant for one file's bytes (``None``: all hold). Exceptions propagate."""
    text = decode_source(data)
    if text is None:
        return None  # TW000: not linted, not fixed
    config = LintConfig(transformers_version=TARGET, root=Path(path).parent)
    lint = relinter(path, config, single_file_workspace(path, config))
    try:
        findings = lint(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # reported as TW000 by the front ends
    offered = [f for f in findings if has_safe_fix(f.fix)]
    try:
        first = fix_bytes(data, path, lint)
    except FixError as exc:
        return f"lint offered {len(offered)} safe fixes, fix refused the file: {exc}" if offered else None
    if wanted(first.remaining, unsafe=False):
        return f"safe fixes left after fix: {[f.message for f in wanted(first.remaining, False)]}"
    if first.changed:
        ast.parse(decode_source(first.fixed) or "", path)  # the fixed file parses (as the input did)
        second = fix_bytes(first.fixed, path, lint)
        if second.fixed != first.fixed:
            return "a second fix changed the file again"
    return None


def _wrap(program: str) -> str:
    body = "".join("        " + line if line.strip() else line for line in program.splitlines(keepends=True))
    return (
        TRAINER
        + "\n    def generated(self):\n"
        + (body if body.strip() else "        pass\n")
        + "\n        pass\n"
    )


def fuzz_programs(seed: int, stop: float, folder: Path) -> list[Failure]:
    failures: list[Failure] = []
    rng = random.Random(seed)
    path = str(folder / "generated.py")

    @hypothesis_seed(seed)
    @settings(
        max_examples=10**6,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(hypothesmith.from_grammar())
    def one(program: str) -> None:
        if time.monotonic() > stop:
            raise _TimeUp
        for source in (program, _wrap(program)):
            case_seed = rng.randrange(2**32)
            data = _hostile(source, random.Random(case_seed))
            try:
                broken = check_program(data, path)
            except Exception:  # noqa: BLE001 - the fuzz reports every crash
                broken = traceback.format_exc(limit=12)
            if broken is not None:
                failures.append(Failure("program", case_seed, repr(data[:300]), broken))

    with contextlib.suppress(_TimeUp):
        one()
    return failures


# ------------------------------------------------------------------------------------------- projects

PATTERN_CHARS = "[]!*?/\\az-^.# "
CONSTRAINTS = [
    "^4.44",
    "^5.0",
    ">=4.40,<4.50",
    "~4.46.1",
    "4.45.*",
    ">=5.1",
    "<4.40",
    "*",
    "==5.24.0",
    "!=4.45.0",
]


def _toml(value: object) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return json.dumps(value)


def _pattern(rng: random.Random) -> str:
    return "".join(rng.choice(PATTERN_CHARS) for _ in range(rng.randint(1, 6)))


def _trainwright_table(rng: random.Random) -> str:
    keys = {
        "file-timeout": lambda: rng.choice([0, 5, 20.5, 1e10, float("nan"), float("inf"), -1, "soon", True]),
        "exclude": lambda: [_pattern(rng) for _ in range(rng.randint(0, 3))],
        "select": lambda: rng.sample(["TW", "TW3", "TW000", "X1", "", "tw"], rng.randint(0, 2)),
        "ignore": lambda: rng.sample(["TW2", "TW303", "E501", ""], rng.randint(0, 2)),
        "trainer-bases": lambda: rng.sample(["my.Base", "", "Trainer", "a..b"], rng.randint(0, 2)),
        "transformers-version": lambda: rng.choice(["5.24.0", ">=4.44,<5", "9.9.9", "banana", "^4.44"]),
    }
    chosen = rng.sample(sorted(keys), rng.randint(0, 3))
    lines = [f"{k} = {_toml(keys[k]())}" for k in chosen]
    if rng.random() < 0.2:
        lines.append('per-file-ignores = { "' + _pattern(rng).replace('"', "") + '" = ["TW3"] }')
    return "[tool.trainwright]\n" + "".join(line + "\n" for line in lines)


def _pyproject(rng: random.Random) -> str:
    parts = ['[project]\nname = "p"\n']
    if rng.random() < 0.5:
        parts.append(
            f"dependencies = [{json.dumps('transformers' + rng.choice(['', '>=4.44', '==5.24.0', '>=5.0']))}]\n"
        )
    if rng.random() < 0.4:
        parts.append(_trainwright_table(rng))
    if rng.random() < 0.3:
        groups = rng.randint(1, 24)
        for g in range(groups):
            either = " || ".join(rng.sample(CONSTRAINTS, rng.randint(1, 3)))
            parts.append(f'[tool.poetry.group.g{g}.dependencies]\ntransformers = "{either}"\n')
    if rng.random() < 0.15:
        depth = rng.choice([10, 500, 3000])
        parts.append(f"[tool.other]\ny = {'[' * depth}{']' * depth}\n")
    return "".join(parts)


def _requirements(root: Path, rng: random.Random) -> None:
    names = [f"req{i}.txt" for i in range(rng.randint(1, 12))]
    (root / "requirements.txt").write_text(f"-r {names[0]}\n")
    for name in names:
        lines = [
            f"{rng.choice(['-r', '-c', '--requirement='])} {rng.choice(names)}"
            for _ in range(rng.randint(0, 3))
        ]
        lines.append("transformers " + rng.choice(CONSTRAINTS + ["(>=4", ">>5", ""]))
        (root / name).write_text("\n".join(lines).replace("= ", "=") + "\n")


def _layout(root: Path, rng: random.Random) -> None:
    if rng.random() < 0.3:
        (root / ".gitignore").write_text("".join(_pattern(rng) + "\n" for _ in range(rng.randint(1, 4))))
    if rng.random() < 0.2:
        (root / "loop.py").symlink_to("loop.py")
    if rng.random() < 0.15:
        folder = root
        for _ in range(rng.choice([50, 300])):
            folder = folder / "d"
            folder.mkdir()
        (folder / "deep.py").write_text(TRAINER)
    if rng.random() < 0.15:
        expression = "1+" * rng.choice([100, 5000, 100_000]) + "1"
        (root / "setup.py").write_text(f'from setuptools import setup\nsetup(name="p", x={expression})\n')
    if rng.random() < 0.3:
        _requirements(root, rng)


def build_project(root: Path, seed: int) -> list[str]:
    """A hostile project in ``root`` from ``seed``; the CLI arguments to run on it."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(_pyproject(rng))
    (root / "train.py").write_text(TRAINER)
    _layout(root, rng)
    command = rng.choice([["lint"], ["lint", "--fix"], ["fix"], ["fix", "--diff"]])
    return [*command, "-j", rng.choice(["1", "2"]), str(root)]


def check_project(root: Path, seed: int) -> str | None:
    args = build_project(root, seed)
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        os.chdir(root)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(args)
    except SystemExit as exc:  # argparse: a usage error is exit 2
        status = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(here)
    said = err.getvalue() + out.getvalue()
    if status not in (0, 1, 2):
        return f"exit status {status}: {said[-1500:]}"
    if "Traceback" in said or "internal error" in said:
        return f"{' '.join(args[:-1])}: {said[-3000:]}"
    return None


def _remove(root: Path) -> None:
    """``shutil.rmtree`` recurses per level: deep folders are cut off bottom-up first."""
    deepest = [root]
    while (deepest[-1] / "d").is_dir() and not (deepest[-1] / "d").is_symlink():
        deepest.append(deepest[-1] / "d")
    for folder in reversed(deepest[1:]):
        shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)


def fuzz_projects(seed: int, stop: float, folder: Path) -> list[Failure]:
    failures: list[Failure] = []
    rng = random.Random(seed)
    n = 0
    while time.monotonic() < stop:
        case_seed = rng.randrange(2**32)
        root = folder / f"project-{n}"
        n += 1
        try:
            broken = check_project(root, case_seed)
        except Exception:  # noqa: BLE001 - the fuzz reports every crash
            broken = traceback.format_exc(limit=12)
        finally:
            _remove(root)
        if broken is not None:
            failures.append(Failure("project", case_seed, f"project seed {case_seed}", broken))
    return failures


# ------------------------------------------------------------------------------------------------ run


def run(seed: int, seconds: float, log: Callable[[str], None] = lambda _: None) -> list[Failure]:
    """Programs for half of ``seconds``, projects for the other half, from ``seed``."""
    with tempfile.TemporaryDirectory(prefix="trainwright-fuzz-") as tmp:
        folder = Path(tmp)
        start = time.monotonic()
        failures = fuzz_programs(seed, start + seconds / 2, folder)
        log(f"programs: {len(failures)} failures after {time.monotonic() - start:.0f}s")
        failures += fuzz_projects(seed, start + seconds, folder)
        log(f"projects: {len(failures)} failures in all after {time.monotonic() - start:.0f}s")
    return failures


def replay(seed: int) -> str | None:
    """Re-run one project case by its seed (a program case is replayed by re-running its run seed)."""
    with tempfile.TemporaryDirectory(prefix="trainwright-fuzz-") as tmp:
        root = Path(tmp) / "project"
        try:
            return check_project(root, seed)
        finally:
            _remove(root)
