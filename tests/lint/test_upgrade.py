"""``trainwright upgrade --to VERSION``: the breaks between a project's range and a newer release.

The reference repository is the one from issue 11: it pins ``transformers>=4.44,<4.46`` and has the
four classic 4.x -> 5.x breaks. Each must be listed with the release where it starts (facts of the
catalogue built from the wheels: ``num_items_in_batch`` reaches ``compute_loss`` from 4.46.0,
``_save_checkpoint`` loses ``metrics`` in 4.47.0, ``evaluation_strategy`` goes in 4.51.0 and the
``tokenizer=`` shim in 5.0.0).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from trainwright_lint.cli import main

TRAIN = """\
from transformers import Trainer, TrainingArguments


class MyTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return super().compute_loss(model, inputs, return_outputs)

    def _save_checkpoint(self, model, trial, metrics=None):
        super()._save_checkpoint(model, trial, metrics=metrics)


def build(model, tok, data):
    args = TrainingArguments("out", evaluation_strategy="steps")
    return MyTrainer(model=model, args=args, tokenizer=tok, train_dataset=data)
"""

EXPECTED_STARTS = {
    (5, "TW301", "4.46.0"),
    (9, "TW302", "4.47.0"),
    (13, "TW304", "4.51.0"),
    (14, "TW304", "5.0.0"),
}


@pytest.fixture
def reference_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "myproj"\nversion = "0.1"\ndependencies = ["transformers>=4.44,<4.46"]\n',
        encoding="utf-8",
    )
    package = tmp_path / "src" / "myproj"
    package.mkdir(parents=True)
    (package / "train.py").write_text(TRAIN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def upgrade(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["upgrade", "-j", "1", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_lists_each_break_with_the_release_where_it_starts(
    reference_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _err = upgrade(["--to", "5.24.0", "--format", "json"], capsys)
    assert status == 1
    report = json.loads(out)
    assert report["current"].startswith("transformers >=4.44,<4.46 (pyproject.toml)")
    assert report["releases_checked"][0] == "4.46.0" and report["releases_checked"][-1] == "5.24.0"
    found = {(b["location"]["row"], b["code"], b["starts"]) for b in report["breaks"]}
    assert found == EXPECTED_STARTS
    assert all(b["filename"] == "src/myproj/train.py" and b["fix"] == "safe" for b in report["breaks"])
    assert all("of the target range" not in b["message"] for b in report["breaks"])


def test_text_output_groups_by_file(reference_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = upgrade(["--to", "5.24.0"], capsys)
    assert status == 1
    assert "\nsrc/myproj/train.py\n" in out
    assert "  14:46 TW304 starts at 5.0.0; fix: safe (--fix)" in out
    assert "4 breaks in 1 file on the way to transformers 5.24.0" in err


def test_fix_makes_the_code_right_for_the_new_release(
    reference_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = reference_repo / "src" / "myproj" / "train.py"
    status, _out, err = upgrade(["--to", "5.24.0", "--fix"], capsys)
    assert status == 0, err
    fixed = path.read_text(encoding="utf-8")
    ast.parse(fixed)
    assert "processing_class=tok" in fixed and 'eval_strategy="steps"' in fixed
    assert "super()._save_checkpoint(model, trial)" in fixed
    assert "num_items_in_batch" in fixed
    assert "raise the project's requirement on transformers" in err
    # At 5.24.0 itself nothing is left to report.
    assert main(["lint", "-j", "1", "--transformers-version", "5.24.0", "--select", "TW3"]) == 0


def test_nothing_breaks_on_a_move_within_the_same_behaviour(
    reference_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (reference_repo / "src" / "myproj" / "train.py").write_text(
        "from transformers import Trainer\n\n\nclass MyTrainer(Trainer):\n"
        "    def save_model(self, output_dir=None, _internal_call=False):\n"
        "        super().save_model(output_dir, _internal_call)\n",
        encoding="utf-8",
    )
    status, out, err = upgrade(["--to", "4.46.0"], capsys)
    assert status == 0, out + err
    assert "0 breaks in 0 files" in err


def test_an_older_release_is_refused(reference_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _out, err = upgrade(["--to", "4.40.0"], capsys)
    assert status == 2
    assert "is not newer than 4.45.2" in err
