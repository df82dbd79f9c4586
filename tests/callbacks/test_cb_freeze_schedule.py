"""FreezeScheduleCallback: parameters really stop / start changing at the scheduled steps and epochs."""

from __future__ import annotations

import pytest
import torch
from cb_support import tiny_model
from transformers import TrainerCallback

from trainwright.callbacks import FreezeRule, FreezeScheduleCallback


class Snapshots(TrainerCallback):
    """Copy two weight tensors after every optimizer step (``global_step`` → tensor)."""

    def __init__(self) -> None:
        self.embed: dict[int, torch.Tensor] = {}
        self.head: dict[int, torch.Tensor] = {}

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        self.on_step_end(args, state, control, model=model)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        self.embed[state.global_step] = model.model.embed_tokens.weight.detach().clone()
        self.head[state.global_step] = model.lm_head.weight.detach().clone()


def _changed(snaps: dict[int, torch.Tensor]) -> list[int]:
    return [step for step in sorted(snaps)[1:] if not torch.equal(snaps[step], snaps[step - 1])]


RULES = [
    FreezeRule.freeze_at("model.embed_tokens.*", step=0),
    FreezeRule.unfreeze_at("model.embed_tokens.*", step=3),
    FreezeRule.freeze_at("lm_head.*", epoch=1),
]


def test_freeze_and_unfreeze_at_steps_and_epochs(make_trainer):
    snaps = Snapshots()
    trainer = make_trainer(callbacks=[FreezeScheduleCallback(RULES), snaps], max_steps=6, weight_decay=0.1)
    trainer.train()
    # embeddings: frozen for the optimizer steps that end at 1, 2, 3; trained from the one ending at 4
    assert _changed(snaps.embed) == [4, 5, 6]
    # lm_head: 4 steps per epoch (32 samples / (batch 4 × GA 2)); frozen from epoch 1 on
    assert _changed(snaps.head) == [1, 2, 3, 4]
    total = sum(p.numel() for p in trainer.model.parameters())
    head = trainer.model.lm_head.weight.numel()
    embed = trainer.model.model.embed_tokens.weight.numel()
    counts = [e["freeze/trainable_params"] for e in trainer.state.log_history if "loss" in e]
    assert counts == [total - embed] * 3 + [total] + [total - head] * 2


def test_resume_recreates_the_frozen_set(make_trainer, tmp_path):
    out = tmp_path / "resume"
    make_trainer(
        callbacks=[FreezeScheduleCallback(RULES)],
        output_dir=out,
        max_steps=6,
        save_strategy="steps",
        save_steps=2,
    ).train()
    snaps = Snapshots()
    trainer = make_trainer(callbacks=[FreezeScheduleCallback(RULES), snaps], output_dir=out, max_steps=6)
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    # the model loaded from checkpoint-2 is fully trainable again; the callback re-freezes the embeddings
    assert _changed(snaps.embed) == [4, 5, 6]
    assert _changed(snaps.head) == [3, 4]
    assert torch.equal(snaps.embed[3], snaps.embed[2])


def test_pattern_that_matches_nothing_is_named(make_trainer):
    trainer = make_trainer(callbacks=[FreezeScheduleCallback([FreezeRule.freeze_at("encoder.*", step=0)])])
    with pytest.raises(ValueError, match=r"pattern 'encoder\.\*' matches no parameter of Qwen2ForCausalLM"):
        trainer.train()


def test_unfreezing_a_parameter_the_optimizer_does_not_hold_fails_clearly(make_trainer, tokenizer):
    model = tiny_model(tokenizer)
    model.lm_head.weight.requires_grad_(False)  # frozen before the Trainer builds its optimizer
    trainer = make_trainer(
        callbacks=[FreezeScheduleCallback([FreezeRule.unfreeze_at("lm_head.*", step=2)])], model=model
    )
    with pytest.raises(ValueError, match=r"not in the optimizer \(e\.g\. 'lm_head\.weight'\)"):
        trainer.train()


def test_rule_errors():
    with pytest.raises(ValueError, match="exactly one of step= or epoch="):
        FreezeRule("x", True)
    with pytest.raises(ValueError, match="step must be an integer >= 0"):
        FreezeRule.freeze_at("x", step=-1)
    with pytest.raises(ValueError, match="at least one FreezeRule"):
        FreezeScheduleCallback([])
