"""Synthetic pathological files (syntax errors, Python 2, latin-1 and invalid UTF-8, NUL bytes, a 10 MB
file, deep nesting, CR-only newlines, empty files): the linter reports, never crashes, hangs or writes a
broken file, and a per-file time limit turns a slow file into TW000 instead of a stalled run."""

from __future__ import annotations

from pathlib import Path

import pytest
from lint_helpers import config, pathological_files
from trainwright_lint.cli import main
from trainwright_lint.runner import lint_files

UNPARSABLE = {"syntax_error.py", "python2.py", "nul_bytes.py", "long_expression.py", "invalid_utf8.py"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pathological")
    for name, data in pathological_files().items():
        (root / name).write_bytes(data)
    return root


def test_lint_reports_unparsable_files_as_tw000(corpus: Path) -> None:
    files = sorted(str(p) for p in corpus.iterdir())
    result = lint_files(files, config(), jobs=1)
    tw000 = {Path(f.path).name: f for f in result.findings if f.code == "TW000"}
    assert set(tw000) == UNPARSABLE
    assert "Missing parentheses in call to 'print'" in tw000["python2.py"].message
    assert tw000["syntax_error.py"].line == 5  # where the parser stopped
    assert not result.errors
    # Files that parse are linted normally: the 10 MB one still gets its TW101.
    assert "TW101" in {f.code for f in result.findings if f.path.endswith("huge_10mb.py")}
    assert "TW301" in {f.code for f in result.findings if f.path.endswith("latin1_declared.py")}
    assert "TW301" in {f.code for f in result.findings if f.path.endswith("crlf_old_mac.py")}  # "\r" only


def test_per_file_time_limit_skips_slow_files(corpus: Path) -> None:
    files = [str(corpus / "huge_10mb.py"), str(corpus / "latin1_declared.py")]
    result = lint_files(files, config(file_timeout=0.05), jobs=1)
    by_name = {Path(f.path).name: f for f in result.findings}
    assert by_name["huge_10mb.py"].code == "TW000"
    assert "took longer than 0.05s" in by_name["huge_10mb.py"].message
    assert by_name["latin1_declared.py"].code == "TW301"  # the run went on


def test_fix_leaves_every_pathological_file_parsable_or_untouched(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for p in corpus.iterdir():
        (work / p.name).write_bytes(p.read_bytes())
    monkeypatch.chdir(work)
    status = main(["fix", "--transformers-version", "5.24.0", "-j", "1", "."])
    _out, err = capsys.readouterr()
    assert status in (0, 1, 2) and "Traceback" not in err
    for p in work.iterdir():
        before = (corpus / p.name).read_bytes()
        if p.name in UNPARSABLE:
            assert p.read_bytes() == before, p.name  # reported, untouched
        else:
            compile(p.read_bytes(), p.name, "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    assert (work / "latin1_declared.py").read_bytes().startswith(b"# -*- coding: latin-1 -*-\n")
    assert "start_time=None" in (work / "latin1_declared.py").read_bytes().decode("latin-1")
