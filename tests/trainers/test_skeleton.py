"""What DPOTrainer and GRPOTrainer do the same way (``trainers/common/skeleton.py``), checked on both.

Each test builds both trainers on a tiny real model: the pad-token rule (TRL pads with EOS when the
tokenizer has no pad token; we do too, without changing the user's tokenizer), TRL's default output
folder, where the reference decision lives, and the shared metrics window and model tags.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from datasets import Dataset

from trainwright import DPOConfig, DPOTrainer, GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer, save_tiny_model
from trainwright.trainers.common.metrics import MetricsWindow

SMALL = {
    "per_device_train_batch_size": 4,
    "max_steps": 1,
    "report_to": [],
    "save_strategy": "no",
    "use_cpu": True,
    "logging_steps": 1,
}


def pairs() -> Dataset:
    return Dataset.from_list(
        [{"prompt": f"Question {i}:", "chosen": " yes", "rejected": " no"} for i in range(8)]
    )


def prompts() -> Dataset:
    return Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(8)]})


def reward_len(completions: list[Any], **kwargs: Any) -> list[float]:
    return [float(len(c)) for c in completions]


def build_dpo(model: Any, tokenizer: Any, args: Any = None) -> DPOTrainer:
    return DPOTrainer(model, args=args, train_dataset=pairs(), processing_class=tokenizer)


def build_grpo(model: Any, tokenizer: Any, args: Any = None) -> GRPOTrainer:
    return GRPOTrainer(model, reward_len, args=args, train_dataset=prompts(), processing_class=tokenizer)


TRAINERS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "dpo": (build_dpo, lambda tmp_path, **kw: DPOConfig(output_dir=str(tmp_path), **{**SMALL, **kw})),
    "grpo": (
        build_grpo,
        lambda tmp_path, **kw: GRPOConfig(
            output_dir=str(tmp_path), num_generations=4, max_completion_length=3, **{**SMALL, **kw}
        ),
    ),
}


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


@pytest.mark.parametrize("name", TRAINERS)
def test_a_tokenizer_without_pad_token_pads_with_eos_and_is_left_unchanged(name, tokenizer, tmp_path):
    build, config = TRAINERS[name]
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)
    model.config.pad_token_id = None
    model.generation_config.pad_token_id = None
    no_pad = copy.deepcopy(tokenizer)
    no_pad.pad_token = None
    assert no_pad.pad_token_id is None and no_pad.eos_token_id is not None

    trainer = build(model, no_pad, config(tmp_path))
    trainer.train()

    assert trainer.pad_token_id == no_pad.eos_token_id
    assert no_pad.pad_token is None  # the user's tokenizer is not changed (TRL sets pad_token = eos)
    # the model's configs name the pad id they lacked, so generate() and a saved model agree with the padding
    assert model.config.pad_token_id == model.generation_config.pad_token_id == no_pad.eos_token_id


@pytest.mark.parametrize("name", TRAINERS)
def test_a_pad_id_the_model_already_names_is_kept(name, tokenizer, tmp_path):
    build, config = TRAINERS[name]
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)
    model.generation_config.pad_token_id = 7
    trainer = build(model, tokenizer, config(tmp_path))
    assert trainer.pad_token_id == tokenizer.pad_token_id != 7
    assert model.generation_config.pad_token_id == 7


@pytest.mark.parametrize("name", TRAINERS)
def test_a_tokenizer_with_neither_pad_nor_eos_is_refused_by_name(name, tokenizer, tmp_path):
    build, config = TRAINERS[name]
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)
    bare = copy.deepcopy(tokenizer)
    bare.pad_token = None
    bare.eos_token = None
    with pytest.raises(ValueError, match=r"neither a pad token nor an EOS token.*tokenizer.pad_token ="):
        build(model, bare, config(tmp_path))


@pytest.mark.parametrize(("name", "suffix"), [("dpo", "DPO"), ("grpo", "GRPO")])
def test_without_args_the_output_folder_is_trls(name, suffix, tokenizer, tmp_path, monkeypatch):
    """TRL: ``<last part of the model id / folder>-DPO`` (``-GRPO``); a model built in memory has no
    name, so its class name stands in (TRL would write ``-DPO``)."""
    monkeypatch.chdir(tmp_path)
    build, _ = TRAINERS[name]
    folder = save_tiny_model(tmp_path / "hub" / "tiny-lm", hidden_size=16, num_layers=1, num_heads=2)
    from_folder = build(str(folder), None)
    assert from_folder.args.output_dir == f"tiny-lm-{suffix}"
    in_memory = build(build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2), tokenizer)
    assert in_memory.args.output_dir == f"Qwen2ForCausalLM-{suffix}"


@pytest.mark.parametrize(
    ("name", "settings", "expected"),
    [
        ("dpo", {}, True),
        ("dpo", {"reference_free": True}, False),
        ("dpo", {"loss_type": ["simpo"]}, False),
        ("dpo", {"precompute_ref_log_probs": True}, True),
        ("grpo", {"beta": 0.1}, True),
        ("grpo", {"beta": 0.0}, False),
    ],
)
def test_uses_reference_is_decided_once_and_a_module_is_kept_only_when_needed(
    name, settings, expected, tokenizer, tmp_path
):
    build, config = TRAINERS[name]
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)
    args = config(tmp_path, **settings)
    trainer = build(model, tokenizer, args)
    assert trainer.uses_reference is expected is type(trainer).uses_reference_for(args)
    keeps_module = expected and not settings.get("precompute_ref_log_probs", False)
    assert (trainer.ref_model is not None) is keeps_module


@pytest.mark.parametrize(("name", "tag"), [("dpo", "dpo"), ("grpo", "grpo")])
def test_both_trainers_share_the_metrics_window_and_tag_the_model(name, tag, tokenizer, tmp_path):
    build, config = TRAINERS[name]
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)
    trainer = build(model, tokenizer, config(tmp_path))
    assert isinstance(trainer.metrics, MetricsWindow)
    assert {"trl", tag} <= set(trainer.model.model_tags or [])
    history = trainer.train() and trainer.state.log_history
    train_keys = {key for entry in history for key in entry}
    assert "num_tokens" in train_keys  # a window metric of both trainers reached the logs
