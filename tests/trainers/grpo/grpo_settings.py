"""The small GRPO configuration most trainer tests start from (4 completions per prompt, 3 new tokens,
no saving, CPU), with per-test overrides."""

from __future__ import annotations

from trainwright import GRPOConfig


def small_config(tmp_path, **overrides) -> GRPOConfig:  # type: ignore[no-untyped-def]
    settings = {
        "output_dir": str(tmp_path),
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        "max_completion_length": 3,
        "report_to": [],
        "save_strategy": "no",
        "use_cpu": True,
        "logging_steps": 1,
        "learning_rate": 1e-3,
    }
    settings.update(overrides)
    return GRPOConfig(**settings)


def completion_logits(model, inputs):  # type: ignore[no-untyped-def]
    """The logits that score each completion token of ``inputs`` (prompt/completion ids and masks)."""
    import torch

    input_ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], 1)
    mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], 1)
    width = inputs["completion_ids"].size(1)
    return model(input_ids=input_ids, attention_mask=mask, logits_to_keep=width + 1).logits[:, :-1]


def our_logps(model, inputs):  # type: ignore[no-untyped-def]
    """Per-token completion log-probs by the textbook formula (a full log-softmax)."""
    import torch

    logits = completion_logits(model, inputs)
    return torch.log_softmax(logits, -1).gather(-1, inputs["completion_ids"][..., None])[..., 0]


def tiny_qwen2_config(tokenizer, **overrides):  # type: ignore[no-untyped-def]
    """A one-layer Qwen2 config over the toy tokenizer (causal LMs, reward models, tied heads)."""
    from transformers import Qwen2Config

    settings = {
        "vocab_size": len(tokenizer),
        "hidden_size": 16,
        "intermediate_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "pad_token_id": tokenizer.pad_token_id,
    }
    settings.update(overrides)
    return Qwen2Config(**settings)


def tiny_reward_model(tokenizer):  # type: ignore[no-untyped-def]
    """A seeded one-layer Qwen2 sequence classifier with one label: a reward model."""
    import torch
    from transformers import Qwen2ForSequenceClassification

    torch.manual_seed(0)
    return Qwen2ForSequenceClassification(tiny_qwen2_config(tokenizer, num_labels=1))
