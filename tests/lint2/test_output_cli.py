"""``trainwright lint --format sarif|github`` end to end, TW000 included."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from lint2_support import DATA, FIXTURES
from trainwright_lint.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "fix", root / "src")
    (root / "src" / "broken.py").write_text("from transformers import Trainer\nclass T(Trainer:\n    pass\n")
    monkeypatch.chdir(root)
    return root


def lint(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(["lint", "--transformers-version", "5.24.0", "-j", "1", *args])
    return status, capsys.readouterr().out


def test_sarif_from_the_cli_validates(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = lint(["--format", "sarif", "src"], capsys)
    assert status == 1
    log = json.loads(out)
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)
    results = log["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert all(u.startswith("src/") for u in uris)  # relative to the working directory
    broken = [r for r in results if r["ruleId"] == "TW000"]
    assert len(broken) == 1 and broken[0]["level"] == "error"
    assert broken[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_github_annotations_from_the_cli(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = lint(["--format", "github", "src"], capsys)
    lines = out.splitlines()
    assert status == 1 and lines
    assert all(line.startswith(("::warning file=src/", "::error file=src/")) for line in lines)
    assert any(line.startswith("::error file=src/broken.py,line=2,") for line in lines)
