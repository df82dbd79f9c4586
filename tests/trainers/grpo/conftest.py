"""Fixtures for the GRPO tests: a toy tokenizer, tiny models built from a config, prompt datasets."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from datasets import Dataset

from trainwright.toy import build_tiny_causal_lm, build_tokenizer


@pytest.fixture
def tiny_model(tokenizer):
    return build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)


@pytest.fixture
def prompts_dataset():
    return Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(24)], "target": ["a"] * 24})


def char_fraction_a(completions, **kwargs):
    """Fraction of completion characters equal to 'a' (0 for an empty completion)."""
    texts = [c if isinstance(c, str) else c[0]["content"] for c in completions]
    return [t.count("a") / len(t) if t else 0.0 for t in texts]


@pytest.fixture
def reward_a():
    return char_fraction_a


@pytest.fixture(scope="module")
def trl_setup(tmp_path_factory):
    """TRL's GRPOTrainer on a tiny model, our copy of the same weights, and one micro-batch of inputs: the
    loss parity tests call TRL's ``_compute_loss`` and our ``grpo_loss`` on them."""
    import torch

    trl = pytest.importorskip("trl")
    from trainwright.toy import build_tiny_causal_lm

    tokenizer = build_tokenizer()
    trl_model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=3)
    our_model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=3)
    args = trl.GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("trl")),
        per_device_train_batch_size=4,
        num_generations=4,
        bf16=False,
        report_to=[],
        use_cpu=True,
        max_completion_length=6,
        gradient_checkpointing=False,
        epsilon_high=0.28,
    )
    trainer = trl.GRPOTrainer(
        model=trl_model,
        reward_funcs=lambda completions, **kw: [0.0] * len(completions),
        args=args,
        train_dataset=Dataset.from_dict({"prompt": ["x"] * 8}),
        processing_class=tokenizer,
    )
    trainer.current_gradient_accumulation_steps = 1
    torch.manual_seed(0)
    inputs = {
        "prompt_ids": torch.randint(5, 200, (4, 3)),
        "prompt_mask": torch.tensor([[0, 1, 1], [1, 1, 1], [0, 0, 1], [1, 1, 1]]),
        "completion_ids": torch.randint(5, 200, (4, 6)),
        "completion_mask": torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 2 + [0] * 4, [1] * 5 + [0]]),
        "advantages": torch.tensor([1.2, -0.4, 0.3, -1.1]),
    }
    return trainer, our_model, inputs
