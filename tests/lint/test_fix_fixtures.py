"""Fixes over before/after fixtures: the exact expected output, comments and layout kept, the result
parses and lints clean of what was fixed, a second run changes nothing, unsafe fixes only on request."""

from __future__ import annotations

import ast

import pytest
from lint_helpers import FIXTURES, fix_text, lint_text

CASES = sorted(p.name.removesuffix(".before.py") for p in (FIXTURES / "fix").glob("*.before.py"))
UNSAFE = {"tw401_misspelt_event", "tw201_move_to_callback", "tw202_move_to_callback"}


def read(name: str) -> str:
    return (FIXTURES / "fix" / name).read_text(encoding="utf-8")


def test_every_fixable_rule_has_a_fixture() -> None:
    from trainwright_lint.rules import fixable

    assert {c.split("_", 1)[0].upper() for c in CASES} == set(fixable())


@pytest.mark.parametrize("case", CASES)
def test_fixture(case: str) -> None:
    before, after = read(f"{case}.before.py"), read(f"{case}.after.py")
    code = case.split("_", 1)[0].upper()
    assert code in {f.code for f in lint_text(before)}, "the fixture must trigger its rule"
    outcome = fix_text(before, unsafe=case in UNSAFE)
    fixed = outcome.fixed.decode("utf-8")
    assert fixed == after
    ast.parse(fixed)
    assert code not in {f.code for f in lint_text(fixed)}
    assert {f.code for f in outcome.applied} == {code}
    assert fix_text(fixed, unsafe=True).fixed.decode("utf-8") == fixed  # idempotent


@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_unsafe_fix_needs_opt_in(case: str) -> None:
    before = read(f"{case}.before.py")
    outcome = fix_text(before, unsafe=False)
    assert not outcome.changed
    assert case.split("_", 1)[0].upper() in {f.code for f in outcome.remaining}


def test_ambiguous_event_is_not_renamed() -> None:
    source = (
        "from transformers import TrainerCallback\n\n\n"
        "class C(TrainerCallback):\n"
        "    def on_step(self, args, state, control, **kwargs):\n"
        "        pass\n"
    )
    assert "TW401" in {f.code for f in lint_text(source)}
    assert not fix_text(source, unsafe=True).changed  # on_step_begin or on_step_end? not ours to pick


def test_keyword_only_when_the_override_takes_star_args() -> None:
    source = (
        "from transformers import Trainer\n\n\n"
        "class T(Trainer):\n"
        "    def log(self, logs, *args):\n"
        "        super().log(logs, *args)\n"
    )
    # A *args override accepts every positional call: nothing to fix, nothing changed.
    assert not fix_text(source).changed


def test_positional_slot_mismatch_is_left_alone() -> None:
    """compute_loss(self, model, inputs, num_items_in_batch=None) lacks return_outputs in the middle:
    appending it would not restore positional binding, so it becomes keyword-only or is not fixed."""
    source = (
        "from transformers import Trainer\n\n\n"
        "class T(Trainer):\n"
        "    def compute_loss(self, model, inputs, num_items_in_batch=None):\n"
        "        return super().compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)\n"
    )
    outcome = fix_text(source)
    fixed = outcome.fixed.decode()
    ast.parse(fixed)
    if outcome.changed:
        assert "*, return_outputs=False" in fixed
    assert "TW301" not in {f.code for f in lint_text(fixed)} or not outcome.changed
