"""The move of code around a ``training_step`` copied rather than extended (``rules/_reimplemented.py``): the
copied body stands where ``super().training_step()`` would, an ``if``/``else`` whose branches all move moves
whole, and the moved code's ``model`` is the one the loop hands ``training_step``. Whether the moved program
trains the same is the oracle's question (``tests/oracle/moves/head_and_tail_of_copied_training_step.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from lint_helpers import dedent, fix_text, lint_text

FIXTURE = (
    Path(__file__).resolve().parents[1] / "oracle" / "moves" / "head_and_tail_of_copied_training_step.py"
)

COPY = """
    import gc

    from transformers import Trainer

    class T(Trainer):
        def training_step(self, model, inputs, num_items_in_batch=None):
            {head}
            model.train()
            inputs = self._prepare_inputs(inputs)
            loss = self.compute_loss(model, inputs)
            {middle}
            self.accelerator.backward(loss)
            {tail}
            return loss.detach()
"""
GATED = "if self.state.global_step % 5 == 0:\n                gc.collect()"


def _copy(head: str = "pass", middle: str = "pass", tail: str = "pass") -> str:
    return dedent(COPY.format(head=head, middle=middle, tail=tail))


def _handlers(fixed: str) -> list[str]:
    tree = ast.parse(fixed)
    (callback,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Callback")]
    return [n.name for n in callback.body if isinstance(n, ast.FunctionDef) and n.name.startswith("on_")]


def test_code_at_the_tail_of_a_copied_body_runs_right_after_each_micro_batch() -> None:
    source = _copy(tail=GATED)
    (finding,) = [f for f in lint_text(source) if f.code == "TW201"]  # gated code: on by default
    assert finding.fix is not None
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    assert _handlers(fixed) == ["on_substep_end", "on_pre_optimizer_step"]
    body = fixed[fixed.index("def training_step") :]
    assert "gc.collect()" not in body and "self.accelerator.backward(loss)" in body and "return loss" in body


def test_code_at_the_head_of_a_copied_body_runs_right_before_each_micro_batch() -> None:
    fixed = fix_text(_copy(head=GATED), unsafe=True).fixed.decode("utf-8")
    assert _handlers(fixed) == ["on_step_begin", "on_substep_end"]


@pytest.mark.parametrize(
    ("where", "why"),
    [
        ({"middle": GATED}, "between the copied statements: no event fires there"),
        (
            {"tail": GATED, "middle": "if loss is None:\n                return None"},
            "an early return skips it",
        ),
        ({"tail": f"{GATED}\n                loss = loss * 1"}, "the return reads what it sets"),
    ],
)
def test_a_copied_body_the_code_is_not_around_keeps_the_fix_off(where: dict[str, str], why: str) -> None:
    source = _copy(**where)
    assert all(f.fix is None for f in lint_text(source, preview=True) if f.code == "TW201"), why
    assert not fix_text(source, unsafe=True).changed, why


def test_an_if_else_whose_branches_all_move_moves_whole_with_its_test() -> None:
    fixed = FIXTURE.read_text()
    moved = fix_text(fixed, unsafe=True).fixed.decode("utf-8")
    callback = moved[: moved.index("class CopiedStepTrainer(Trainer)")]
    assert "if trainer.args.n_gpu > 1:" in callback and "else:" in callback
    assert "trainer.micro_batches += 1" in callback  # the counter only the moved code reads moves too
    assert "self.micro_batches += 1" not in moved[moved.index("def training_step") :]


def test_an_if_else_with_a_branch_that_stays_is_not_moved() -> None:
    tail = (
        "if self.args.n_gpu > 1:\n                self.sync_counters()\n            else:\n"
        "                " + GATED.replace("\n", "\n    ")
    )
    source = _copy(tail=tail)
    assert all(f.fix is None for f in lint_text(source, preview=True) if f.code == "TW201")


def test_the_moved_code_reads_the_model_the_loop_hands_training_step() -> None:
    # an event's ``model`` is the bare model; ``training_step`` gets the wrapped one (DDP, DeepSpeed)
    source = dedent("""
        from transformers import Trainer

        class T(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                loss = super().training_step(model, inputs, num_items_in_batch)
                if self.state.global_step % 10 == 0:
                    print(type(model).__name__)
                return loss
    """)
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    assert "model = self.trainer.model_wrapped" in fixed and 'kwargs.get("model")' not in fixed


def test_a_copied_body_of_another_method_is_not_split() -> None:
    # ``compute_loss`` runs inside the micro-batch and during evaluation: no copy of it is split
    source = dedent("""
        import gc

        from transformers import Trainer

        class T(Trainer):
            def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                outputs = model(**inputs)
                if self.state.global_step % 5 == 0:
                    gc.collect()
                return outputs.loss
    """)
    assert not fix_text(source, unsafe=True).changed
