"""JSONLMetricsCallback: the JSONL file mirrors state.log_history, and reads as one run after resume."""

from __future__ import annotations

import json

import pytest

from trainwright.callbacks import JSONLMetricsCallback, StepTimerCallback, attach


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_log_line_is_written(make_trainer, tmp_path):
    out = tmp_path / "jsonl"
    trainer = make_trainer(
        callbacks=[JSONLMetricsCallback()],
        output_dir=out,
        with_eval=True,
        max_steps=4,
        eval_strategy="steps",
        eval_steps=2,
    )
    attach(trainer, StepTimerCallback())  # values it adds are in the file too: it runs before the writer
    trainer.train()
    lines = _lines(out / "metrics.jsonl")
    assert len(lines) == len(trainer.state.log_history)  # 4 training + 2 eval + 1 summary
    for line, entry in zip(lines, trainer.state.log_history):
        assert line.pop("time") > 0
        assert line == entry
    assert sum("eval_loss" in line for line in lines) == 2
    assert all("perf/step_time_s" in line for line in lines if "loss" in line)


def test_non_finite_values_stay_strict_json(make_trainer, tmp_path):
    import torch
    from transformers import TrainerCallback

    class Poison(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            with torch.no_grad():
                model.lm_head.weight.fill_(float("nan"))

    path = tmp_path / "sub" / "m.jsonl"
    trainer = make_trainer(
        callbacks=[Poison(), JSONLMetricsCallback(path)], max_steps=2, logging_nan_inf_filter=False
    )
    trainer.train()
    raw = path.read_text()
    assert "NaN" not in raw
    assert _lines(path)[1]["loss"] == "nan"


def test_resume_drops_the_abandoned_tail(make_trainer, tmp_path):
    out = tmp_path / "resume"
    make_trainer(
        callbacks=[JSONLMetricsCallback()], output_dir=out, max_steps=4, save_strategy="steps", save_steps=2
    ).train()
    assert [line["step"] for line in _lines(out / "metrics.jsonl")] == [1, 2, 3, 4, 4]  # + summary
    trainer = make_trainer(callbacks=[JSONLMetricsCallback()], output_dir=out, max_steps=4)
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    steps = [line["step"] for line in _lines(out / "metrics.jsonl")]
    assert steps == [1, 2, 3, 4, 4]
    assert "train_runtime" in _lines(out / "metrics.jsonl")[-1]


def test_bad_path_type():
    with pytest.raises(TypeError, match="path must be a str or Path, got int"):
        JSONLMetricsCallback(3)  # type: ignore[arg-type]
