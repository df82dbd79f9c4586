"""The real-world breakages of trainer_api.md §3.3/§4, each against the releases where it breaks and
where it does not (compatibility is a property of (override, target version))."""

from __future__ import annotations

import pytest
from lint_helpers import codes, lint_snippet

HEADER = "from transformers import Trainer, TrainerCallback\n\n"

CASES = {
    # A: compute_loss without num_items_in_batch (transformers #36331, GLiNER, open-unlearning)
    "A": "class T(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False):\n        return model(**inputs).loss\n",
    # B: training_step(self, model, inputs)
    "B": "class T(Trainer):\n    def training_step(self, model, inputs):\n        return super().training_step(model, inputs)\n",
    # C: log(self, logs) (trl #2445)
    "C": "class T(Trainer):\n    def log(self, logs):\n        super().log(logs)\n",
    # D: _save_checkpoint forwarding metrics (lmms-finetune #65)
    "D": "class T(Trainer):\n    def _save_checkpoint(self, model, trial, metrics=None):\n        super()._save_checkpoint(model, trial, metrics=metrics)\n",
    # E: new-style _save_checkpoint on an old install (Phi3-Vision #39)
    "E": "class T(Trainer):\n    def _save_checkpoint(self, model, trial):\n        super()._save_checkpoint(model, trial)\n",
    # F: _maybe_log_save_evaluate in its 4.38-4.46 form
    "F": "class T(Trainer):\n    def _maybe_log_save_evaluate(self, tr_loss, grad_norm, model, trial, epoch, ignore_keys_for_eval):\n        pass\n",
    # H: _get_train_sampler(self) (LlamaFactory #8207, Tina #4)
    "H": "class T(Trainer):\n    def _get_train_sampler(self):\n        return None\n",
    # I: get_batch_samples without device (LlamaFactory #8491)
    "I": "class T(Trainer):\n    def get_batch_samples(self, epoch_iterator, num_batches):\n        return super().get_batch_samples(epoch_iterator, num_batches)\n",
    # J: new-style compute_loss reading self.tokenizer, forwarding num_items_in_batch (GLM-4 #652, llm-compressor #1895)
    "J": (
        "class T(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):\n"
        "        pad = self.tokenizer.pad_token_id\n"
        "        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch=num_items_in_batch)\n"
    ),
    # K: *args/**kwargs pass-through survives every release
    "K": "class T(Trainer):\n    def _maybe_log_save_evaluate(self, *args, **kwargs):\n        return super()._maybe_log_save_evaluate(*args, **kwargs)\n",
    # L: callback event without **kwargs (transformers #9603)
    "L": "class C(TrainerCallback):\n    def on_log(self, args, state, control, logs):\n        pass\n",
    # M: callback reading kwargs["tokenizer"] (setfit #564)
    "M": "class C(TrainerCallback):\n    def on_evaluate(self, args, state, control, **kwargs):\n        tok = kwargs['tokenizer']\n",
    # unsloth #10887: create_optimizer(self) called with the model on 5.3+
    "U": "class T(Trainer):\n    def create_optimizer(self):\n        return super().create_optimizer()\n",
    # transformers PR #11738: explicit self inside a super() call
    "S": "class T(Trainer):\n    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):\n        return super().prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=ignore_keys)\n",
}

# (case, target version, expected signature/API codes among TW301/TW302/TW303/TW402)
EXPECTED = [
    ("A", "4.45.2", set()),
    ("A", "4.46.3", {"TW301"}),
    ("A", "5.24.0", {"TW301"}),
    ("B", "4.45.2", set()),
    ("B", "4.46.0", {"TW301"}),
    ("C", "4.46.3", set()),
    ("C", "4.47.0", {"TW301"}),
    ("D", "4.46.3", set()),
    ("D", "4.47.1", {"TW302"}),
    ("E", "4.46.3", {"TW301"}),
    ("E", "4.47.1", set()),
    ("F", "4.46.3", set()),
    ("F", "4.47.1", {"TW301"}),
    ("F", "5.24.0", {"TW301"}),
    ("H", "4.51.3", set()),
    ("H", "4.52.4", {"TW301"}),
    ("I", "4.49.0", set()),
    ("I", "4.50.3", {"TW301", "TW302"}),
    ("J", "4.45.2", {"TW302"}),
    ("J", "4.57.6", set()),
    ("J", "5.0.0", {"TW303"}),
    ("K", "4.36.0", set()),
    ("K", "4.47.1", set()),
    ("K", "5.24.0", set()),
    ("L", "4.45.2", {"TW402"}),
    ("L", "5.24.0", {"TW402"}),
    ("M", "4.45.2", set()),
    ("M", "4.46.0", {"TW303"}),
    ("U", "5.2.0", set()),
    ("U", "5.3.0", {"TW301"}),
    ("S", "5.24.0", {"TW302"}),
]


@pytest.mark.parametrize(("case", "version", "expected"), EXPECTED, ids=[f"{c}@{v}" for c, v, _ in EXPECTED])
def test_breakage_matrix(case: str, version: str, expected: set[str]) -> None:
    found = set(codes(lint_snippet(HEADER + CASES[case], version=version, select=["TW3", "TW4"])))
    assert found == expected


def test_private_overrides_flagged_in_every_version() -> None:
    for version in ("4.46.3", "5.24.0", "5.25.0"):
        assert "TW101" in codes(lint_snippet(HEADER + CASES["H"], version=version))


def test_dead_override_and_unknown_events() -> None:
    dead = (
        HEADER
        + "class T(Trainer):\n    def create_optimizer_and_scheduler(self, num_training_steps):\n        pass\n"
    )
    assert codes(lint_snippet(dead, version="5.0.0", select=["TW102"])) == []
    assert codes(lint_snippet(dead, version="5.1.0", select=["TW102"])) == ["TW102"]
    future = HEADER + "class T(Trainer):\n    def _run_epoch(self, *args, **kwargs):\n        pass\n"
    (finding,) = lint_snippet(future, version="5.2.0", select=["TW102"])
    assert "added in 5.3.0" in finding.message
    never = (
        HEADER
        + "class C(TrainerCallback):\n    def on_evaluate_begin(self, args, state, control, **kwargs):\n        pass\n"
    )
    (finding,) = lint_snippet(never, select=["TW4"])
    assert (
        finding.code == "TW401" and "on_step_end" in finding.message and "should_evaluate" in finding.message
    )
    push = (
        HEADER
        + "class C(TrainerCallback):\n    def on_push_begin(self, args, state, control, **kwargs):\n        pass\n"
    )
    assert codes(lint_snippet(push, version="4.57.6", select=["TW401"])) == ["TW401"]
    assert codes(lint_snippet(push, version="5.0.0", select=["TW401"])) == []


TRL_LIKE_LOG = (
    HEADER
    + """
class GRPOLike(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss = model(**inputs).loss
        self._metrics["train"]["kl"].append(0.1)
        return loss

    def log(self, logs, start_time=None):
        mode = "train" if self.model.training else "eval"
        metrics = {key: sum(val) / len(val) for key, val in self._metrics[mode].items()}
        if mode == "eval":
            metrics = {f"eval_{key}": val for key, val in metrics.items()}
        logs = {**logs, **metrics}
        super().log(logs, start_time)
        self._metrics[mode].clear()
"""
)


def test_legitimate_overrides_are_not_tw2xx() -> None:
    """Overrides that change what is computed, and log overrides merging metrics, are legitimate."""
    assert codes(lint_snippet(TRL_LIKE_LOG, select=["TW2"])) == []
    vllm_sync = (
        HEADER
        + """
class T(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        if self.state.global_step != self._last_loaded_step:
            self._move_model_to_vllm()
            self._last_loaded_step = self.state.global_step
        return super().training_step(model, inputs, num_items_in_batch)
"""
    )
    assert codes(lint_snippet(vllm_sync, select=["TW2"])) == []
    loss_schedule = (
        HEADER
        + """
class T(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        loss = outputs.loss
        if self.state.epoch >= 1:
            aux = outputs.aux_loss
            loss = loss + 0.1 * aux
        return (loss, outputs) if return_outputs else loss
"""
    )
    assert codes(lint_snippet(loss_schedule, select=["TW2"])) == []


def test_wall_clock_and_gated_logging_in_log_override() -> None:
    code = (
        HEADER
        + """
import time

class T(Trainer):
    def log(self, logs, start_time=None):
        super().log(logs, start_time)
        now = time.time()
        if now - self._last_table > 600:
            self._last_table = now
            self.log_completions_table()
"""
    )
    (finding,) = lint_snippet(code, select=["TW2"])
    assert finding.code == "TW201" and "wall-clock" in finding.message
