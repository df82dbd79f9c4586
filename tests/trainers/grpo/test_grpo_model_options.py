"""TRL 1.16 options that change the models, batches or construction: cast_lm_head_to_fp32, the MoE
router loss, pad_to_multiple_of, num_generations_eval=1, reward_processing_classes, per-row
chat_template_kwargs, adaptive entropy control across a resume, the TRL warnings and errors at
construction, and model tags."""

from __future__ import annotations

import copy
import json

import pytest
import torch
from datasets import Dataset
from transformers import Qwen2ForCausalLM, Qwen2MoeConfig, Qwen2MoeForCausalLM

from trainwright import GRPOTrainer

from .grpo_settings import small_config, tiny_qwen2_config, tiny_reward_model
from .test_grpo_resume import StopAt


def _dense(completion_ids, **kwargs):
    return [float(sum(ids) % 7) for ids in completion_ids]


def _trainer(tmp_path, tokenizer, model, dataset, **overrides):
    return GRPOTrainer(
        model,
        _dense,
        args=small_config(tmp_path, **overrides),
        train_dataset=dataset,
        processing_class=tokenizer,
    )


def _qwen2(tokenizer, tie: bool, dtype=torch.float32):
    torch.manual_seed(0)
    return Qwen2ForCausalLM(tiny_qwen2_config(tokenizer, tie_word_embeddings=tie)).to(dtype)


# ---- cast_lm_head_to_fp32 -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tie", [False, True], ids=["untied", "tied"])
def test_cast_lm_head_to_fp32_runs_the_head_in_float32(tmp_path, tokenizer, prompts_dataset, tie):
    model = _qwen2(tokenizer, tie, dtype=torch.bfloat16)
    trainer = _trainer(tmp_path, tokenizer, model, prompts_dataset, cast_lm_head_to_fp32=True, max_steps=1)
    head, embeddings = model.get_output_embeddings(), model.get_input_embeddings()
    assert head.weight.dtype == torch.float32
    assert (head.weight is embeddings.weight) == tie  # tying survives the cast
    ids = torch.tensor([[5, 6, 7]])
    assert embeddings(ids).dtype == torch.bfloat16  # the rest of the network keeps its dtype
    assert model(input_ids=ids).logits.dtype == torch.float32
    before = head.weight.detach().clone()
    trainer.train()
    assert not torch.equal(before, head.weight)
    assert trainer.state.log_history[-1]["train_loss"] is not None


def test_cast_lm_head_to_fp32_refuses_an_adapter_on_the_head(tmp_path, tokenizer, prompts_dataset):
    peft = pytest.importorskip("peft")
    with pytest.raises(ValueError, match="LM head carries a PEFT adapter"):
        GRPOTrainer(
            _qwen2(tokenizer, tie=False),
            _dense,
            args=small_config(tmp_path, cast_lm_head_to_fp32=True),
            train_dataset=prompts_dataset,
            processing_class=tokenizer,
            peft_config=peft.LoraConfig(r=2, target_modules=["q_proj", "lm_head"]),
        )


def test_an_adapter_on_the_lm_head_is_trained(tmp_path, tokenizer, prompts_dataset):
    """TRL refuses a LoRA adapter on lm_head (its log-probs read ``lm_head.weight`` directly); ours go through
    the model's forward, so the head's adapter gets gradients like any other."""
    peft = pytest.importorskip("peft")
    trainer = GRPOTrainer(
        _qwen2(tokenizer, tie=False),
        _dense,
        args=small_config(tmp_path, max_steps=2, learning_rate=0.05),
        train_dataset=prompts_dataset,
        processing_class=tokenizer,
        peft_config=peft.LoraConfig(r=2, target_modules=["q_proj", "lm_head"]),
    )
    head_adapter = {
        n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lm_head.lora_B" in n
    }
    assert head_adapter
    trainer.train()
    params = dict(trainer.model.named_parameters())
    assert all(not torch.equal(value, params[name]) for name, value in head_adapter.items())


# ---- MoE load-balancing loss --------------------------------------------------------------------------------


def _moe(tokenizer):
    config = Qwen2MoeConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        moe_intermediate_size=16,
        shared_expert_intermediate_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        num_experts=4,
        num_experts_per_tok=2,
        router_aux_loss_coef=0.25,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    return Qwen2MoeForCausalLM(config)


def test_router_aux_loss_is_added_with_its_coefficient(tmp_path, tokenizer, prompts_dataset):
    trainer = _trainer(tmp_path, tokenizer, _moe(tokenizer), prompts_dataset, max_steps=2)
    assert trainer.aux_loss_enabled and trainer.router_aux_loss_coef == 0.25  # the config's coefficient
    trainer.train()
    assert all(log["aux_loss"] > 0 for log in trainer.state.log_history if "loss" in log)
    batch = {k: v for k, v in trainer.round_buffer.micro_batches[0].items()}
    with torch.no_grad():
        with_aux = trainer.compute_loss(trainer.model, batch)
        trainer.router_aux_loss_coef = 0.0
        without = trainer.compute_loss(trainer.model, batch)
        ids = torch.cat([batch["prompt_ids"], batch["completion_ids"]], 1)
        mask = torch.cat([batch["prompt_mask"], batch["completion_mask"]], 1)
        aux = trainer.model(input_ids=ids, attention_mask=mask, output_router_logits=True).aux_loss
    torch.testing.assert_close(with_aux - without, 0.25 * aux, rtol=1e-5, atol=1e-6)


def test_router_aux_loss_coef_can_turn_it_off_and_is_refused_without_router(
    tmp_path, tokenizer, prompts_dataset
):
    trainer = _trainer(tmp_path, tokenizer, _moe(tokenizer), prompts_dataset, router_aux_loss_coef=0.0)
    assert not trainer.aux_loss_enabled
    dense = _qwen2(tokenizer, tie=False)
    assert not _trainer(tmp_path, tokenizer, dense, prompts_dataset).aux_loss_enabled
    with pytest.raises(
        ValueError, match="router_aux_loss_coef=0.1, but Qwen2ForCausalLM is not a Mixture-of-Experts"
    ):
        _trainer(tmp_path, tokenizer, dense, prompts_dataset, router_aux_loss_coef=0.1)


# ---- batches ------------------------------------------------------------------------------------------------


def test_pad_to_multiple_of_pads_micro_batches_without_changing_the_loss(
    tmp_path, tokenizer, prompts_dataset
):
    trainer = _trainer(
        tmp_path, tokenizer, _qwen2(tokenizer, tie=False), prompts_dataset, pad_to_multiple_of=8, max_steps=1
    )
    trainer.train()
    batch = trainer.round_buffer.micro_batches[0]
    assert batch["prompt_ids"].shape[1] % 8 == 0 and batch["completion_ids"].shape[1] % 8 == 0
    prompt_cols = batch["prompt_mask"].any(0).nonzero()
    completion_width = int(batch["completion_mask"].sum(1).max())
    trimmed = dict(batch)
    first = int(prompt_cols.min())
    for key in ("prompt_ids", "prompt_mask"):
        trimmed[key] = batch[key][:, first:]
    for key in ("completion_ids", "completion_mask"):
        trimmed[key] = batch[key][:, :completion_width]
    trimmed.pop("prompt_rows"), trimmed.pop("prompt_inverse")
    with torch.no_grad():
        padded_loss = trainer.compute_loss(trainer.model, batch)
        trimmed_loss = trainer.compute_loss(trainer.model, trimmed)
    assert trimmed["prompt_ids"].shape[1] % 8 or trimmed["completion_ids"].shape[1] % 8  # padding was added
    torch.testing.assert_close(padded_loss, trimmed_loss, rtol=1e-5, atol=1e-6)


def test_one_completion_per_prompt_in_evaluation(tmp_path, tokenizer, tiny_model, prompts_dataset):
    trainer = _trainer(
        tmp_path, tokenizer, tiny_model, prompts_dataset.select(range(4)), num_generations_eval=1
    )
    metrics = trainer.evaluate(eval_dataset=prompts_dataset.select(range(4)))
    assert metrics["eval_frac_reward_zero_std"] == 1.0  # a group of one has no spread
    assert metrics["eval_loss"] == 0.0  # every advantage is 0
    assert metrics["eval_completions/mean_length"] > 0


# ---- rewards and prompts ------------------------------------------------------------------------------------


def test_reward_processing_classes_follow_trl(tmp_path, tokenizer, tiny_model, prompts_dataset):
    def build(processing_classes):
        return GRPOTrainer(
            tiny_model,
            [tiny_reward_model(tokenizer), tiny_reward_model(tokenizer)],
            args=small_config(tmp_path),
            train_dataset=prompts_dataset,
            processing_class=tokenizer,
            reward_processing_classes=processing_classes,
        )

    with pytest.raises(
        ValueError, match="has 1 entries but there are 2 reward functions: the numbers must match"
    ):
        build(tokenizer)  # one tokenizer is a list of one, as in TRL
    trainer = build([tokenizer, copy.deepcopy(tokenizer)])
    assert len(trainer.reward_processing_classes) == 2 and trainer.reward_processing_classes[0] is tokenizer


def test_chat_template_kwargs_per_row_update_the_configs(tmp_path, tokenizer, tiny_model):
    tok = copy.deepcopy(tokenizer)
    tok.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}{% if shout %}!{% endif %}{% if tag %}#{% endif %}"
    dataset = Dataset.from_dict(
        {
            "prompt": [[{"role": "user", "content": "hi"}]] * 2,
            "chat_template_kwargs": [{"shout": True}, {"shout": False}],
        }
    )
    trainer = GRPOTrainer(
        tiny_model,
        _dense,
        args=small_config(tmp_path, chat_template_kwargs={"tag": True, "shout": True}),
        train_dataset=dataset,
        processing_class=tok,
    )
    ids = trainer.rounds.tokenize_prompts([dataset[0]["prompt"]] * 2, [dataset[0], dataset[1]])
    assert tok.decode(ids[0]) == "hi!#" and tok.decode(ids[1]) == "hi#"  # the row wins over the config


# ---- adaptive entropy across a resume -----------------------------------------------------------------------


def test_adaptive_entropy_moves_once_per_step_and_survives_a_resume(tmp_path, tokenizer, prompts_dataset):
    def build(output_dir, callbacks=None):
        model = _qwen2(tokenizer, tie=False)
        args = small_config(
            output_dir,
            max_steps=4,
            gradient_accumulation_steps=2,
            save_strategy="steps",
            save_steps=2,
            entropy_coef=0.01,
            use_adaptive_entropy=True,
            entropy_target=50.0,  # above any entropy: the coefficient rises every optimizer step
            entropy_coef_delta=0.005,
        )
        return GRPOTrainer(
            model,
            _dense,
            args=args,
            train_dataset=prompts_dataset,
            processing_class=tokenizer,
            callbacks=callbacks,
        )

    full = build(tmp_path / "full")
    full.train()
    assert full.entropy_coef == pytest.approx(0.01 + 0.005 * 4)
    logs = [log for log in full.state.log_history if "loss" in log]
    assert [round(log["entropy_coef"], 6) for log in logs] == [0.015, 0.02, 0.025, 0.03]
    assert all("policy_loss" in log and log["entropy"] > 0 for log in logs)

    interrupted = build(tmp_path / "run", callbacks=[StopAt(2)])
    interrupted.train()
    state = json.loads((tmp_path / "run" / "checkpoint-2" / "entropy_ctrl_state.json").read_text())
    assert state["entropy_coef"] == pytest.approx(0.02)
    resumed = build(tmp_path / "run")
    resumed.train(resume_from_checkpoint=str(tmp_path / "run" / "checkpoint-2"))
    assert resumed.entropy_coef == pytest.approx(full.entropy_coef)
    for a, b in zip(full.model.parameters(), resumed.model.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


# ---- construction -------------------------------------------------------------------------------------------


def test_construction_errors_and_warnings_follow_trl(
    tmp_path, tokenizer, tiny_model, prompts_dataset, caplog
):
    args = small_config(tmp_path)
    with pytest.raises(ValueError, match="No reward source provided"):
        GRPOTrainer(tiny_model, args=args, train_dataset=prompts_dataset, processing_class=tokenizer)
    with pytest.raises(ValueError, match="`train_dataset` is required"):
        GRPOTrainer(tiny_model, _dense, args=args, processing_class=tokenizer)
    with caplog.at_level("WARNING", logger="trainwright"):
        trainer = _trainer(
            tmp_path, tokenizer, tiny_model, prompts_dataset, importance_sampling_level="sequence"
        )
    assert "weights each sequence by its completion length" in caplog.text  # dapo sums per-token terms
    assert {"trl", "grpo"} <= set(trainer.model.model_tags)
