"""Our own trainers, callbacks, examples and scripts pass our own linter (this is how CI runs it).
The deliberately broken gallery examples are checked in tests/gallery/."""

from __future__ import annotations

from pathlib import Path

from trainwright_lint.configuration import LintConfig
from trainwright_lint.discovery import iter_python_files
from trainwright_lint.runner import lint_files

ROOT = Path(__file__).resolve().parents[2]
BROKEN_ON_PURPOSE = "examples/gallery/*_before.py"


def _lint(paths: list[Path], exclude: tuple[str, ...] = ()) -> list[str]:
    config = LintConfig(transformers_version="5.24.0", root=ROOT, exclude=exclude)
    files = [str(p) for p in iter_python_files([p for p in paths if p.exists()], ROOT, exclude)]
    result = lint_files(files, config, jobs=1)
    assert not result.errors, result.errors
    return [f"{f.path}:{f.line}: {f.code} {f.message}" for f in result.findings]


def test_project_code_is_clean() -> None:
    paths = [ROOT / name for name in ("src", "plugin", "examples", "benchmarks", "scripts")]
    assert _lint(paths, exclude=(BROKEN_ON_PURPOSE,)) == []
