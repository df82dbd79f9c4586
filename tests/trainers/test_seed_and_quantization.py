"""Issue 37, build item 2-3: runs with ``peft_config=`` and one seed are reproducible (the seed is set before
the adapter is created, as TRL does), and ``quantization_config`` is accepted as TRL's or refused by name."""

from __future__ import annotations

from typing import Any

import pytest
import torch

pytest.importorskip("peft")
datasets = pytest.importorskip("datasets")

from peft import LoraConfig
from transformers import BitsAndBytesConfig

from trainwright import DPOConfig, DPOTrainer, GRPOConfig, GRPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

torch.set_num_threads(1)
TOKENIZER = build_tokenizer()
COMMON: dict[str, Any] = {
    "max_steps": 2, "learning_rate": 1e-2, "report_to": [], "use_cpu": True, "save_strategy": "no",
    "disable_tqdm": True, "seed": 5, "per_device_train_batch_size": 2,
}  # fmt: skip


def _lora() -> LoraConfig:
    return LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")


def _tiny() -> torch.nn.Module:
    return build_tiny_causal_lm(TOKENIZER, hidden_size=16, num_layers=1, num_heads=2, seed=0)


def _dpo(tmp_path, model: Any = None, **extra: Any) -> DPOTrainer:
    pairs = datasets.Dataset.from_list(
        [{"prompt": f"Q{i}?", "chosen": " yes", "rejected": " no"} for i in range(4)]
    )
    model = model or _tiny()
    args = DPOConfig(output_dir=str(tmp_path), **COMMON)
    return DPOTrainer(model, args=args, train_dataset=pairs, processing_class=TOKENIZER, **extra)


def _grpo(tmp_path, model: Any = None, **extra: Any) -> GRPOTrainer:
    prompts = datasets.Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(8)]})
    model = model or _tiny()
    args = GRPOConfig(output_dir=str(tmp_path), num_generations=2, max_completion_length=4, **COMMON)

    def reward(completion_ids, **kwargs):  # type: ignore[no-untyped-def]
        return [float(sum(ids) % 5) for ids in completion_ids]

    return GRPOTrainer(model, reward, args=args, train_dataset=prompts, processing_class=TOKENIZER, **extra)


@pytest.mark.parametrize("build", [_dpo, _grpo], ids=["dpo", "grpo"])
def test_peft_runs_with_one_seed_give_identical_weights(tmp_path, build):
    weights = []
    for run, noise in enumerate((1, 12345)):
        model = _tiny()
        torch.manual_seed(noise)  # whatever the caller did with the global RNG before building the trainer
        trainer = build(tmp_path / str(run), model, peft_config=_lora())
        trainer.train()
        weights.append({n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_" in n})
    assert weights[0] and weights[0].keys() == weights[1].keys()
    for name in weights[0]:
        torch.testing.assert_close(weights[0][name], weights[1][name], rtol=0, atol=0, msg=name)


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny")
    _tiny().save_pretrained(folder)
    TOKENIZER.save_pretrained(folder)
    return str(folder)


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="the refusal is for machines bitsandbytes cannot run on"
)
@pytest.mark.parametrize("trainer_class", [DPOTrainer, GRPOTrainer])
def test_bitsandbytes_quantization_is_refused_by_name_where_it_cannot_run(
    tmp_path, saved_model, trainer_class
):
    quant = BitsAndBytesConfig(load_in_4bit=True)
    extra: dict[str, Any] = {"quantization_config": quant}
    build = _dpo if trainer_class is DPOTrainer else _grpo
    with pytest.raises(
        ValueError, match=r"quantization_config=BitsAndBytesConfig\(\.\.\.\) cannot be used here"
    ):
        build(tmp_path, saved_model, **extra)


@pytest.mark.parametrize("build", [_dpo, _grpo], ids=["dpo", "grpo"])
def test_quantization_config_with_a_model_instance_is_refused_by_name(tmp_path, build):
    with pytest.raises(
        ValueError, match="quantization_config only applies when the model is loaded from an id"
    ):
        build(tmp_path, quantization_config=BitsAndBytesConfig(load_in_8bit=True))


def test_quantization_config_given_twice_is_refused(tmp_path, saved_model):
    args = DPOConfig(output_dir=str(tmp_path), model_init_kwargs={"quantization_config": {}}, **COMMON)
    pairs = datasets.Dataset.from_list([{"prompt": "Q?", "chosen": " yes", "rejected": " no"}] * 2)
    with pytest.raises(ValueError, match="both as a trainer argument and in args.model_init_kwargs"):
        DPOTrainer(saved_model, args=args, train_dataset=pairs, quantization_config=BitsAndBytesConfig())
