"""The TW201/TW202 move (``rules/_move.py``): where the moved code runs, what it may read, and what the
fix writes into a file with several trainers. Whether the moved program trains the same is the
oracle's question (``tests/oracle/test_moves.py``); these are the planner's own facts."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from lint_helpers import dedent, fix_text, lint_text
from trainwright_lint.finding import Finding
from trainwright_lint.rules._move import MICRO_BATCH_EVENTS, MICRO_BATCH_SPAN, PER_MICRO_BATCH
from trainwright_lint.rules.base import NO_MOVE

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
    assert [f.code for f in lint_text(source, preview=True)] == ["TW201", "TW201"]  # a preview variant
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    ast.parse(fixed)
    assert fixed.count("import TrainerCallback") == 1
    assert fixed.index("import TrainerCallback") < fixed.index("class FirstTrainerTrainingStepCallback")
    assert "self.add_callback(FirstTrainerTrainingStepCallback(self))" in fixed
    assert "self.add_callback(SecondTrainerTrainingStepCallback(self))" in fixed


def test_code_after_the_call_runs_right_after_each_micro_batch() -> None:
    # after each micro-batch, before the optimiser step: the step's number, the model in training mode
    # (``tests/oracle/moves/train_mode_print_after_training_step.py``)
    source = "import gc\n\nfrom transformers import Trainer\n\n" + dedent(GATED.format(name="T", every=5))
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    assert "def on_substep_end(" in fixed and "def on_pre_optimizer_step(" in fixed
    assert "def on_step_begin(" not in fixed  # before the next micro-batch: one micro-batch early
    assert "def on_step_end(" not in fixed  # there, global_step is already the next step's


def test_code_before_the_call_runs_right_before_each_micro_batch() -> None:
    source = dedent("""
        import gc

        from transformers import Trainer

        class T(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                if self.state.global_step % 5 == 0:
                    gc.collect()
                return super().training_step(model, inputs, num_items_in_batch)
    """)
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    assert "def on_step_begin(" in fixed and "def on_substep_end(" in fixed
    assert "def on_pre_optimizer_step(" not in fixed and "def on_step_end(" not in fixed


def test_code_after_the_call_that_reads_gradients_has_no_move() -> None:
    source = (REFUSED / "grad_print_after_training_step.py").read_text()
    assert not _moves(source, "TW201")
    (finding,) = _moves(source, "TW201", preview=True)
    assert finding.fix is None and "clips at the last micro-batch" in finding.fix_note


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


MOVES = Path(__file__).resolve().parents[1] / "oracle" / "moves"
REFUSED = MOVES.parent / "refused"  # placements found not to be the same program: no move

BRANCHES = """
    import os
    from pathlib import Path
    from transformers import Trainer

    class T(Trainer):
        def _save_checkpoint(self, model, trial):
            if self.args.hub_model_id is None:
                name = Path(self.args.output_dir).name
            else:
                {other}
            super()._save_checkpoint(model, trial)
            with open(os.path.join(self.args.output_dir, "CARD.md"), "w") as f:
                f.write(name)
"""


def _moves(source: str, code: str, preview: bool = False) -> list[Finding]:
    return [f for f in lint_text(source, preview=preview) if f.code == code]


def test_a_local_set_by_branches_of_pure_assignments_moves_with_the_code() -> None:
    source = dedent(BRANCHES.format(other='name = self.args.hub_model_id.split("/")[-1]'))
    (finding,) = _moves(source, "TW202")
    assert finding.fix is not None
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    ast.parse(fixed)
    handler = fixed[fixed.index("def on_save") : fixed.index("class T(Trainer)")]
    assert "if trainer.args.hub_model_id is None:" in handler and "else:" in handler
    assert handler.index("name = Path(") < handler.index("f.write(name)")
    assert "def _save_checkpoint" not in fixed  # nothing left but the ``super()`` call


def test_a_file_written_before_the_checkpoint_push_gets_no_move() -> None:
    # ``_save_checkpoint`` pushes the output folder inside the call (``push_to_hub``): a card written
    # before it goes up with the checkpoint, one written at ``on_save`` may not
    source = (REFUSED / "model_card_before_checkpoint.py").read_text()
    assert not _moves(source, "TW202") and not fix_text(source, unsafe=True).changed
    assert _moves(source, "TW202", preview=True)  # the finding stays visible under --preview, without a fix
    printed = dedent("""
        from transformers import Trainer

        class T(Trainer):
            def _save_checkpoint(self, model, trial):
                print("saving", self.state.global_step)
                super()._save_checkpoint(model, trial)
    """)
    assert fix_text(printed, unsafe=True).changed  # a print is not pushed: it still moves to ``on_save``


@pytest.mark.parametrize(
    "other",
    [
        "name = self.next_name()",  # a call of the trainer's own: may have an effect
        'name = random.choice(["a", "b"])',  # draws from the RNG: an effect of its own
        'name = self.args.hub_model_id.split("/")[-1]\n                trial.report(1)',  # reads a parameter
    ],
)
def test_branches_that_do_more_than_assign_keep_the_fix_off(other: str) -> None:
    source = dedent(BRANCHES.format(other=other))
    assert all(f.fix is None for f in _moves(source, "TW202"))
    assert not fix_text(source, unsafe=True).changed


def test_trial_is_read_from_the_trainer_that_holds_it() -> None:
    source = (MOVES / "trial_folder_file_after_checkpoint.py").read_text()
    (finding,) = _moves(source, "TW202")
    assert finding.fix is not None
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    ast.parse(fixed)
    assert "trial = self.trainer._trial" in fixed
    assert "trainer._get_output_dir(trial=trial)" in fixed


def test_a_parameter_no_event_receives_and_no_trainer_holds_keeps_the_fix_off() -> None:
    source = dedent("""
        from transformers import Trainer

        class T(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                loss = super().training_step(model, inputs, num_items_in_batch)
                if self.state.global_step % 10 == 0:
                    print(num_items_in_batch)
                return loss
    """)
    assert all(f.fix is None for f in _moves(source, "TW201"))


TIMER = """
    import time
    from transformers import Trainer

    class T(Trainer):
        def training_step(self, model, inputs, num_items_in_batch=None):
            time_before = time.perf_counter()
            output = super().training_step(model, inputs, num_items_in_batch)
            {first}
            self._span += time.perf_counter() - time_before
            if self._micro % self.args.gradient_accumulation_steps == 0:
                self._times.append(self._span)
                self._span = 0.0
            {last}
            return output

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            if self._micro < 0:
                raise RuntimeError("negative")
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
"""


def test_a_counter_left_in_the_override_before_the_moved_code_is_read_at_the_event() -> None:
    source = dedent(TIMER.format(first="self._micro += 1", last="pass"))
    (finding,) = _moves(source, "TW201", preview=True)  # `training_step`: a preview variant
    assert finding.fix is not None
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    override = fixed[fixed.index("class T(Trainer)") :]
    assert "self._micro += 1" in override and "self._times" not in override
    assert "if trainer._micro % trainer.args.gradient_accumulation_steps == 0:" in fixed


def test_a_counter_written_after_the_moved_code_keeps_the_fix_off() -> None:
    # the event fires after the method: it would see the counter one micro-batch later than the code did
    source = dedent(TIMER.format(first="pass", last="self._micro += 1"))
    assert all(f.fix is None for f in _moves(source, "TW201"))


def test_a_timer_around_work_the_override_keeps_gets_no_move() -> None:
    # both reads of the clock go to one event: the samples drawn between them would go untimed
    source = dedent("""
        import time
        import torch
        import wandb
        from transformers import Trainer
        from transformers.integrations import is_wandb_available

        class T(Trainer):
            def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
                if is_wandb_available():
                    start = time.time()
                    with torch.no_grad():
                        self.model.eval()
                        self._draw_samples(eval_dataset)
                    spent = time.time() - start
                metrics = super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
                if is_wandb_available():
                    wandb.log({"eval_time": time.time() - start + spent}, step=self.state.global_step)
                return metrics
    """)
    assert _moves(source, "TW201", preview=True)
    assert all(f.fix is None for f in _moves(source, "TW201", preview=True))
    # the preview's "move it to a TrainerCallback" is not advice the tool checked: its note says why
    assert all(f.fix_note for f in _moves(source, "TW201", preview=True))
    assert not _moves(source, "TW201")  # no move, no finding (shown with --preview only)
    assert not fix_text(source, unsafe=True).changed


def test_a_finding_without_a_move_says_so_when_the_planner_names_no_reason() -> None:
    # file lines after ``super().log()``, then the override dispatches ``on_log`` a second time itself: a
    # callback at ``on_log`` would write each line twice, and the planner writes no move
    source = dedent("""
        from transformers import Trainer

        class TwiceLogged(Trainer):
            def log(self, logs, start_time=None):
                super().log(logs, start_time)
                with open("lines.txt", "a") as f:
                    f.write(str(logs))
                logs["epoch"] = self.state.epoch
                self.callback_handler.on_log(self.args, self.state, self.control, logs)
    """)
    (finding,) = _moves(source, "TW201", preview=True)
    assert finding.fix is None and finding.fix_note == NO_MOVE
    assert not _moves(source, "TW201")


PROGRAMS = Path(__file__).resolve().parents[1] / "oracle" / "programs"


@pytest.mark.parametrize(
    ("program", "reason"),
    [
        # issue 32: both halves of the timer would run back to back in ``on_prediction_step``
        ("predict_timer.py", "no event begins `prediction_step`"),
        # issue 32: the print before ``evaluate`` would run at every ``on_step_end``
        ("eval_print.py", "`evaluate` only when `control.should_evaluate` is set"),
    ],
)
def test_a_move_that_runs_the_code_at_another_moment_is_not_written(program: str, reason: str) -> None:
    source = (PROGRAMS / program).read_text(encoding="utf-8")
    findings = [f for f in lint_text(source, version="5.24.0", preview=True) if f.code.startswith("TW20")]
    assert findings and all(f.fix is None for f in findings)
    assert any(reason in f.fix_note for f in findings), [f.fix_note for f in findings]
    assert not [
        f for f in lint_text(source, version="5.24.0") if f.code.startswith("TW20")
    ]  # no move, no finding
    assert not fix_text(source, unsafe=True, version="5.24.0").changed


SAMPLE_TABLE = """
    import random

    from transformers import Trainer


    class TableTrainer(Trainer):
        def evaluation_loop(self, dataloader, description, prediction_loss_only=None, ignore_keys=None,
                            metric_key_prefix="eval"):
            if self.generate_during_eval:
                picked = random.sample(range(len(dataloader.dataset)), k=2)
                rows = self.sample_rows(dataloader.dataset.select(picked))
                self.log({"game_log": rows})
{after_log}
            return super().evaluation_loop(dataloader, description, prediction_loss_only, ignore_keys,
                                           metric_key_prefix)
"""


def test_a_sample_table_before_the_evaluation_loop_gets_no_move() -> None:
    # ``self.log(x); self.state.log_history.pop()`` (old TRL DPO trainers' sample table) is a tracker upload,
    # but no event fires before the loop, and after it the model is in ``eval()``: no move, no finding
    pop = " " * 16 + "self.state.log_history.pop()"
    source = dedent(SAMPLE_TABLE.replace("{after_log}", pop))
    assert not [f for f in lint_text(source, version="5.24.0") if f.code.startswith("TW20")]
    (finding,) = [f for f in lint_text(source, version="5.24.0", preview=True) if f.code.startswith("TW20")]
    assert finding.fix is None
    assert not fix_text(source, unsafe=True, version="5.24.0").changed
    # a pop that undoes something else changes what the Trainer records: not even a preview finding
    other = " " * 16 + "self.state.log_history.pop(0)"
    kept = dedent(SAMPLE_TABLE.replace("{after_log}", other))
    assert not [f for f in lint_text(kept, version="5.24.0", preview=True) if f.code.startswith("TW20")]


@pytest.mark.parametrize("program", sorted(REFUSED.glob("*.py")), ids=lambda p: p.stem)
def test_a_refused_placement_is_never_written(program: Path) -> None:
    """Each of ``tests/oracle/refused/`` once moved and the oracle found it equal; its docstring says what
    the oracle could not see. None is written now."""
    assert not fix_text(program.read_text(encoding="utf-8"), unsafe=True, version="5.24.0").changed


KEPT_CONDITION = """
    from transformers import Trainer


    class WarmTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            {before}
            if {test}:
                model.config.use_cache = False
                if self.state.global_step % 100 == 0:
                    print(f"warm at step {{self.state.global_step}}")
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
"""


def _kept(test: str, before: str = "pass") -> str:
    return dedent(KEPT_CONDITION.format(test=test, before=before))


def test_a_condition_that_holds_the_moved_code_moves_with_it() -> None:
    source = _kept("self.args.warmup_steps > 0 and self.is_world_process_zero()")
    (finding,) = _moves(source, "TW201")
    assert finding.fix is not None
    moved = fix_text(source, unsafe=True, version="5.24.0").fixed.decode()
    # in every event the callback writes, and nowhere without it
    guard = "if trainer.args.warmup_steps > 0 and trainer.is_world_process_zero():"
    assert moved.count(guard) == moved.count('print(f"warm at step') == 3


@pytest.mark.parametrize(
    ("test", "before", "why"),
    [
        ("now > self.deadline", "now = time.time()", "under a condition it cannot test alike"),
        ("self.ready()", "pass", "under a condition it cannot test alike"),
        ("self.warm", "self.warm = len(inputs) > 1", "changes `self.warm`"),
    ],
)
def test_a_condition_a_callback_cannot_test_alike_refuses_the_move(test: str, before: str, why: str) -> None:
    (finding,) = _moves(_kept(test, before), "TW201", preview=True)
    assert finding.fix is None and why in finding.fix_note
    assert not _moves(_kept(test, before), "TW201")  # no move, no finding


def test_code_in_a_loop_or_an_else_is_not_moved() -> None:
    loop = _kept("True").replace("if True:", "for _ in range(2):")
    other = _kept("self.args.seed == 1").replace(
        "model.config.use_cache = False", "model.config.use_cache = False\n        else:"
    )
    for source in (loop, other):
        (finding,) = _moves(source, "TW201", preview=True)
        assert finding.fix is None and "without that condition" in finding.fix_note, source


def test_code_inside_a_with_that_stays_still_moves() -> None:
    # a context manager decides no *whether*: the statement ran once per call, as the event does
    source = dedent("""
        import torch
        from transformers import Seq2SeqTrainer


        class CacheClearing(Seq2SeqTrainer):
            def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None, **gen_kwargs):
                with torch.no_grad():
                    out = super().prediction_step(model, inputs, prediction_loss_only, ignore_keys, **gen_kwargs)
                    torch.cuda.empty_cache()
                return out
    """)
    (finding,) = _moves(source, "TW201")
    assert finding.fix is not None and "on_prediction_step" in finding.fix.describe()


def test_code_before_the_evaluation_loop_never_moves_to_a_step_event() -> None:
    # ``evaluation_loop`` runs only when ``control.should_evaluate`` is set (and for ``predict``)
    source = dedent("""
        from transformers import Trainer


        class LoudTrainer(Trainer):
            def evaluation_loop(self, dataloader, *args, **kwargs):
                print("evaluating", self.state.global_step)
                return super().evaluation_loop(dataloader, *args, **kwargs)
    """)
    for f in lint_text(source, version="5.24.0", preview=True):
        assert f.fix is None or "on_step_end" not in f.fix.describe(), f.fix.describe()


CONDITIONAL_LOG = """
    from transformers import Trainer


    class T(Trainer):
        def log(self, logs, start_time=None):
            {delegation}
            print("logged", logs)
"""


@pytest.mark.parametrize(
    "delegation",
    [
        "if self.args.report_to:\n                super().log(logs, start_time)",  # on one path only
        "if not logs:\n                return\n            super().log(logs, start_time)",  # a return before it
        "for _ in range(2):\n                super().log(logs, start_time)",  # any number of times
    ],
)
def test_code_around_a_super_call_that_may_not_run_never_moves(delegation: str) -> None:
    # ``on_log`` fires inside ``super().log()``: where the call may not run, the moved print would not either
    source = dedent(CONDITIONAL_LOG.format(delegation=delegation))
    assert all(f.fix is None for f in lint_text(source, version="5.24.0") if f.code.startswith("TW2"))
    assert not fix_text(source, unsafe=True).changed


def test_a_super_call_on_every_branch_still_moves() -> None:
    delegation = (
        "if self.args.report_to:\n                super().log(logs, start_time)\n"
        "            else:\n                super(Trainer, self).log(logs, start_time)"
    )
    source = dedent(CONDITIONAL_LOG.format(delegation=delegation))
    (finding,) = [f for f in lint_text(source, version="5.24.0") if f.code.startswith("TW2")]
    assert finding.fix is not None and "on_log" in finding.fix.describe()


def test_records_after_log_and_evaluate_move_with_the_locals_they_read() -> None:
    source = dedent("""
        from transformers import Trainer


        class T(Trainer):
            def log(self, logs, start_time=None):
                super().log(logs, start_time)
                epoch = round(logs.get("epoch", 0.0), 2)
                if "loss" in logs:
                    self.history.setdefault(epoch, []).append(logs["loss"])

            def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
                metrics = super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
                self.best = min(self.best, metrics["eval_loss"])
                return metrics
    """)
    found = [f for f in lint_text(source, version="5.24.0") if f.code.startswith("TW2")]
    assert [(f.code, f.fix is not None) for f in found] == [("TW201", True), ("TW201", True)]
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    ast.parse(fixed)
    on_log = fixed[fixed.index("def on_log") : fixed.index("class TEvaluateCallback")]
    assert 'logs = kwargs.get("logs")' in on_log
    assert on_log.index("epoch = round(") < on_log.index("trainer.history.setdefault(epoch, [])")
    on_evaluate = fixed[fixed.index("def on_evaluate") :]
    assert "trainer.best = min(trainer.best, metrics" in on_evaluate
    assert "def log" not in fixed and "def evaluate" not in fixed  # nothing left but the ``super()`` calls


def test_a_record_read_by_a_method_that_computes_stays() -> None:
    # ``compute_loss`` reads the record to compute: writing it is part of what the trainer computes
    source = dedent("""
        from transformers import Trainer


        class T(Trainer):
            def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
                metrics = super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
                self.best = min(self.best, metrics["eval_loss"])
                return metrics

            def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
                return loss * self.best
    """)
    assert not [f for f in lint_text(source, version="5.24.0") if f.code.startswith("TW2")]


def test_a_local_named_like_a_private_argument_is_judged_by_what_it_holds() -> None:
    # ``outputs`` holds the metrics ``on_evaluate`` receives; ``batch`` a number computed from ``state``
    source = dedent("""
        from transformers import Trainer


        class P(Trainer):
            def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
                outputs = super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
                print("eval", outputs)
                return outputs


        class Q(Trainer):
            def log(self, logs, start_time=None):
                super().log(logs, start_time)
                batch = self.state.global_step // 10
                print("batch", batch, logs)
    """)
    found = [f for f in lint_text(source, version="5.24.0") if f.code.startswith("TW2")]
    assert [(f.code, f.fix is not None) for f in found] == [("TW202", True), ("TW202", True)]
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    assert 'outputs = kwargs.get("metrics")' in fixed
    assert "batch = trainer.state.global_step // 10" in fixed


def test_the_users_line_under_an_upstream_condition_is_the_users() -> None:
    # ``if self.args.should_save:`` is a line of ``Trainer._save_checkpoint`` too; the log line under it is not
    source = dedent("""
        import logging

        from transformers import Trainer

        logger = logging.getLogger(__name__)


        class T(Trainer):
            def _save_checkpoint(self, model, trial):
                super()._save_checkpoint(model, trial)
                if self.args.should_save:
                    logger.info("saved checkpoint at %d", self.state.global_step)
    """)
    (finding,) = [f for f in lint_text(source, version="5.24.0") if f.code.startswith("TW2")]
    assert finding.code == "TW202" and finding.fix is not None
    assert "on_save" in finding.fix.describe()


GENERATED = """
    import torch
    from transformers import Trainer

    class T(Trainer):
        def {method}:
            result = super().{call}
            prompt = torch.tensor([[5, 6, 7]])
            out = self.model.generate(prompt, max_new_tokens=4, do_sample=True)
            print(out[0].tolist())
            return result
"""


@pytest.mark.parametrize(
    ("method", "call", "event"),
    [
        ("evaluate(self, *args, **kwargs)", "evaluate(*args, **kwargs)", "on_evaluate"),
        ("log(self, logs, start_time=None)", "log(logs, start_time)", "on_log"),
    ],
)
def test_a_sample_generated_as_the_events_method_returns_moves_with_its_locals(
    method: str, call: str, event: str
) -> None:
    """``out = model.generate(...)`` draws random numbers: it may move only where its event fires as the
    ``super()`` call returns, so that it runs at the same point of training (the chain of locals it
    reads, ``prompt`` then ``out``, moves with it)."""
    source = dedent(GENERATED.format(method=method, call=call))
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    ast.parse(fixed)
    assert f"def {event}(" in fixed
    callback = fixed[: fixed.index("class T(")]
    assert "prompt = torch.tensor" in callback and "out = trainer.model.generate(prompt" in callback


def test_a_sample_generated_after_a_micro_batch_keeps_the_fix_off() -> None:
    """After ``super().training_step()`` the next micro-batch's forward follows: sampling at any event
    would draw its random numbers at another point, so the generation does not move."""
    source = dedent(
        GENERATED.format(
            method="training_step(self, model, inputs, num_items_in_batch=None)",
            call="training_step(model, inputs, num_items_in_batch)",
        )
    )
    assert not fix_text(source, unsafe=True).changed


def test_a_path_built_in_two_steps_moves_whole() -> None:
    # the oracle's fixture: `checkpoint_folder`, then `output_dir` from it, then the file
    source = (MOVES / "extra_state_in_checkpoint_folder.py").read_text(encoding="utf-8")
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    ast.parse(fixed)
    assert "def _save_checkpoint" not in fixed
    on_save = fixed[fixed.index("def on_save(") : fixed.index("class ExtraStateTrainer(")]
    assert on_save.index("folder = ") < on_save.index("output_dir = ") < on_save.index("json.dump")


LOGGED = """
    from transformers import Trainer

    class T(Trainer):
        def evaluate(self, *args, **kwargs):
            metrics = super().evaluate(*args, **kwargs)
            {call}
            return metrics
"""


def test_a_log_made_by_the_moved_code_is_named_in_the_words_the_oracle_accepts() -> None:
    pytest.importorskip("torch")  # the oracle's side of the words lives with the runtime
    from trainwright.testing.compare import NESTED_LOG, named_differences

    source = dedent(LOGGED.format(call='self.log({"at_epoch": self.state.epoch})'))
    (finding,) = [f for f in lint_text(source) if f.code.startswith("TW2")]
    assert finding.fix is not None and NESTED_LOG in (finding.fix_note or "")
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    assert named_differences(fixed) == (NESTED_LOG,)


@pytest.mark.parametrize("call", ["self.predict(self.eval_dataset)", "self.evaluate(self.eval_dataset)"])
def test_moved_code_that_would_run_an_evaluation_inside_its_event_gets_no_move(call: str) -> None:
    source = dedent(LOGGED.format(call=f"print({call})"))
    assert not fix_text(source, unsafe=True).changed


def test_a_log_that_would_run_inside_on_log_gets_no_move() -> None:
    """Moved to ``on_log``, ``self.log(...)`` would dispatch ``on_log`` again and run the moved code inside
    itself: once more here, without end where its condition still holds then."""
    source = dedent("""
        from transformers import Trainer

        class T(Trainer):
            def log(self, logs, start_time=None):
                super().log(logs, start_time)
                if self.state.global_step % 10 == 0 and "loss" in logs:
                    self.log({"extra": 1.0})
    """)
    assert not fix_text(source, unsafe=True).changed


def test_a_log_per_micro_batch_moves_to_the_micro_batch_events_not_on_log() -> None:
    """TW201 names ``on_log`` among its events; the move of ``training_step``'s code goes to
    ``on_substep_end``/``on_pre_optimizer_step`` (right after each micro-batch), where ``self.log`` cannot
    call itself. Refused on the candidate
    events, ``tests/oracle/moves/gated_log_in_training_step.py`` had no move, and ``move_oracle.py``
    counted another unsafe fix of its run (TW302's) as one."""
    source = (Path(__file__).parents[1] / "oracle" / "moves" / "gated_log_in_training_step.py").read_text()
    fixed = fix_text(source, unsafe=True).fixed.decode("utf-8")
    assert (
        "def on_substep_end" in fixed and "def on_pre_optimizer_step" in fixed and "def on_log" not in fixed
    )
    assert "trainer.log(" in fixed and "def training_step" not in fixed


def test_code_after_the_log_save_evaluate_call_gets_no_move() -> None:
    """After ``super()._maybe_log_save_evaluate()`` the code runs after the log, evaluation and checkpoint
    of that call, where no event fires (``on_log`` fires only when it logs); before it, ``on_step_end``
    and ``on_epoch_end`` each precede one of its calls."""
    source = dedent("""
        from transformers import Trainer

        class T(Trainer):
            def _maybe_log_save_evaluate(self, *args, **kwargs):
                super()._maybe_log_save_evaluate(*args, **kwargs)
                if self.state.global_step % 2 == 0:
                    print("step", self.state.global_step)
    """)
    assert not fix_text(source, unsafe=True).changed
    before = (
        source.replace("        super()._maybe_log_save_evaluate(*args, **kwargs)\n", "").rstrip()
        + "\n        super()._maybe_log_save_evaluate(*args, **kwargs)\n"
    )
    fixed = fix_text(before, unsafe=True).fixed.decode("utf-8")
    assert "def on_step_end(" in fixed and "def on_epoch_end(" in fixed and "def on_log(" not in fixed


def _audit_program(method: str, variant: str) -> str:
    """The program ``scripts/move_audit.py`` trains for ``method`` and ``variant`` (it imports the oracle)."""
    pytest.importorskip("torch")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import move_audit

    return move_audit.program(method, variant)


@pytest.mark.parametrize(
    ("method", "variant"),
    [
        ("get_train_dataloader", "print-after"),  # went to on_step_end: once per step, not once
        ("create_optimizer", "gated-after"),  # went to on_log: at every log of an even step
        ("_load_rng_state", "print-before"),  # went to on_step_begin: every step, not on resume only
        ("_inner_training_loop", "print-before"),  # reads the state a resume restores before on_train_begin
        ("train", "print-before"),
    ],
)
def test_a_placement_the_oracle_found_different_is_not_written(method: str, variant: str) -> None:
    """``scripts/move_audit.py`` found these moves different from the override: none is written."""
    assert not fix_text(_audit_program(method, variant), unsafe=True).changed


BEFORE_MICRO_BATCH = {"on_step_begin", "on_substep_end"}


@pytest.mark.parametrize(
    ("method", "before", "after"),
    [
        # after ``training_step``: right after each micro-batch, before the optimiser step
        ("training_step", BEFORE_MICRO_BATCH, {"on_substep_end", "on_pre_optimizer_step"}),
        (
            "compute_loss",
            BEFORE_MICRO_BATCH | {"on_prediction_step"},
            BEFORE_MICRO_BATCH | {"on_prediction_step"},
        ),
        (
            "_prepare_inputs",
            BEFORE_MICRO_BATCH | {"on_prediction_step"},
            BEFORE_MICRO_BATCH | {"on_prediction_step"},
        ),
    ],
)
def test_code_run_per_micro_batch_moves_per_micro_batch_gated_or_not(
    method: str, before: set[str], after: set[str]
) -> None:
    for variant in ("print-before", "print-after", "file-after"):
        fixed = fix_text(_audit_program(method, variant), unsafe=True).fixed.decode("utf-8")
        written = {line.split("(")[0].split()[-1] for line in fixed.splitlines() if "def on_" in line}
        assert written == (before if variant.endswith("before") else after), (variant, written)


def test_code_before_log_that_reads_the_logs_gets_no_move() -> None:
    # ``Trainer.log`` adds ``epoch`` to ``logs`` before ``on_log`` (TRL's ``log`` merges its metrics first):
    # code before the call reads another dict than the event would hand it
    template = dedent("""
        from transformers import Trainer

        class T(Trainer):
            def log(self, logs, start_time=None):
                {first}
                {second}
    """)
    call, printed = "super().log(logs, start_time)", 'print("logged", logs)'
    assert not fix_text(template.format(first=printed, second=call), unsafe=True).changed
    after = fix_text(template.format(first=call, second=printed), unsafe=True).fixed.decode("utf-8")
    assert "def on_log(" in after  # after the call, the event's ``logs`` is the same dict
    step = template.format(first='print("step", self.state.global_step)', second=call)
    assert "def on_log(" in fix_text(step, unsafe=True).fixed.decode("utf-8")  # reads no ``logs``: moves


def test_the_code_after_the_checkpoint_moves_alone_when_the_code_before_cannot() -> None:
    source = (MOVES / "card_before_state_after_checkpoint.py").read_text(encoding="utf-8")
    fixed = fix_text(source, unsafe=True, version="5.24.0").fixed.decode("utf-8")
    handler = fixed[fixed.index("def on_save") : fixed.index("class CardAndStateTrainer(Trainer)")]
    assert "state.json" in handler and "CARD.md" not in handler
    override = fixed[fixed.index("class CardAndStateTrainer(Trainer)") :]
    assert "CARD.md" in override and "state.json" not in override  # the card goes up with the push


def test_the_code_before_the_call_moves_alone_when_the_code_after_reads_its_result() -> None:
    source = (MOVES / "print_before_step_result_check_kept.py").read_text(encoding="utf-8")
    (finding,) = lint_text(source)
    assert finding.code == "TW202" and finding.fix is not None
    assert "(line 12)" in finding.message and "printing" in finding.message
    assert "lines 14–15 stay in the override" in finding.fix_note
    assert "returns, which no callback event receives" in finding.fix_note
    fixed = fix_text(source, unsafe=True, version="5.24.0").fixed.decode("utf-8")
    callback = fixed[fixed.index("def on_step_begin") : fixed.index("class CheckedTrainer(Trainer)")]
    assert "clearing the cache" in callback and "nan loss" not in callback
    assert "def on_substep_end(" in callback
    override = fixed[fixed.index("class CheckedTrainer(Trainer)") :]
    assert "nan loss" in override and "clearing the cache" not in override


def test_one_side_does_not_move_alone_when_a_local_crosses_the_call() -> None:
    source = dedent(
        """
        import time
        from transformers import Trainer

        class T(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                stamp = self.state.global_step
                print("before", stamp)
                loss = super().training_step(model, inputs, num_items_in_batch)
                print("after", stamp, loss.item())
                return loss
        """
    )
    assert all(f.fix is None for f in lint_text(source, preview=True))


@pytest.mark.parametrize(("method", "event"), [("_save_checkpoint", "on_save"), ("predict", "on_predict")])
def test_gated_code_after_a_call_whose_event_follows_it_keeps_its_gate_there(method: str, event: str) -> None:
    """``scripts/move_audit.py`` found these equal (2026-12-06): ``on_save`` is dispatched as each
    ``_save_checkpoint`` returns, ``on_predict`` as ``predict`` does; a step gate stays a gate there (at
    ``on_log``, where the gated print after ``_save_checkpoint`` once went, it printed on other steps)."""
    fixed = fix_text(_audit_program(method, "gated-after"), unsafe=True).fixed.decode("utf-8")
    written = {line.split("(")[0].split()[-1] for line in fixed.splitlines() if "def on_" in line}
    assert written == {event}, written


def test_a_log_copys_record_is_read_from_the_history_at_on_log() -> None:
    """A copy of ``Trainer.log`` that fires ``on_log`` itself: the record it appended is the history's last
    at the event (``rules/_move.py``, ``RECORDED``); rebuilt from ``logs`` it would lack what a callback
    before it popped (``tests/oracle/test_oracle.py`` plants that)."""
    source = (MOVES / "record_written_after_own_on_log.py").read_text(encoding="utf-8")
    fixed = fix_text(source, unsafe=True, version="5.24.0").fixed.decode("utf-8")
    handler = fixed[fixed.index("def on_log") : fixed.index("class JsonlLogTrainer(Trainer)")]
    assert "output = state.log_history[-1]" in handler and "json.dumps(output)" in handler
    override = fixed[fixed.index("class JsonlLogTrainer(Trainer)") :]
    assert "self.state.log_history.append(output)" in override and "json.dumps" not in override


@pytest.mark.parametrize(
    "change",
    [
        '        output["seen"] = True\n',  # the record changed after the event: the event saw it unchanged
        "        self.state.log_history.append({})\n",  # another record appended between: not the last
    ],
)
def test_a_log_copys_record_changed_after_the_append_is_not_read_from_the_history(change: str) -> None:
    source = (MOVES / "record_written_after_own_on_log.py").read_text(encoding="utf-8")
    where = "        self.control = self.callback_handler.on_log("
    changed = (
        source.replace(where, change + where)
        if "append" in change
        else source.replace("        with open(", change + "        with open(")
    )
    assert changed != source
    fixed = fix_text(changed, unsafe=True, version="5.24.0").fixed.decode("utf-8")
    assert "= state.log_history[-1]" not in fixed


def test_a_record_read_after_super_log_is_not_taken_from_the_history() -> None:
    source = dedent(
        """
        import json
        from transformers import Trainer

        class T(Trainer):
            def log(self, logs, start_time=None):
                output = {**logs, "step": self.state.global_step}
                super().log(logs, start_time)
                print(json.dumps(output))
        """
    )
    fixed = fix_text(source, unsafe=True, version="5.24.0").fixed.decode("utf-8")
    assert "= state.log_history[-1]" not in fixed
