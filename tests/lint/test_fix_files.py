"""``trainwright fix`` on files: atomic writes that keep encoding and newline style, ``--diff`` writes
nothing, unparsable files are left untouched and reported, ``lint --fix``, and ``--suggest``."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from lint_helpers import FIXTURES
from trainwright_lint.cli import main

BEFORE = (FIXTURES / "fix" / "tw301_compute_loss.before.py").read_text(encoding="utf-8")
AFTER = (FIXTURES / "fix" / "tw301_compute_loss.after.py").read_text(encoding="utf-8")


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main([args[0], "--transformers-version", "5.24.0", "-j", "1", *args[1:]])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_fix_writes_and_keeps_crlf_and_latin1(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crlf = workdir / "crlf.py"
    crlf.write_bytes(BEFORE.replace("\n", "\r\n").encode())
    latin = workdir / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\n# caf\xe9\n" + BEFORE).encode("latin-1"))
    os.chmod(latin, 0o640)
    status, out, err = run(["fix", "."], capsys)
    assert status == 0, (out, err)
    assert crlf.read_bytes() == AFTER.replace("\n", "\r\n").encode()
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + AFTER).encode("latin-1")
    assert oct(os.stat(latin).st_mode & 0o777) == oct(0o640)
    assert not [p for p in workdir.iterdir() if p.name.startswith(".trainwright-fix-")]  # no temp files left
    assert "fixed 2 findings in 2 files; 0 left" in err
    status, out, err = run(["fix", "."], capsys)  # second run: nothing to do
    assert "fixed 0 findings in 0 files" in err


def test_diff_writes_nothing(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workdir / "train.py"
    path.write_text(BEFORE, encoding="utf-8")
    status, out, _err = run(["fix", "--diff", "train.py"], capsys)
    assert status == 1
    assert path.read_text(encoding="utf-8") == BEFORE
    assert "+    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):" in out
    assert out.startswith("--- a/train.py\n+++ b/train.py\n")


def test_suggest_prints_a_callback_and_writes_nothing(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (
        "from transformers import Trainer\n\n\n"
        "class MyTrainer(Trainer):\n"
        "    def training_step(self, model, inputs, num_items_in_batch=None):\n"
        "        loss = super().training_step(model, inputs, num_items_in_batch)\n"
        "        if self.state.global_step % 100 == 0:\n"
        "            print('step', self.state.global_step, self.model.dtype)\n"
        "        return loss\n"
    )
    path = workdir / "train.py"
    path.write_text(source, encoding="utf-8")
    status, out, _err = run(["fix", "--suggest", "train.py"], capsys)
    assert status == 0
    assert path.read_text(encoding="utf-8") == source
    assert "class MyTrainerTrainingStepCallback(TrainerCallback):" in out
    assert "    def on_step_end(self, args, state, control, **kwargs):" in out
    assert "print('step', state.global_step, kwargs[\"model\"].dtype)" in out
    assert "trainer.add_callback(MyTrainerTrainingStepCallback())" in out
    code = out.split("\n", 1)[1].rsplit("# register", 1)[0]  # the suggestion itself is valid Python
    ast.parse(code)


def test_unparsable_file_is_untouched_and_reported(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = workdir / "bad.py"
    data = b"from transformers import Trainer\nclass T(Trainer):\n    def log(self, logs:\n"
    bad.write_bytes(data)
    status, out, err = run(["fix", "bad.py"], capsys)
    assert bad.read_bytes() == data
    assert "TW000" in out and "bad.py" in out
    status, out, err = run(["lint", "bad.py"], capsys)
    assert status == 1 and "bad.py:" in out and "TW000" in out and "Traceback" not in err


def test_lint_fix_then_reports_what_is_left(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = workdir / "train.py"
    path.write_text(
        BEFORE + "\n    def _save_checkpoint(self, model, trial):\n        pass\n", encoding="utf-8"
    )
    status, out, _err = run(["lint", "--fix", "train.py"], capsys)
    assert status == 1
    text = path.read_text(encoding="utf-8")
    ast.parse(text)
    assert "num_items_in_batch=None" in text
    assert "TW101" in out and "TW301" not in out


def test_precommit_hook_declared() -> None:
    import yaml

    hooks = yaml.safe_load((Path(__file__).parents[2] / ".pre-commit-hooks.yaml").read_text())
    fix = next(h for h in hooks if h["id"] == "trainwright-fix")  # the former id: lint with the safe fixes
    assert fix["entry"] == "trainwright lint --fix --force-exclude"
    assert fix["types"] == ["python"]


def test_unsafe_fixes_never_give_two_handlers_one_name(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 11: `on_step_ended` and `on_batch_end` both map to `on_step_end`; renaming both would make
    the second definition replace the first (F811) and lose a handler. Neither is renamed, and the
    findings say why."""
    source = (
        "from transformers import TrainerCallback\n\n\n"
        "class MyCallback(TrainerCallback):\n"
        "    def on_step_ended(self, args, state, control, **kwargs):\n        print('a')\n\n"
        "    def on_batch_end(self, args, state, control, **kwargs):\n        print('b')\n"
    )
    path = workdir / "callbacks.py"
    path.write_text(source, encoding="utf-8")
    status, out, _err = run(["fix", "--unsafe-fixes", "callbacks.py"], capsys)
    assert path.read_text(encoding="utf-8") == source
    assert status == 1
    assert out.count("TW401") == 2
    assert "no fix:" in out and "`on_step_end`" in out
