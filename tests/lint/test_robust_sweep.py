"""Lint every ``.py`` file of the test environment's site-packages (14k files here): no internal error,
unparsable files reported as TW000. The whole sweep runs by default (about 10 s on one core);
``TRAINWRIGHT_SWEEP_EVERY=N`` keeps every Nth file for slow CI machines."""

from __future__ import annotations

import ast
import os
import sysconfig
from pathlib import Path

import pytest
from lint_helpers import config, file_linter
from trainwright_lint.engine import lint_source
from trainwright_lint.fixes import FixError, fix_bytes, wanted
from trainwright_lint.runner import lint_files

SITE = Path(sysconfig.get_paths()["purelib"])
EVERY = max(1, int(os.environ.get("TRAINWRIGHT_SWEEP_EVERY", "1")))


@pytest.fixture(scope="module")
def site_files() -> list[str]:
    files = sorted(str(p) for p in SITE.rglob("*.py") if p.is_file())
    if len(files) < 1000:
        pytest.skip(f"site-packages at {SITE} has only {len(files)} Python files")
    return files


@pytest.mark.slow
def test_sweep_site_packages_through_the_cli_path(site_files: list[str]) -> None:
    files = site_files[::EVERY]
    result = lint_files(files, config(), jobs=1)
    assert result.files_seen == len(files)
    for f in result.findings:
        assert f.line >= 1 and f.column >= 1 and f.message
        if f.code == "TW000":
            assert f.message.startswith(("cannot parse", "skipped", "cannot read", "cannot decode")), (
                f.message
            )
    assert not result.errors, result.errors[:5]


@pytest.mark.slow
@pytest.mark.train("its corpus is the dev install's site-packages (over 100 sampled files)")
def test_ungated_sample_lints_and_fixes_cleanly(site_files: list[str]) -> None:
    """Every 40th file through the rules without the textual pre-filter, and through fix when a
    finding has a fix: only parse errors may come out, and a fixed file always parses."""
    checked = 0
    for path in site_files[:: 40 * EVERY]:
        data = Path(path).read_bytes()
        text = data.decode("utf-8", errors="replace")
        try:
            findings = lint_source(text, path, config(), gate=False)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        checked += 1
        if wanted(findings, unsafe=True):
            try:
                outcome = fix_bytes(data, path, file_linter(path), unsafe=True)
            except FixError:
                continue
            ast.parse(outcome.fixed)  # bytes: the coding cookie is honoured
    assert checked > 100
