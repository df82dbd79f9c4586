"""A program that patches the libraries does not change the programs trained after it (issue 32).

Why: the oracle's child trains the original, the fixed copy, the plain Trainer and other cases in one
interpreter. A project that rebinds ``transformers.Trainer.compute_loss`` at import would otherwise
train every later program with its patch, the plain Trainer included, and every verdict that divides
by the plain Trainer's losses would rest on that project's code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from trainwright.testing import _library_guard
from trainwright.testing.oracle import Spec, compare, run_specs

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import oracle_matrix

PLAIN = ROOT / "tests" / "oracle" / "programs" / "plain.py"
PATCHER = Path(__file__).parent / "programs" / "patches" / "doubles_trainer_loss.py"


def test_a_patch_is_put_back_after_the_program_that_made_it() -> None:
    alone, patcher, after = run_specs(
        [
            Spec(module=PLAIN, resume=False),
            Spec(module=PATCHER, resume=False),
            Spec(module=PLAIN, resume=False),
        ]
    )
    assert not alone.failed and not patcher.failed and not after.failed
    # the patch took effect in its own program: twice the plain Trainer's loss at every step
    for mine, plain in zip(patcher.phases[0].steps, alone.phases[0].steps):
        assert mine.loss == pytest.approx(2 * plain.loss, rel=1e-6)
    assert "transformers.trainer.Trainer.compute_loss" in patcher.patched
    assert "transformers.trainer.Trainer.oracle_added_by_a_patch" in patcher.patched
    # ... and none in the plain Trainer trained after it in the same child
    assert compare(alone, after) == []
    assert after.patched == ()


def test_restore_puts_back_rebound_and_added_class_attributes() -> None:
    import transformers.trainer  # imported before the snapshot, as the child does (``_pristine``)

    snapshot = _library_guard.take()
    stock = transformers.Trainer.compute_loss
    try:
        transformers.Trainer.compute_loss = lambda *a, **k: None  # type: ignore[method-assign]
        transformers.Trainer.oracle_new_name = print  # type: ignore[attr-defined]
    finally:
        changed = _library_guard.restore(snapshot)
    assert transformers.Trainer.compute_loss is stock
    assert not hasattr(transformers.Trainer, "oracle_new_name")
    assert set(changed) == {
        "transformers.trainer.Trainer.compute_loss",
        "transformers.trainer.Trainer.oracle_new_name",
    }


def test_the_matrix_names_the_patch(tmp_path: Path) -> None:
    copy = tmp_path / PATCHER.name
    copy.write_bytes(PATCHER.read_bytes())
    case = oracle_matrix.Case("patcher", PATCHER, copy, False, ">=4.44,<6", "DoublingTrainer")
    oracle_matrix.run([case], {oracle_matrix.PINNED: None})
    assert case.verdicts == {oracle_matrix.PINNED: "equal"}, case.differences
    assert (
        "patches the library, put back after each program: transformers.trainer.Trainer.compute_loss"
        in oracle_matrix.report([case])
    )
