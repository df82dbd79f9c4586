"""GRPO's TRL options: generation_batch_size (validated as TRL does), disable_dropout,
num_completions_to_print, num_generations_eval, cache_implementation, models and tokenizers from folders,
peft_config, TR-DPO sync, and prompts checked at construction."""

from __future__ import annotations

import itertools

import pytest
import torch
from datasets import Dataset
from torch import nn

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.callbacks.reference_sync import ReferenceSyncCallback
from trainwright.toy import build_tiny_causal_lm, save_tiny_model

from .grpo_settings import small_config


def _dense(completion_ids, **kwargs):
    return [float(sum(ids) % 7) for ids in completion_ids]


# ---- generation_batch_size ---------------------------------------------------------------------------------


def test_grpo_generation_batch_size_is_resolved_and_validated_like_trl(tmp_path) -> None:
    trl = pytest.importorskip("trl")
    grid = itertools.product((2, 3, 4), (2, 4), (None, 1, 2), (None, 4, 6, 8, 12), (1, 2))
    compared = refused = 0
    for bs, g, spg, gbs, ga in grid:
        kwargs = {
            "output_dir": str(tmp_path),
            "per_device_train_batch_size": bs,
            "num_generations": g,
            "steps_per_generation": spg,
            "generation_batch_size": gbs,
            "gradient_accumulation_steps": ga,
            "use_cpu": True,
            "report_to": [],
        }
        try:
            theirs = trl.GRPOConfig(**kwargs, bf16=False)
        except ValueError:
            with pytest.raises(ValueError):
                GRPOConfig(**kwargs)
            refused += 1
            continue
        ours = GRPOConfig(**kwargs)
        assert (ours.steps_per_generation, ours.generation_batch_size) == (
            theirs.steps_per_generation,
            theirs.generation_batch_size,
        ), kwargs
        compared += 1
    assert compared > 20 and refused > 20  # both branches really exercised


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"generation_batch_size": 8, "steps_per_generation": 2}, "cannot both be set"),
        ({"generation_batch_size": 6}, r"generation_batch_size \(6\) must be a positive multiple .* = 4"),
        (
            {"per_device_train_batch_size": 2, "generation_batch_size": 6},
            r"= 6 completions is not divisible by num_generations \(4\)",
        ),
    ],
)
def test_grpo_generation_batch_size_errors_name_the_numbers(tmp_path, overrides, message) -> None:
    with pytest.raises(ValueError, match=message):
        small_config(tmp_path, **overrides)


def test_grpo_generation_batch_size_sets_the_generate_call_size(
    tmp_path, tokenizer, tiny_model, prompts_dataset
) -> None:
    trainer = GRPOTrainer(
        tiny_model,
        _dense,
        args=small_config(tmp_path, generation_batch_size=12, max_steps=3),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    sizes = []
    generate = trainer.generation_backend.generate
    trainer.generation_backend.generate = lambda model, prompt_ids: (
        sizes.append(len(prompt_ids)) or generate(model, prompt_ids)
    )
    trainer.train()
    assert trainer.args.steps_per_generation == 3 and sizes == [12]  # one call of 12 feeds 3 steps


# ---- dropout, printing, evaluation G, cache ----------------------------------------------------------------------


def _model_with_dropout(tokenizer):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=64,
        n_embd=16,
        n_layer=1,
        n_head=2,
        resid_pdrop=0.3,
        embd_pdrop=0.3,
        attn_pdrop=0.3,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = GPT2LMHeadModel(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


@pytest.mark.parametrize("disable", [False, True])
def test_grpo_disable_dropout(tmp_path, tokenizer, prompts_dataset, disable) -> None:
    trainer = GRPOTrainer(
        _model_with_dropout(tokenizer),
        _dense,
        args=small_config(tmp_path, beta=0.1, disable_dropout=disable),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    for module in (trainer.model, trainer.ref_model):
        probabilities = {m.p for m in module.modules() if isinstance(m, nn.Dropout)}
        assert probabilities == ({0.0} if disable else {0.3})


def test_grpo_num_completions_to_print(tmp_path, tokenizer, tiny_model, prompts_dataset, capsys) -> None:
    def with_note(completions, log_extra, **kwargs):
        log_extra("note", ["n"] * len(completions))
        return _dense([[len(c)] for c in completions])

    trainer = GRPOTrainer(
        tiny_model,
        with_note,
        args=small_config(tmp_path, max_steps=1, log_completions=True, num_completions_to_print=2),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    out = capsys.readouterr().out
    assert "completions at step 1 (2 of 4 rows)" in out
    assert out.count("    completion: ") == 2 and "with_note=" in out and "note=n" in out


def test_grpo_num_generations_eval(tmp_path, tokenizer, tiny_model, prompts_dataset) -> None:
    trainer = GRPOTrainer(
        tiny_model,
        _dense,
        args=small_config(tmp_path, num_generations_eval=2, per_device_eval_batch_size=3),
        train_dataset=prompts_dataset,
        eval_dataset=prompts_dataset.select(range(3)),
        processing_class=tokenizer,
    )
    sizes = []
    generate = trainer.generation_backend.generate
    trainer.generation_backend.generate = lambda model, prompt_ids: (
        sizes.append(len(prompt_ids)) or generate(model, prompt_ids)
    )
    assert "eval_reward" in trainer.evaluate()
    assert sizes == [6]  # 3 prompts x 2 completions


def test_grpo_cache_implementation_reaches_the_generation_config(
    tmp_path, tokenizer, tiny_model, prompts_dataset
) -> None:
    trainer = GRPOTrainer(
        tiny_model,
        _dense,
        args=small_config(tmp_path, cache_implementation="dynamic", generation_kwargs={"top_k": 3}),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    config = trainer.generation_backend.generation_config
    assert config.cache_implementation == "dynamic" and config.top_k == 3


# ---- models from folders, PEFT ----------------------------------------------------------------------------------


def test_grpo_model_and_tokenizer_from_a_folder(tmp_path, prompts_dataset) -> None:
    folder = save_tiny_model(tmp_path / "policy", hidden_size=16, num_layers=1, num_heads=2)
    trainer = GRPOTrainer(
        str(folder),
        _dense,
        args=small_config(tmp_path, max_steps=1, beta=0.1, model_init_kwargs={"dtype": "bfloat16"}),
        train_dataset=prompts_dataset,
    )
    assert trainer.processing_class.name_or_path == str(folder)
    assert trainer.model.dtype == torch.bfloat16 == trainer.ref_model.dtype
    trainer.train()
    assert "kl" in trainer.state.log_history[0]


def test_grpo_peft_config_wraps_the_policy(tmp_path, tokenizer, tiny_model, prompts_dataset) -> None:
    peft = pytest.importorskip("peft")
    trainer = GRPOTrainer(
        tiny_model,
        _dense,
        args=small_config(tmp_path, max_steps=1, beta=0.5),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
        peft_config=peft.LoraConfig(r=2, target_modules=["q_proj", "v_proj"]),
    )
    assert isinstance(trainer.model, peft.PeftModel) and trainer.ref_model is None
    trainer.train()


# ---- TR-DPO reference sync in GRPO -------------------------------------------------------------------------------


def test_grpo_sync_ref_model(tmp_path, tokenizer, prompts_dataset) -> None:
    model = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2)
    trainer = GRPOTrainer(
        model,
        _dense,
        args=small_config(
            tmp_path,
            max_steps=2,
            beta=0.1,
            sync_ref_model=True,
            ref_model_mixup_alpha=1.0,
            ref_model_sync_steps=2,
            save_strategy="steps",
            save_steps=2,
        ),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
    )
    initial = [p.detach().clone() for p in trainer.ref_model.parameters()]
    trainer.train()
    sync = next(c for c in trainer.callback_handler.callbacks if isinstance(c, ReferenceSyncCallback))
    assert sync.num_syncs == 1
    # alpha=1 at step 2: the reference is now the trained policy, no longer the initial copy
    assert all(torch.equal(r, p) for r, p in zip(trainer.ref_model.parameters(), trainer.model.parameters()))
    assert not all(torch.equal(r, i) for r, i in zip(trainer.ref_model.parameters(), initial))
    assert (tmp_path / "checkpoint-2" / ReferenceSyncCallback.CHECKPOINT_FILE).exists()


def test_grpo_sync_ref_model_needs_beta(tmp_path) -> None:
    with pytest.raises(ValueError, match="sync_ref_model .* beta=0 uses no reference"):
        small_config(tmp_path, sync_ref_model=True)


# ---- prompts are checked at construction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompts", "error", "message"),
    [
        (["a", "b", None], TypeError, r"train_dataset row 2: column 'prompt' holds NoneType \(None\)"),
        (["a", ""], ValueError, r"train_dataset row 1: column 'prompt' is an empty string"),
        ([1, 2], TypeError, r"train_dataset row 0: column 'prompt' holds int \(1\)"),
    ],
)
def test_grpo_bad_prompts_name_the_row(tmp_path, tokenizer, tiny_model, prompts, error, message) -> None:
    with pytest.raises(error, match=message):
        GRPOTrainer(
            tiny_model,
            _dense,
            args=small_config(tmp_path),
            train_dataset=Dataset.from_dict({"prompt": prompts}),
            processing_class=tokenizer,
        )
