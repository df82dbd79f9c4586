"""SampleGenerationCallback: completions from the model as it is at the generation step."""

from __future__ import annotations

import json

import pytest
import torch
from transformers import Qwen2ForCausalLM, TrainerCallback

from trainwright.callbacks import ControlScheduleCallback, SampleGenerationCallback, attach

PROMPTS = ["the quick brown", [{"role": "user", "content": "hello"}]]


class ModeProbe(TrainerCallback):
    """Runs after the sampler in on_step_end: the model must be back in training mode."""

    def __init__(self) -> None:
        self.training_after_sampler: list[bool] = []

    def on_step_end(self, args, state, control, model=None, **kwargs):
        self.training_after_sampler.append(model.training)


def test_generates_every_n_steps_and_at_evaluations(make_trainer, tmp_path, tokenizer):
    out = tmp_path / "samples"
    sampler = SampleGenerationCallback(PROMPTS, every_n_steps=2, at_evaluation=True, max_new_tokens=6)
    probe = ModeProbe()
    trainer = make_trainer(
        callbacks=[probe],
        output_dir=out,
        with_eval=True,
        max_steps=4,
        logging_steps=4,
        save_strategy="steps",
        save_steps=2,
    )
    # before the reporters, and after the evaluate schedule whose flag it reads
    attach(trainer, ControlScheduleCallback(evaluate=[3]), sampler)
    trainer.train()

    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [(r["step"], r["trigger"]) for r in rows[::2]] == [
        (2, "every_n_steps"),
        (3, "evaluation"),
        (4, "every_n_steps"),
    ]
    assert [r["prompt"] == "the quick brown" for r in rows] == [True, False] * 3
    assert rows[1]["prompt"] == "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"
    # the generation really used the model of that step: regenerate from checkpoint-2 greedily
    model = Qwen2ForCausalLM.from_pretrained(out / "checkpoint-2").eval()
    encoded = tokenizer("the quick brown", return_tensors="pt")
    with torch.no_grad():
        again = model.generate(
            **encoded, max_new_tokens=6, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
    expected = tokenizer.decode(again[0, encoded["input_ids"].shape[1] :], skip_special_tokens=True)
    assert rows[0]["completion"] == expected
    # the table reached the log lines of steps 2, 3 and 4 (the callback requested them) and training mode came back
    logged = {e["step"]: json.loads(e["samples"]) for e in trainer.state.log_history if "samples" in e}
    assert sorted(logged) == [2, 3, 4] and logged[3][0]["trigger"] == "evaluation"
    assert probe.training_after_sampler == [True] * 4


def test_needs_a_tokenizer_and_a_trigger(make_trainer, tmp_path):
    with pytest.raises(ValueError, match="never fires"):
        SampleGenerationCallback(["x"])
    with pytest.raises(ValueError, match="non-empty list of prompts"):
        SampleGenerationCallback("x", every_n_steps=1)
    trainer = make_trainer(callbacks=[SampleGenerationCallback(["x"], every_n_steps=1)], max_steps=1)
    trainer.processing_class = None
    trainer.callback_handler.processing_class = None
    with pytest.raises(ValueError, match="needs a tokenizer"):
        trainer.train()


def test_unwritable_output_path_warns_and_training_finishes(make_trainer, tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")  # root ignores permissions; a path under a file fails for root too
    sampler = SampleGenerationCallback(
        ["the quick"], every_n_steps=1, max_new_tokens=2, output_path=blocker / "s.jsonl"
    )
    trainer = make_trainer(callbacks=[sampler], max_steps=2)
    with pytest.warns(UserWarning) as record:
        trainer.train()
    assert trainer.state.global_step == 2
    lost = [str(w.message) for w in record if "could not write the 1 samples" in str(w.message)]
    assert len(lost) == 2 and "step 1 to" in lost[0] and "still in callback.rows" in lost[0]
    assert [row["step"] for row in sampler.rows] == [1, 2]


def test_torn_last_sample_line_is_cut_before_appending(make_trainer, tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b'{"step": 1, "prompt": "x", "completion": "y"}\n{"step": 2, "prom')
    sampler = SampleGenerationCallback(["the quick"], every_n_steps=1, max_new_tokens=2, output_path=path)
    with pytest.warns(UserWarning, match=r"the last line of .*samples.jsonl was torn"):
        make_trainer(callbacks=[sampler], max_steps=1).train()
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [1, 1]
