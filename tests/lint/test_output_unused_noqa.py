"""TW001 (ruff's RUF100): a ``TW`` code in a ``# noqa`` that silences nothing, or that names no
code, is reported by ``trainwright lint`` (stdin too); bare ``# noqa``, other tools' codes and codes
whose rules are off are never judged; flake8 never reports it (it judges its own directives)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = """\
from transformers import Trainer


class T(Trainer):  # noqa: TW101, TW999, E501
    def _save_checkpoint(self, model, trial):  # noqa: TW101
        pass

    def _prepare_inputs(self, inputs):  # noqa
        return inputs

    def _get_eval_sampler(self, eval_dataset):  # noqa: TW1, TW301
        return None  # noqa: TW001, TW302 (TW302 silences nothing, but TW001 is silenced)

    def log(self, logs):
        text = "# noqa: TW404"  # a string, not a comment: never judged
        return super().log(logs)  # noqa: TW303
"""


def lint(root: Path, *args: str, stdin: str | None = None) -> list[dict[str, object]]:
    result = subprocess.run(
        [sys.executable, "-m", "trainwright_lint", "lint", "-j", "1", "--output-format", "json", *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    return [r for r in json.loads(result.stdout) if r["code"] == "TW001"]


@pytest.fixture
def noqa_project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (tmp_path / "t.py").write_text(SOURCE)
    return tmp_path


def where(records: list[dict[str, object]]) -> list[tuple[int, int, str]]:
    return [(r["location"]["row"], r["location"]["column"], str(r["message"]).split(";")[0]) for r in records]  # type: ignore[index]


def test_unused_and_unknown_codes_are_reported(noqa_project: Path) -> None:
    assert where(lint(noqa_project, "t.py")) == [
        (4, 20, "unused `# noqa` code `TW101`: nothing it names is reported on this line"),
        (4, 20, "unknown code `TW999` in `# noqa`"),
        (11, 49, "unused `# noqa` code `TW301`: nothing it names is reported on this line"),
        (16, 35, "unused `# noqa` code `TW303`: nothing it names is reported on this line"),
    ]


def test_stdin_reports_them_too(noqa_project: Path) -> None:
    assert lint(noqa_project, "--stdin-filename", "t.py", stdin=SOURCE) == lint(noqa_project, "t.py")


def test_off_when_deselected_and_for_codes_whose_rules_are_off(noqa_project: Path) -> None:
    assert lint(noqa_project, "--ignore", "TW001", "t.py") == []
    only_tw3 = where(lint(noqa_project, "--select", "TW001,TW3", "t.py"))
    assert [w[:2] for w in only_tw3] == [(4, 20), (11, 49), (16, 35)]  # TW101 is off: not judged
    assert "TW101" not in " ".join(w[2] for w in only_tw3)


def test_never_under_flake8(noqa_project: Path) -> None:
    flake8 = shutil.which("flake8", path=os.path.dirname(sys.executable))
    assert flake8 is not None
    result = subprocess.run(
        [flake8, "--select", "TW", "t.py"], cwd=noqa_project, capture_output=True, text=True, check=False
    )
    assert result.returncode == 1 and "t.py:14:5: TW301 " in result.stdout, result.stderr  # the plugin ran
    assert "TW001" not in result.stdout
