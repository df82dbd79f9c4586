"""A package folder named like a library (``mypkg/trl/``) does not hide the installed library: Python
puts no package folder on ``sys.path``, so ``from trl import GRPOTrainer`` inside ``mypkg`` means the
installed TRL, in the vendored folder itself and everywhere else in the package (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trainwright_lint.cli import main

VENDORED = """\
from trl import GRPOTrainer


class Vendored(GRPOTrainer):
    def _prepare_inputs(self, inputs):
        return super()._prepare_inputs(inputs)
"""
USER = """\
from trl import GRPOTrainer


class Runner(GRPOTrainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return super().compute_loss(model, inputs, return_outputs)
"""


def _lint(root: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str]]:
    status = main(
        ["lint", "-j", "1", "--format", "json", "--transformers-version", "5.24.0", "--trl-version", "1.16.0",
         str(root)]
    )  # fmt: skip
    out, _ = capsys.readouterr()
    assert status == 1
    return sorted((Path(f["filename"]).as_posix().split("mypkg/", 1)[-1], f["code"]) for f in json.loads(out))


def test_a_vendored_trl_folder_inside_a_package_is_not_trl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pkg = tmp_path / "mypkg"
    (pkg / "trl").mkdir(parents=True)
    (pkg / "train").mkdir()
    for init in (pkg / "__init__.py", pkg / "train" / "__init__.py"):
        init.write_text("")
    (pkg / "trl" / "__init__.py").write_text("from .grpo import Vendored\n")
    (pkg / "trl" / "grpo.py").write_text(VENDORED)
    (pkg / "train" / "run.py").write_text(USER)
    assert _lint(tmp_path, capsys) == [
        ("train/run.py", "TW301"),
        ("trl/grpo.py", "TW101"),
    ]


def test_a_trl_folder_on_the_import_root_is_the_projects_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "trl").mkdir()
    (tmp_path / "trl" / "__init__.py").write_text("class GRPOTrainer:\n    pass\n")
    (tmp_path / "run.py").write_text(USER)
    status = main(["lint", "-j", "1", "--format", "json", "--transformers-version", "5.24.0", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert status == 0 and json.loads(out) == []  # the project's own home-grown GRPOTrainer
