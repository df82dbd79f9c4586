"""StepTimerCallback in a real Trainer run with gradient accumulation."""

from __future__ import annotations

import pytest
from cb_support import train_logs
from transformers import TrainerCallback

from trainwright.callbacks import StepTimerCallback, attach


class ReporterStandIn(TrainerCallback):
    """Records the logs dict as a reporting integration would see it (placed where Trainer puts them)."""

    def __init__(self) -> None:
        self.seen: list[dict] = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.seen.append(dict(logs))


def test_step_timer_logs_throughput_that_matches_token_counts(make_trainer, train_dataset):
    timer = StepTimerCallback()
    trainer = make_trainer(max_steps=6, logging_steps=2, include_num_input_tokens_seen="non_padding")
    # Trainer.__init__ places report_to integrations right after DefaultFlowCallback: stand in for one there.
    reporter = ReporterStandIn()
    trainer.callback_handler.callbacks.insert(1, reporter)
    attach(trainer, timer)
    names = [type(cb).__name__ for cb in trainer.callback_handler.callbacks]
    assert names.index("StepTimerCallback") < names.index("ReporterStandIn")

    trainer.train()

    logs = train_logs(trainer)
    assert [entry["step"] for entry in logs] == [2, 4, 6]
    samples_per_step = 4 * 2  # batch 4 × GA 2
    previous_tokens = 0
    for entry in logs:
        step_time = entry["perf/step_time_s"]
        assert step_time > 0
        # samples/s and tokens/s are consistent with the step time over the 2-step window
        assert entry["perf/samples_per_s"] * step_time == pytest.approx(samples_per_step)
        window_tokens = entry["num_input_tokens_seen"] - previous_tokens
        assert entry["perf/tokens_per_s"] * step_time * 2 == pytest.approx(window_tokens)
        previous_tokens = entry["num_input_tokens_seen"]
    # 6 steps × 8 samples = 48 samples: one full epoch (32) plus 16 more; all tokens are non-pad counts
    epoch_tokens = sum(len(row["input_ids"]) for row in train_dataset)
    assert epoch_tokens < logs[-1]["num_input_tokens_seen"] < 2 * epoch_tokens
    # the values reached the reporter (it runs after the timer) and not the eval-free final summary
    reported = [seen for seen in reporter.seen if "loss" in seen]
    assert all("perf/step_time_s" in seen for seen in reported) and len(reported) == 3
    summary = trainer.state.log_history[-1]
    assert "train_runtime" in summary and "perf/step_time_s" not in summary


def test_step_timer_without_token_counting_omits_tokens_per_s(make_trainer):
    trainer = make_trainer(callbacks=[StepTimerCallback(prefix="t/")], max_steps=2)
    trainer.train()
    logs = train_logs(trainer)
    assert len(logs) == 2
    assert all("t/step_time_s" in e and "t/samples_per_s" in e and "t/tokens_per_s" not in e for e in logs)


def test_step_timer_rejects_bad_prefix():
    with pytest.raises(TypeError, match="prefix"):
        StepTimerCallback(prefix=3)  # type: ignore[arg-type]
