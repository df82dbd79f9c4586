"""The TW201/TW202 move (``rules/_move.py``): where the moved code runs, what it may read, and what the
fix writes into a file with several trainers. Whether the moved program trains the same is the
oracle's question (``tests/oracle/test_moves.py``); these are the planner's own facts."""

from __future__ import annotations

import ast

import pytest
from lint_helpers import dedent, fix_text, lint_text
from trainwright_lint.rules._move import MICRO_BATCH_EVENTS, MICRO_BATCH_SPAN, PER_MICRO_BATCH

from trainwright.catalog.events import load_events

GATED = """
    class {name}(Trainer):
        def training_step(self, model, inputs, num_items_in_batch=None):
            loss = super().training_step(model, inputs, num_items_in_batch)
            if self.state.global_step % {every} == 0:
                gc.collect()
            return loss
"""


@pytest.mark.parametrize("version", ["5.24.0", "5.25.0"])
def test_per_micro_batch_events_bracket_each_micro_batch_in_the_table(version: str) -> None:
    table = load_events().at(version)
    for method in PER_MICRO_BATCH:
        for path in table.paths(method):
            hop = path.hops[-1]
            assert hop.caller == "_run_epoch", path.text(method)
            assert MICRO_BATCH_EVENTS[0] in hop.before
            after = {e for e, sides in MICRO_BATCH_SPAN if "after" in sides}
            assert after <= set(hop.after) and MICRO_BATCH_EVENTS[1] in hop.after


def test_a_second_trainer_in_the_file_gets_no_second_import() -> None:
    source = "import gc\n\nfrom transformers import Trainer\n\n" + "\n".join(
        dedent(GATED.format(name=n, every=e)) for n, e in (("FirstTrainer", 50), ("SecondTrainer", 20))
    )
    assert [f.code for f in lint_text(source)] == ["TW201", "TW201"]
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    ast.parse(fixed)
    assert fixed.count("import TrainerCallback") == 1
    assert fixed.index("import TrainerCallback") < fixed.index("class FirstTrainerTrainingStepCallback")
    assert "self.add_callback(FirstTrainerTrainingStepCallback(self))" in fixed
    assert "self.add_callback(SecondTrainerTrainingStepCallback(self))" in fixed


def test_the_moved_code_runs_once_per_micro_batch_with_the_steps_state() -> None:
    source = "import gc\n\nfrom transformers import Trainer\n\n" + dedent(GATED.format(name="T", every=5))
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    assert "def on_step_begin(" in fixed and "def on_substep_end(" in fixed
    assert "def on_step_end(" not in fixed  # there, global_step is already the next step's


def test_a_pure_local_the_code_reads_moves_with_it() -> None:
    source = dedent("""
        import os
        from transformers import Trainer

        class T(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                loss = super().training_step(model, inputs, num_items_in_batch)
                out = self.args.output_dir
                if self.state.global_step % 10 == 0:
                    with open(os.path.join(out, "progress.txt"), "a") as handle:
                        handle.write("step\\n")
                return loss
    """)
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    ast.parse(fixed)
    assert "def training_step" not in fixed  # nothing left but ``return super()...``
    assert fixed.count("out = trainer.args.output_dir") == 2  # in both event methods


def test_a_local_with_an_effect_of_its_own_keeps_the_fix_off() -> None:
    source = dedent("""
        import os
        from transformers import Trainer

        class T(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                loss = super().training_step(model, inputs, num_items_in_batch)
                out = self.make_folder()
                if self.state.global_step % 10 == 0:
                    with open(os.path.join(out, "progress.txt"), "a") as handle:
                        handle.write("step\\n")
                return loss
    """)
    findings = [f for f in lint_text(source) if f.code == "TW201"]
    if findings:  # a finding without a proven move must not carry the fix
        assert all(f.fix is None for f in findings)
    assert not fix_text(source, unsafe=True).changed


def test_a_suppressed_first_move_leaves_the_import_to_the_next() -> None:
    first = dedent(GATED.format(name="FirstTrainer", every=50)).replace("== 0:", "== 0:  # noqa: TW201")
    source = (
        "import gc\n\nfrom transformers import Trainer\n\n"
        + first
        + "\n"
        + dedent(GATED.format(name="SecondTrainer", every=20))
    )
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    assert "FirstTrainerTrainingStepCallback" not in fixed  # suppressed: not moved
    assert fixed.count("import TrainerCallback") == 1
    assert fixed.index("import TrainerCallback") < fixed.index("class SecondTrainerTrainingStepCallback")
