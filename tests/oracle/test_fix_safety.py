"""TW301's ``compute_loss`` fix, judged by the oracle: a fix is safe only when training stays the same.

Issue 32's case: an override computing its own loss gets ``num_items_in_batch=None`` and then, from
4.46, the Trainer skips dividing its loss by ``gradient_accumulation_steps``. The fix is therefore
unsafe (with a one-line note), while the fix of an override that forwards to ``super()`` stays safe.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwright.testing.fixed import fixed_copy
from trainwright.testing.oracle import ACROSS_RELEASES, Record, Spec, compare, run_specs

PROGRAMS = Path(__file__).parent / "programs"


def _loss_ratio(a: Record, b: Record, phase: str) -> list[float]:
    pa, pb = a.phase(phase), b.phase(phase)
    assert pa is not None and pb is not None
    return [round(y.loss / x.loss, 3) for x, y in zip(pa.steps, pb.steps)]  # type: ignore[operator]


def test_own_loss_fix_is_unsafe_with_its_reason(tmp_path: Path) -> None:
    fixed = fixed_copy(PROGRAMS / "own_loss.py", tmp_path)
    assert not fixed.changed, "the safe fixes must leave the own-loss override alone"
    assert "TW301 [*]" not in fixed.output
    assert "adding it alone is unsafe" in " ".join(fixed.output.split())  # why, on the finding


def test_super_loss_fix_is_safe_only_where_it_can_forward(tmp_path: Path) -> None:
    # From 4.46 on, super() takes the parameter: the fix forwards it and keeps the Trainer's scaling.
    fixed = fixed_copy(PROGRAMS / "super_loss.py", tmp_path / "a", target=">=4.46,<6")
    assert fixed.changed, fixed.output
    assert "num_items_in_batch=num_items_in_batch" in fixed.path.read_text()
    # With 4.44-4.45 in the range, super() cannot take it there: not forwarded, the scaling changes.
    kept = fixed_copy(PROGRAMS / "super_loss.py", tmp_path / "b")
    assert not kept.changed and "adding it alone is unsafe" in " ".join(kept.output.split())


def test_own_loss_fix_trains_twice_the_loss_at_ga2(oracle_records: dict[str, Record]) -> None:
    # own_loss_divided trains as the original did on 4.45.2 (test_own_loss_across_releases).
    fixed, divided = oracle_records["own_loss_fixed"], oracle_records["own_loss_divided"]
    assert _loss_ratio(divided, fixed, "ga2/train") == [2.0] * 4
    assert _loss_ratio(divided, fixed, "ga1/train") == [1.0] * 4
    assert any(d.where.startswith("ga2/train.steps") for d in compare(divided, fixed))


def test_super_loss_original_fails_on_the_pinned_release(oracle_records: dict[str, Record]) -> None:
    original, fixed = oracle_records["super_loss"], oracle_records["super_loss_fixed"]
    assert original.phase("ga1/train").error.startswith("TypeError")  # type: ignore[union-attr]
    assert not fixed.failed  # equal to the original on 4.45.2: test_fixes_across_releases


@pytest.mark.slow
def test_fixes_across_releases(tmp_path: Path, installed_release) -> None:
    """On 4.45.2 (the last release where the originals run) against 4.46.3 and the pinned 5.24.0."""
    old, first = installed_release("4.45.2", "4.46.3")
    own, divided = PROGRAMS / "own_loss.py", PROGRAMS / "own_loss_divided.py"
    own_fixed = fixed_copy(own, tmp_path / "own", unsafe=True).path
    super_loss = PROGRAMS / "super_loss.py"
    super_fixed = fixed_copy(super_loss, tmp_path / "super", target=">=4.46,<6").path
    specs = {
        "own@4.45": Spec(own, release=old),
        "super@4.45": Spec(super_loss, release=old),
        "own@4.46": Spec(own, release=first),
        "own_fixed@4.46": Spec(own_fixed, release=first),
        "divided@4.46": Spec(divided, release=first),
        "super_fixed@4.46": Spec(super_fixed, release=first),
        "own_fixed@5": Spec(own_fixed),
        "divided@5": Spec(divided),
        "super_fixed@5": Spec(super_fixed),
        "plain@4.45": Spec(PROGRAMS / "plain.py", release=old),
        "plain@4.46": Spec(PROGRAMS / "plain.py", release=first),
    }
    r = dict(zip(specs, run_specs(list(specs.values()))))
    assert not r["own@4.45"].failed and r["own@4.45"].release == "4.45.2"
    assert r["own@4.46"].phase("ga1/train").error.startswith("TypeError")  # type: ignore[union-attr]
    for name in ("own_fixed@4.46", "own_fixed@5"):  # the case: twice the loss at GA=2
        assert _loss_ratio(r["own@4.45"], r[name], "ga2/train") == [2.0] * 4, name
        assert _loss_ratio(r["own@4.45"], r[name], "ga1/train") == [1.0] * 4, name
    for name in ("divided@4.46", "divided@5"):  # what the message asks for trains as before
        assert compare(r["own@4.45"], r[name], ignore=ACROSS_RELEASES) == [], name
    # The safe fix (forwarded to super()) trains as the original did on 4.45.2 ...
    assert compare(r["super@4.45"], r["super_fixed@5"], ignore=ACROSS_RELEASES) == []
    # ... and on 4.46.3 as the plain Trainer does there: 4.46 itself scales a causal LM's loss by
    # (T-1)/T (it counts unshifted labels in num_items_in_batch), with or without an override.
    assert compare(r["plain@4.45"], r["plain@4.46"], ignore=ACROSS_RELEASES) != []
    assert compare(r["plain@4.46"], r["super_fixed@4.46"], ignore=(*ACROSS_RELEASES, "lines")) == []


def test_step_fix_is_safe_only_where_it_can_forward(tmp_path: Path) -> None:
    """The blind test split's case (``oracle_matrix.py --test-split``, 2026-12-07): a 4.45-era
    ``training_step(self, model, inputs)`` calling ``super()``. With 4.44-4.45 in the range the fix cannot
    pass ``num_items_in_batch`` on (their ``training_step`` does not take it), and 4.46-4.47 then skip
    the division by the accumulation steps: unsafe, with the reason. From 4.46 on it forwards: safe."""
    kept = fixed_copy(PROGRAMS / "step_super.py", tmp_path / "a")
    assert not kept.changed and "TW301 [*]" not in kept.output
    assert "adding it alone is unsafe" in " ".join(kept.output.split())
    forwarded = fixed_copy(PROGRAMS / "step_super.py", tmp_path / "b", target=">=4.46,<6")
    assert forwarded.changed, forwarded.output
    assert "num_items_in_batch=num_items_in_batch" in forwarded.path.read_text()


@pytest.mark.slow
def test_step_fix_across_releases(tmp_path: Path, installed_release) -> None:
    """Unforwarded, the fixed ``training_step`` trains with twice the gradient norm at GA=2 on 4.46.3
    (the same loss); forwarded, as the plain Trainer does on 4.46.3 and as the original did on 4.45.2
    on the pinned release."""
    old, first = installed_release("4.45.2", "4.46.3")
    step = PROGRAMS / "step_super.py"
    alone = fixed_copy(step, tmp_path / "alone", unsafe=True).path
    forwarded = fixed_copy(step, tmp_path / "fwd", target=">=4.46,<6").path
    specs = {
        "step@4.45": Spec(step, release=old, resume=False),
        "alone@4.46": Spec(alone, release=first, resume=False),
        "forwarded@4.46": Spec(forwarded, release=first, resume=False),
        "plain@4.46": Spec(PROGRAMS / "plain.py", release=first, resume=False),
        "alone@5": Spec(alone, resume=False),
        "forwarded@5": Spec(forwarded, resume=False),
    }
    r = dict(zip(specs, run_specs(list(specs.values()))))
    assert not any(record.failed for record in r.values()), {k: v.error for k, v in r.items()}
    before, unforwarded = r["step@4.45"].phase("ga2/train"), r["alone@4.46"].phase("ga2/train")
    assert before is not None and unforwarded is not None
    assert [round(b.grad_norm / a.grad_norm, 2) for a, b in zip(before.steps, unforwarded.steps)] == [2.0] * 4
    assert _loss_ratio(r["step@4.45"], r["alone@4.46"], "ga2/train") == [1.0] * 4
    assert compare(r["plain@4.46"], r["forwarded@4.46"], ignore=(*ACROSS_RELEASES, "lines")) == []
    for name in ("alone@5", "forwarded@5"):  # 4.48+ divide when it is None; 5.x count shifted labels
        assert compare(r["step@4.45"], r[name], ignore=ACROSS_RELEASES) == [], name


def test_copied_step_fix_is_unsafe_with_its_reason(tmp_path: Path) -> None:
    """The blind test split's case (``oracle_matrix.py --test-split``, 2026-12-08, a Kaggle project's AWP
    trainer): a ``training_step`` copied from 4.45 (no ``super()``) that leaves the division to
    ``accelerator.backward``. Its fix is unsafe on every range (the original runs only up to 4.45)."""
    for target in (">=4.44,<6", ">=4.46,<6"):
        kept = fixed_copy(PROGRAMS / "step_copy.py", tmp_path / target[2:6], target=target)
        assert not kept.changed and "TW301 [*]" not in kept.output, kept.output
        assert "4.46+ do not, so adding it alone is unsafe" in " ".join(kept.output.split())


@pytest.mark.slow
def test_copied_step_fix_across_releases(tmp_path: Path, installed_release) -> None:
    """Fixed alone, the copied step trains with twice the gradient norm at GA=2 on 4.46.3 and the pinned
    release against the original on 4.45.2 (the same loss); with the division the message asks for, the
    same training."""
    old, first = installed_release("4.45.2", "4.46.3")
    step = PROGRAMS / "step_copy.py"
    alone = fixed_copy(step, tmp_path / "alone", unsafe=True).path
    divided = PROGRAMS / "step_copy_divided.py"
    specs = {
        "step@4.45": Spec(step, release=old, resume=False),
        "alone@4.46": Spec(alone, release=first, resume=False),
        "alone@5": Spec(alone, resume=False),
        "divided@4.46": Spec(divided, release=first, resume=False),
        "divided@5": Spec(divided, resume=False),
    }
    r = dict(zip(specs, run_specs(list(specs.values()))))
    assert not any(record.failed for record in r.values()), {k: v.error for k, v in r.items()}
    before = r["step@4.45"].phase("ga2/train")
    for name in ("alone@4.46", "alone@5"):
        after = r[name].phase("ga2/train")
        assert before is not None and after is not None
        assert [round(b.grad_norm / a.grad_norm, 2) for a, b in zip(before.steps, after.steps)] == [2.0] * 4
        assert _loss_ratio(r["step@4.45"], r[name], "ga2/train") == [1.0] * 4
    for name in ("divided@4.46", "divided@5"):
        assert compare(r["step@4.45"], r[name], ignore=ACROSS_RELEASES) == [], name


def test_dropping_num_items_from_super_is_unsafe(tmp_path: Path) -> None:
    """TW302 on a range from 4.44: the oracle found the gallery's ``GcTrainer`` with
    ``super().training_step(model, inputs)`` training with 8/7 of the loss on 4.46.3."""
    gallery = Path(__file__).resolve().parents[2] / "examples" / "gallery" / "memory_before.py"
    kept = fixed_copy(gallery, tmp_path)
    assert not kept.changed and "TW302 [*]" not in kept.output
    assert "dropping `num_items_in_batch` is an unsafe fix" in " ".join(kept.output.split())
    # TW302 alone: with every rule, --unsafe-fixes now moves the whole override out (TW201, issue 33).
    unsafe = fixed_copy(gallery, tmp_path / "unsafe", unsafe=True, select="TW302")
    assert "super().training_step(model, inputs)" in unsafe.path.read_text()
