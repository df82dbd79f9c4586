"""TRL awareness: ``trainwright lint`` on subclasses of TRL trainers (TRL as installed from PyPI)
reports overrides of TRL-private methods as TW101 and checks TRL's own call sites (TW301), naming the
library, class and release."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lint_helpers import FIXTURES
from trainwright_lint.cli import main

from trainwright.catalog import load_catalog, target_version


@pytest.fixture
def trl_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(FIXTURES / "trl_project", tmp_path / "trl_project")
    monkeypatch.chdir(tmp_path / "trl_project")
    return tmp_path / "trl_project"


def lint(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    status = main(
        ["lint", "--transformers-version", "5.24.0", "-j", "1", "--output-format", "concise", *args]
    )
    return status, capsys.readouterr().out.splitlines()


def test_trl_private_override_is_tw101(trl_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    installed = target_version(None, library="trl")  # TRL as installed (package metadata), resolved
    status, lines = lint(["my_grpo.py"], capsys)
    assert status == 1
    by_line = {}
    for line in lines:
        where, code, message = line.split(" ", 2)
        by_line.setdefault(int(where.split(":")[1]), {})[code] = message
    source = (trl_project / "my_grpo.py").read_text().splitlines()
    line_of = {
        name: i
        for i, text in enumerate(source, 1)
        for name in (
            "def _generate_and_score",
            "def _calculate_rewards",
            "def _my_helper",
            "def compute_loss",
        )
        if name in text
    }
    first = by_line[line_of["def _generate_and_score"]]["TW101"]
    assert f"private method of trl.GRPOTrainer (trl {installed})" in first
    assert "_generate_and_score_completions" in first
    assert "TW101" in by_line[line_of["def _calculate_rewards"]]
    tw301 = by_line[line_of["def _calculate_rewards"]]["TW301"]
    assert f"cannot accept what trl.GRPOTrainer (trl {installed}) passes" in tw301
    assert "`_generate_and_score_completions` passes" in tw301
    assert "4 positional arguments" in tw301
    assert line_of["def _my_helper"] not in by_line and line_of["def compute_loss"] not in by_line


def test_trl_version_option_changes_the_target(trl_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    oldest = load_catalog("trl").versions[0]
    _status, lines = lint(["--trl-version", oldest, "my_grpo.py"], capsys)
    assert any(f"(trl {oldest})" in line for line in lines)


def test_trl_version_from_pyproject(trl_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    oldest = load_catalog("trl").versions[0]
    (trl_project / "pyproject.toml").write_text(f'[tool.trainwright]\ntrl-version = "{oldest}"\n')
    _status, lines = lint(["my_grpo.py"], capsys)
    assert any(f"(trl {oldest})" in line for line in lines)
