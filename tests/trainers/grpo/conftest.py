"""Fixtures for the GRPO tests: a toy tokenizer, tiny models built from a config, prompt datasets."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from datasets import Dataset  # noqa: E402

from trainwright.toy import build_tiny_causal_lm, build_tokenizer  # noqa: E402


@pytest.fixture(scope="session")
def tokenizer():
    return build_tokenizer()


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
