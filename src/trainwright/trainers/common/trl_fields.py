"""Every TRL 1.16 ``GRPOConfig`` / ``DPOConfig`` field, and what trainwright's configs do with it.

Why a table: a TRL script should run after changing only its import line. Fields we implement are
accepted; fields we do not implement must fail loudly *by name*, with the reason, instead of Python's
``TypeError: __init__() got an unexpected keyword argument`` (or, worse, being silently ignored).
One table drives three things, so they cannot drift apart:

* :func:`refuse_unsupported_trl_options`, called when a config is constructed
  (:class:`trainwright.trainers.common.config_checks.TRLCompatibleConfig`);
* the field tables of ``docs/trainers.md`` (:func:`render_markdown` prints them; a test checks that the
  page holds exactly this rendering);
* a test that introspects TRL's dataclasses and checks every TRL field is listed and is accepted or
  refused as listed.

Statuses: ``supported`` (same meaning and default as TRL), ``different`` (accepted, but the default or
the behaviour differs: the note says how), ``not supported`` (refused with a ``TypeError``).
The table lists every field TRL adds to ``TrainingArguments`` and every ``TrainingArguments`` field
whose default TRL changes; all other ``TrainingArguments`` fields behave as in transformers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SUPPORTED = "supported"
DIFFERENT = "different"
UNSUPPORTED = "not supported"
STATUSES = (SUPPORTED, DIFFERENT, UNSUPPORTED)


@dataclass(frozen=True)
class TRLField:
    """How one TRL config field maps onto trainwright: a status and a one-line note (the why)."""

    status: str
    note: str = ""


def _ok(note: str = "") -> TRLField:
    return TRLField(SUPPORTED, note)


def _diff(note: str) -> TRLField:
    return TRLField(DIFFERENT, note)


def _no(note: str) -> TRLField:
    return TRLField(UNSUPPORTED, note)


_VLLM = _no(
    "vLLM is not built in: generation goes through a `GenerationBackend` (`generation_backend=`), "
    "see docs/trainers.md"
)
_VLLM_IS = _no(
    "vLLM importance-sampling correction: there is no vLLM sampler to correct for (see `use_vllm`)"
)
_CB = _no("generation uses `model.generate`; plug another engine through `generation_backend=`")

# Fields that mean the same in both TRL configs.
_COMMON: dict[str, TRLField] = {
    "model_init_kwargs": _ok(
        "`from_pretrained` kwargs when a model (policy, reference or reward model) is given as an id or "
        "local folder; `dtype` defaults to float32, as in TRL"
    ),
    "trust_remote_code": _ok("passed to every `from_pretrained` (models and tokenizers)"),
    "bf16": _diff(
        "`TrainingArguments`' default (off) is kept; TRL turns bf16 on whenever fp16 is off, even on CPU"
    ),
    "gradient_checkpointing": _diff("`TrainingArguments`' default (off) is kept; TRL turns it on"),
    "learning_rate": _diff(
        "`TrainingArguments`' default (5e-5) is kept; TRL's is 1e-6: set it explicitly when porting a script "
        "that relied on TRL's"
    ),
}

GRPO_FIELDS: dict[str, TRLField] = {
    **_COMMON,
    "disable_dropout": _ok("default off, as TRL's GRPO; applies to policy and reference"),
    "cast_lm_head_to_fp32": _ok("policy and reference heads in float32 (tied embeddings keep their dtype)"),
    "router_aux_loss_coef": _ok(
        "MoE load-balancing loss added with this weight (None: the model config's); refused for non-MoE models"
    ),
    "pad_to_multiple_of": _ok(
        "each micro-batch is trimmed to its own longest row, then padded up to the multiple; 'auto' pads only on Neuron"
    ),
    "logging_steps": _ok("10, as TRL"),
    "remove_unused_columns": _ok("False, as TRL: the extra dataset columns reach the reward functions"),
    "per_device_eval_batch_size": _diff(
        "counts *prompts* in evaluation (each gets `num_generations_eval` completions); TRL counts completions"
    ),
    # batching
    "num_generations": _ok(),
    "num_generations_eval": _diff(
        "G in evaluation (default `num_generations`; 1 is allowed); see `per_device_eval_batch_size`"
    ),
    "generation_batch_size": _ok("alternative to `steps_per_generation`, validated as in TRL"),
    "steps_per_generation": _ok(),
    "num_iterations": _ok(),
    "shuffle_dataset": _ok(),
    "ds3_gather_for_generation": _no(
        "DeepSpeed ZeRO-3 generation is not special-cased: `generate` runs on the unwrapped model"
    ),
    # generation
    "max_completion_length": _diff("default 256 (TRL: 512)"),
    "temperature": _ok("also divides the logits of π_θ, π_old and π_ref, as TRL"),
    "top_p": _ok(),
    "top_k": _ok(),
    "min_p": _ok(),
    "repetition_penalty": _ok(),
    "generation_kwargs": _ok("extra `GenerationConfig` fields; they override the fields above"),
    "chat_template_kwargs": _ok(),
    "cache_implementation": _ok("passed to `GenerationConfig`"),
    "use_transformers_continuous_batching": _CB,
    "transformers_continuous_batching_config": _CB,
    "use_transformers_paged": _CB,
    "max_tool_calling_iterations": _ok(
        "caps the tool-call turns of `tools=` / `environment_factory=` rollouts"
    ),
    # vLLM
    "use_vllm": _VLLM,
    "vllm_mode": _VLLM,
    "vllm_model_impl": _VLLM,
    "vllm_enable_sleep_mode": _VLLM,
    "vllm_structured_outputs_regex": _VLLM,
    "vllm_server_base_url": _VLLM,
    "vllm_server_host": _VLLM,
    "vllm_server_port": _VLLM,
    "vllm_server_timeout": _VLLM,
    "vllm_group_port": _VLLM,
    "vllm_gpu_memory_utilization": _VLLM,
    "vllm_max_model_length": _VLLM,
    "vllm_tensor_parallel_size": _VLLM,
    "vllm_importance_sampling_correction": _VLLM_IS,
    "vllm_importance_sampling_mode": _VLLM_IS,
    "vllm_importance_sampling_clip_max": _VLLM_IS,
    "vllm_importance_sampling_clip_min": _VLLM_IS,
    "vllm_importance_sampling_cap": _VLLM_IS,
    # loss
    "beta": _ok("0 builds no reference model"),
    "epsilon": _ok(),
    "epsilon_high": _ok(),
    "delta": _ok("INTELLECT-2 two-sided clipping of the unclipped ratio"),
    "loss_type": _ok("grpo, bnpo, dr_grpo, dapo (the default), cispo, sapo, luspo, vespo"),
    "importance_sampling_level": _ok(),
    "mask_truncated_completions": _ok(),
    "use_bias_correction_kl": _ok(),
    "off_policy_mask_threshold": _ok(
        "DeepSeek-V3.2 off-policy sequence masking, against π_old (the sampling policy here)"
    ),
    "sapo_temperature_pos": _ok(),
    "sapo_temperature_neg": _ok(),
    "vespo_k_pos": _ok(),
    "vespo_lambda_pos": _ok(),
    "vespo_k_neg": _ok(),
    "vespo_lambda_neg": _ok(),
    "top_entropy_quantile": _ok("quantile over the micro-batch's active tokens on all processes, as TRL"),
    "entropy_coef": _diff(
        "as TRL; the logged `policy_loss` is on the scale of `loss` for every loss type (TRL divides dapo, "
        "cispo and vespo's by gradient accumulation)"
    ),
    "use_adaptive_entropy": _ok(
        "updated once per optimizer step; the controller state is saved in checkpoints"
    ),
    "entropy_coef_min": _ok(),
    "entropy_coef_max": _ok(),
    "entropy_coef_delta": _ok(),
    "entropy_target": _ok(),
    # rewards
    "reward_weights": _ok(),
    "scale_rewards": _ok("'group', 'batch', 'none' (or True/False)"),
    "multi_objective_aggregation": _ok("sum_then_normalize (default) or normalize_then_sum (GDPO)"),
    # reference sync (TR-DPO)
    "sync_ref_model": _ok(
        "needs `beta > 0` and a non-PEFT policy; the blended reference is saved in checkpoints"
    ),
    "ref_model_mixup_alpha": _ok(),
    "ref_model_sync_steps": _ok(),
    # logging
    "log_completions": _diff(
        "appends rows to `output_dir/completions.jsonl` (and a W&B table) instead of rich tables and parquet files"
    ),
    "num_completions_to_print": _diff(
        "prints the first N rows as plain text at each log; None prints none (TRL prints every row with rich)"
    ),
    "log_multimodal": _no("no image inputs"),
    "log_unique_prompts": _no("the W&B table always has one row per completion"),
    "log_completions_hub_repo": _no("the trainer uploads nothing to the Hub"),
}

DPO_FIELDS: dict[str, TRLField] = {
    **_COMMON,
    "disable_dropout": _ok("default on, as TRL's DPO; applies to policy and reference"),
    "logging_steps": _diff("`TrainingArguments`' default (500) is kept; TRL's is 10"),
    "dataset_num_proc": _ok(),
    "max_length": _ok("truncation per sequence in the collator, as TRL"),
    "truncation_mode": _ok("keep_start (default) or keep_end"),
    "padding_free": _diff(
        "implemented (TRL 1.16 warns and pads): rows are packed into one sequence with restarting position_ids; "
        "exact with every attention implementation, memory-efficient with flash-attention kernels"
    ),
    "precompute_ref_log_probs": _diff(
        "cached on disk by dataset tokens and reference weights; an explicit `ref_model` is freed after the "
        "precompute, so `evaluate()` on data not seen at construction raises (TRL keeps it and scores the data); "
        "refused for streamed datasets, as TRL"
    ),
    "precompute_ref_batch_size": _ok(),
    "loss_type": _ok("TRL's 15 losses, plus cdpo and simpo"),
    "loss_weights": _ok(),
    "ld_alpha": _ok(
        "LD-DPO: tokens past the pair's shorter completion weigh α in policy and reference log-probs (the "
        "collator builds the weights; the precompute cache is keyed by α)"
    ),
    "f_divergence_type": _ok(
        "f-DPO: reverse_kl, forward_kl, js_divergence, alpha_divergence; refused at config time for losses with "
        "no f-DPO form (TRL refuses them when the trainer is built)"
    ),
    "f_alpha_divergence_coef": _ok(),
    "label_smoothing": _ok(),
    "beta": _ok(),
    "use_weighting": _ok("WPO pair weights (not with aot / aot_unpaired, as TRL)"),
    "discopop_tau": _ok(),
    "activation_offloading": _no(
        "activations are not offloaded to CPU; use gradient_checkpointing to save memory"
    ),
    "sync_ref_model": _ok("TR-DPO; the blended reference is saved in checkpoints and restored on resume"),
    "ref_model_mixup_alpha": _ok(),
    "ref_model_sync_steps": _ok(),
    "pad_token": _no("deprecated in TRL: set `tokenizer.pad_token` instead"),
    "pad_to_multiple_of": _no(
        "each micro-batch is trimmed to its own longest row; fixed shapes only help compile-once backends (Neuron)"
    ),
    "router_aux_loss_coef": _ok(
        "MoE load-balancing loss added with this weight (None: the model config's), logged as `aux_loss`; refused "
        "for non-MoE models; such a batch runs one forward (no shared-prompt forward)"
    ),
}

TRL_FIELDS: dict[str, dict[str, TRLField]] = {"GRPOConfig": GRPO_FIELDS, "DPOConfig": DPO_FIELDS}


class UnsupportedTRLOptionError(TypeError):
    """A TRL config option that trainwright refuses (a ``TypeError``, like any unknown keyword)."""


def refuse_unsupported_trl_options(config_name: str, kwargs: Mapping[str, Any]) -> None:
    """Raise :class:`UnsupportedTRLOptionError` naming every TRL-only option in ``kwargs`` we do not support."""
    table = TRL_FIELDS[config_name]
    refused = [name for name in kwargs if name in table and table[name].status == UNSUPPORTED]
    if not refused:
        return
    reasons = "; ".join(f"{name}: {table[name].note}" for name in refused)
    names = ", ".join(refused)
    raise UnsupportedTRLOptionError(
        f"{config_name} got {names}: TRL {config_name} option(s) that trainwright does not support "
        f"({reasons}). Remove them; docs/trainers.md lists every TRL option and what trainwright does with it."
    )


def render_markdown(config_name: str) -> str:
    """The docs table for ``config_name`` (``docs/trainers.md`` holds exactly this text)."""
    lines = ["| TRL field | trainwright | why / how |", "|---|---|---|"]
    for name, entry in sorted(TRL_FIELDS[config_name].items()):
        lines.append(f"| `{name}` | {entry.status} | {entry.note} |")
    return "\n".join(lines)


__all__ = [
    "DIFFERENT",
    "DPO_FIELDS",
    "GRPO_FIELDS",
    "STATUSES",
    "SUPPORTED",
    "TRL_FIELDS",
    "UNSUPPORTED",
    "TRLField",
    "UnsupportedTRLOptionError",
    "refuse_unsupported_trl_options",
    "render_markdown",
]
