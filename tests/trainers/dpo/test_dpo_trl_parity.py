"""Same tiny model, batch and reference: our loss and metrics equal TRL 1.16's DPOTrainer to 1e-5.

TRL is a test-only oracle. One TRL trainer is built per module and its ``loss_types`` switched per
case (building it costs more than the comparison); ours is built per case from a plain config.
"""

from __future__ import annotations

import copy
import os

import pytest
import torch
from conftest import make_config, trl_dpo_trainer
from datasets import Dataset

trl = pytest.importorskip("trl")

TRL_LOSSES = [
    "sigmoid",
    "hinge",
    "ipo",
    "robust",
    "exo_pair",
    "nca_pair",
    "bco_pair",
    "sppo_hard",
    "aot",
    "aot_unpaired",
    "apo_zero",
    "apo_down",
    "discopop",
    "sft",
    "sigmoid_norm",
]
METRICS = [
    "rewards/chosen",
    "rewards/rejected",
    "rewards/accuracies",
    "rewards/margins",
    "logps/chosen",
    "logps/rejected",
    "logits/chosen",
    "logits/rejected",
]
BETA, EPS = 0.5, 0.1
N_PAIRS = 6


def parity_pairs() -> Dataset:
    chosen = [" yes, it is.", " sure", " yes", " of course it is good", " yes!", " right"]
    rejected = [" no", " never ever", " nope, it is bad", " no", " bad", " wrong answer here"]
    return Dataset.from_list(
        [
            {"prompt": f"Q{i}: is {w} good?", "chosen": c, "rejected": r}
            for i, (w, c, r) in enumerate(zip("abcdef", chosen, rejected))
        ]
    )


@pytest.fixture(scope="module")
def models(tokenizer):
    from trainwright.toy import build_tiny_causal_lm

    reference = build_tiny_causal_lm(tokenizer, seed=1)
    policy = copy.deepcopy(reference)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():  # move the policy away from the reference so rewards are not all zero
        for p in policy.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    return policy, reference


@pytest.fixture(scope="module")
def trl_side(models, tokenizer, tmp_path_factory):
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    policy, reference = models
    trainer = trl_dpo_trainer(
        policy,
        reference,
        parity_pairs(),
        tokenizer,
        tmp_path_factory.mktemp("trl"),
        per_device_train_batch_size=N_PAIRS,
        beta=BETA,
        label_smoothing=EPS,
        max_length=64,
    )
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(N_PAIRS)])
    return trainer, batch


def ours_for(loss_type: str, models, tokenizer, tmp_path):
    from trainwright import DPOTrainer

    policy, reference = models
    args = make_config(tmp_path, beta=BETA, label_smoothing=EPS, max_length=64, loss_type=loss_type)
    trainer = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=args,
        train_dataset=parity_pairs(),
        processing_class=tokenizer,
    )
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(N_PAIRS)])
    return trainer, batch


def test_dpo_tokenisation_matches_trl(trl_side, models, tokenizer, tmp_path) -> None:
    _, trl_batch = trl_side
    _, our_batch = ours_for("sigmoid", models, tokenizer, tmp_path)
    for key in ("input_ids", "attention_mask", "completion_mask"):
        assert torch.equal(our_batch[key], trl_batch[key]), key


@pytest.mark.parametrize("loss_type", TRL_LOSSES)
def test_dpo_loss_and_metrics_match_trl(loss_type, trl_side, models, tokenizer, tmp_path) -> None:
    trl_trainer, trl_batch = trl_side
    trl_trainer.loss_types, trl_trainer.loss_weights = [loss_type], [1.0]
    trl_trainer._metrics["train"].clear()
    trl_trainer._total_train_tokens = 0  # TRL's running total: compare this batch's count only
    trl_trainer.model.train()
    with torch.no_grad():
        trl_loss = trl_trainer.compute_loss(trl_trainer.model, trl_batch)
    trl_metrics = {k: sum(v) / len(v) for k, v in trl_trainer._metrics["train"].items()}

    ours, batch = ours_for(loss_type, models, tokenizer, tmp_path)
    ours.model.train()
    with torch.no_grad():
        loss = ours.compute_loss(ours.model, batch)
    logs: dict[str, float] = {"loss": float(loss)}
    ours.log(logs)
    assert float(loss) == pytest.approx(float(trl_loss), abs=1e-5, rel=1e-5)
    assert abs(float(trl_loss)) > 1e-4 or loss_type in ("aot",)  # a real, non-trivial value
    for name in METRICS:
        assert logs[name] == pytest.approx(trl_metrics[name], abs=1e-5, rel=1e-5), name
    assert logs["num_tokens"] == trl_metrics["num_tokens"]
    assert 0.0 < logs["rewards/accuracies"] < 1.0  # the batch mixes won and lost pairs


@pytest.mark.parametrize("loss_type", ["sigmoid", "ipo", "sft", "aot"])
def test_dpo_shared_prompt_forward_matches_trl(
    loss_type, trl_side, models, tokenizer, tmp_path, monkeypatch
) -> None:
    """The shared-prompt forward (each pair's prompt run once, each half trimmed to its own length) gives
    TRL's loss and metrics too; forced on here, since the tiny model is below its size threshold."""
    import trainwright.trainers.preference_logps as dpo_module
    from trainwright.trainers import logprobs

    monkeypatch.setattr(logprobs, "CALL_OVERHEAD_PARAMETER_TOKENS", 0)
    monkeypatch.setattr(logprobs, "WEIGHT_GRADIENT_TOKENS", 0)
    runs = []
    real = dpo_module.run_shared_prefix

    def counted(*args, **kwargs):
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(dpo_module, "run_shared_prefix", counted)
    trl_trainer, trl_batch = trl_side
    trl_trainer.loss_types, trl_trainer.loss_weights = [loss_type], [1.0]
    trl_trainer._metrics["train"].clear()
    trl_trainer._total_train_tokens = 0
    trl_trainer.model.train()
    with torch.no_grad():
        trl_loss = trl_trainer.compute_loss(trl_trainer.model, trl_batch)
    trl_metrics = {k: sum(v) / len(v) for k, v in trl_trainer._metrics["train"].items()}

    ours, batch = ours_for(loss_type, models, tokenizer, tmp_path)
    ours.model.train()
    with torch.no_grad():
        loss = ours.compute_loss(ours.model, batch)
    assert len(runs) == 2  # policy and reference both shared their prompts
    logs: dict[str, float] = {"loss": float(loss)}
    ours.log(logs)
    assert float(loss) == pytest.approx(float(trl_loss), abs=1e-5, rel=1e-5)
    for name in METRICS:
        assert logs[name] == pytest.approx(trl_metrics[name], abs=1e-5, rel=1e-5), name


def test_dpo_rpo_combination_matches_trl(trl_side, models, tokenizer, tmp_path) -> None:
    trl_trainer, trl_batch = trl_side
    trl_trainer.loss_types, trl_trainer.loss_weights = ["sigmoid", "sft"], [1.0, 0.3]
    with torch.no_grad():
        trl_loss = trl_trainer.compute_loss(trl_trainer.model, trl_batch)
    from trainwright import DPOTrainer

    policy, reference = models
    args = make_config(
        tmp_path, beta=BETA, max_length=64, loss_type=["sigmoid", "sft"], loss_weights=[1.0, 0.3]
    )
    ours = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=args,
        train_dataset=parity_pairs(),
        processing_class=tokenizer,
    )
    batch = ours.data_collator([ours.train_dataset[i] for i in range(N_PAIRS)])
    with torch.no_grad():
        loss = ours.compute_loss(ours.model, batch)
    assert float(loss) == pytest.approx(float(trl_loss), abs=1e-5, rel=1e-5)


def test_dpo_conversational_tokenisation_matches_trl(tokenizer, models, tmp_path) -> None:
    from trainwright import DPOTrainer

    def msg(role: str, text: str) -> list[dict[str, str]]:
        return [{"role": role, "content": text}]

    data = Dataset.from_list(
        [
            {
                "prompt": msg("user", f"Is {w} good?"),
                "chosen": msg("assistant", c),
                "rejected": msg("assistant", r),
            }
            for w, c, r in [("a", "yes", "no"), ("bb", "sure thing", "never"), ("ccc", "ok", "not at all")]
        ]
    )
    policy, reference = models
    theirs = trl_dpo_trainer(policy, reference, data, tokenizer, tmp_path / "trl")
    ours = DPOTrainer(
        copy.deepcopy(policy),
        ref_model=copy.deepcopy(reference),
        args=make_config(tmp_path),
        train_dataset=data,
        processing_class=tokenizer,
    )
    for column in ("prompt_ids", "chosen_ids", "rejected_ids"):
        assert ours.train_dataset[column] == theirs.train_dataset[column], column
