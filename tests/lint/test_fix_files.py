"""``trainwright fix`` on files: atomic writes that keep encoding and newline style, ``--diff`` writes
nothing, unparsable files are left untouched and reported, ``lint --fix``, and ``--suggest`` (the
preview of the move ``--unsafe-fixes`` writes)."""

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


GATED_PRINT = (
    "from transformers import Trainer\n\n\n"
    "class MyTrainer(Trainer):\n"
    "    def training_step(self, model, inputs, num_items_in_batch=None):\n"
    "        loss = super().training_step(model, inputs, num_items_in_batch)\n"
    "        if self.state.global_step % 100 == 0:\n"
    "            print('step', self.state.global_step, self.model.dtype)\n"
    "        return loss\n"
)


def test_suggest_previews_the_move_and_writes_nothing(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = workdir / "train.py"
    path.write_text(GATED_PRINT, encoding="utf-8")
    status, out, err = run(["fix", "--suggest", "train.py"], capsys)
    assert status == 0
    assert path.read_text(encoding="utf-8") == GATED_PRINT
    assert out.startswith("train.py:7:9: TW201 ")
    assert (
        "\n  help: Move them to `MyTrainerTrainingStepCallback.on_substep_end`/`on_pre_optimizer_step`" in out
    )
    assert "+class MyTrainerTrainingStepCallback(TrainerCallback):\n" in out
    assert "+    def on_substep_end(self, args, state, control, **kwargs):\n" in out
    assert "+            print('step', trainer.state.global_step, trainer.model.dtype)\n" in out
    assert "-            print('step', self.state.global_step, self.model.dtype)\n" in out
    assert "+        self.add_callback(MyTrainerTrainingStepCallback(self))\n" in out
    assert "1 callback move previewed, 0 without a mechanical move (nothing written)" in err


def test_suggest_preview_is_the_move_unsafe_fixes_writes(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One writer: the diff ``--suggest`` prints, applied to the file, is the file ``fix --unsafe-fixes``
    writes (each gallery file has one TW2xx finding and no other fix)."""
    from trainwright.testing.suggested import apply_diff, blocks

    gallery = FIXTURES.parents[2] / "examples" / "gallery"
    compared = 0
    for name in ("memory", "progress_file", "sample_generation", "step_timer", "checkpoint_extras"):
        source = (gallery / f"{name}_before.py").read_text(encoding="utf-8")
        path = workdir / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        _, out, _ = run(["fix", "--suggest", path.name], capsys)
        (block,) = blocks(out)
        previewed = apply_diff(source, block.split("\n", 2)[2])
        assert path.read_text(encoding="utf-8") == source  # --suggest wrote nothing
        run(["fix", "--unsafe-fixes", path.name], capsys)
        assert path.read_text(encoding="utf-8") == previewed, name
        compared += 1
    assert compared == 5


def test_suggest_withholds_a_move_with_no_mechanical_equivalent(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 32: a timer around ``super().prediction_step()`` has no begin event to start from, and a
    print before ``evaluate`` moved to ``on_step_end`` would print on every step. No callback is
    printed for either; each says why in one line."""
    (workdir / "timer.py").write_text(
        "import time\nfrom transformers import Trainer\n\n\nclass EvalTimer(Trainer):\n"
        "    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):\n"
        "        start = time.time()\n"
        "        out = super().prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)\n"
        "        print(time.time() - start)\n        return out\n",
        encoding="utf-8",
    )
    (workdir / "evalprint.py").write_text(
        "from transformers import Trainer\n\n\nclass EvalPrintTrainer(Trainer):\n"
        "    def evaluate(self, *args, **kwargs):\n"
        "        print('evaluating at step', self.state.global_step)\n"
        "        return super().evaluate(*args, **kwargs)\n",
        encoding="utf-8",
    )
    status, out, err = run(["fix", "--suggest", "timer.py", "evalprint.py"], capsys)
    assert status == 0 and out == ""  # no move, no finding: both are --preview findings
    status, out, err = run(["fix", "--suggest", "--preview", "timer.py", "evalprint.py"], capsys)
    assert status == 0
    assert "TrainerCallback" not in out and "@@" not in out, out
    lines = out.splitlines()
    assert lines[0].startswith("evalprint.py:6:9: TW202 ")
    assert lines[1] == (
        "  no mechanical move: `on_step_end` fires on every step, `evaluate` only when "
        "`control.should_evaluate` is set; a move there would run the code on other steps"
    )
    assert lines[3].startswith("timer.py:7:9: TW202 ")
    assert lines[4].startswith("  no mechanical move: no event begins `prediction_step`")
    assert "0 callback moves previewed, 2 without a mechanical move" in err


def test_suggest_prints_no_callback_for_tw203(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TW203 (a preview rule) has no move fix: its ``control.should_*`` callback is not oracle-checked,
    so ``--suggest`` withholds it (the hand-written translator printed one)."""
    source = (FIXTURES.parents[2] / "examples" / "gallery" / "loss_guard_before.py").read_text()
    (workdir / "guard.py").write_text(source, encoding="utf-8")
    status, out, err = run(["fix", "--suggest", "--preview", "guard.py"], capsys)
    assert status == 0 and "TrainerCallback)" not in out and "@@" not in out
    assert out.count(": TW203 `log` sets") == 2
    assert out.count("  no mechanical move: TW203 writes no move: no callback for it is checked") == 2
    assert "0 callback moves previewed, 2 without a mechanical move" in err


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
