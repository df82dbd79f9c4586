"""Every TRL 1.16 ``GRPOConfig`` field, and what trainwright's ``GRPOConfig`` does with it (the table's rules
are :mod:`trainwright.trainers.common.trl_fields`'). The ``loss_type`` note is derived from the loss registry
(:func:`trainwright.trainers.grpo.loss_types.trl_note`), so a registered loss appears in it."""

from __future__ import annotations

from trainwright.trainers.common.trl_fields import (
    COMMON_FIELDS,
    TRLField,
    different,
    supported,
    unsupported,
)
from trainwright.trainers.grpo import loss_types

_VLLM = unsupported(
    "vLLM is not built in: generation goes through a `GenerationBackend` (`generation_backend=`), "
    "see docs/trainers.md"
)
_VLLM_IS = unsupported(
    "vLLM importance-sampling correction: there is no vLLM sampler to correct for (see `use_vllm`)"
)
_CB = unsupported("generation uses `model.generate`; plug another engine through `generation_backend=`")

GRPO_FIELDS: dict[str, TRLField] = {
    **COMMON_FIELDS,
    "disable_dropout": supported("default off, as TRL's GRPO; applies to policy and reference"),
    "cast_lm_head_to_fp32": supported(
        "policy and reference heads in float32 (tied embeddings keep their dtype)"
    ),
    "router_aux_loss_coef": supported(
        "MoE load-balancing loss added with this weight (None: the model config's); refused for non-MoE models"
    ),
    "pad_to_multiple_of": supported(
        "each micro-batch is trimmed to its own longest row, then padded up to the multiple; 'auto' pads only on Neuron"
    ),
    "logging_steps": supported("10, as TRL"),
    "remove_unused_columns": supported("False, as TRL: the extra dataset columns reach the reward functions"),
    "per_device_eval_batch_size": different(
        "counts *prompts* in evaluation (each gets `num_generations_eval` completions); TRL counts completions"
    ),
    # batching
    "num_generations": supported(),
    "num_generations_eval": different(
        "G in evaluation (default `num_generations`; 1 is allowed); see `per_device_eval_batch_size`"
    ),
    "generation_batch_size": supported("alternative to `steps_per_generation`, validated as in TRL"),
    "steps_per_generation": supported(),
    "num_iterations": supported(),
    "shuffle_dataset": supported(),
    "ds3_gather_for_generation": unsupported(
        "DeepSpeed ZeRO-3 generation is not special-cased: `generate` runs on the unwrapped model"
    ),
    # generation
    "max_completion_length": different("default 256 (TRL: 512)"),
    "temperature": supported("also divides the logits of π_θ, π_old and π_ref, as TRL"),
    "top_p": supported(),
    "top_k": supported(),
    "min_p": supported(),
    "repetition_penalty": supported(),
    "generation_kwargs": supported("extra `GenerationConfig` fields; they override the fields above"),
    "chat_template_kwargs": supported(),
    "cache_implementation": supported("passed to `GenerationConfig`"),
    "use_transformers_continuous_batching": _CB,
    "transformers_continuous_batching_config": _CB,
    "use_transformers_paged": _CB,
    "max_tool_calling_iterations": supported(
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
    "beta": supported("0 builds no reference model"),
    "epsilon": supported(),
    "epsilon_high": supported(),
    "delta": supported("INTELLECT-2 two-sided clipping of the unclipped ratio"),
    "loss_type": supported(loss_types.trl_note),
    "importance_sampling_level": supported(),
    "mask_truncated_completions": supported(),
    "use_bias_correction_kl": supported(),
    "off_policy_mask_threshold": supported(
        "DeepSeek-V3.2 off-policy sequence masking, against π_old (the sampling policy here)"
    ),
    "sapo_temperature_pos": supported(),
    "sapo_temperature_neg": supported(),
    "vespo_k_pos": supported(),
    "vespo_lambda_pos": supported(),
    "vespo_k_neg": supported(),
    "vespo_lambda_neg": supported(),
    "top_entropy_quantile": supported(
        "quantile over the micro-batch's active tokens on all processes, as TRL"
    ),
    "entropy_coef": different(
        "as TRL; the logged `policy_loss` is on the scale of `loss` for every loss type (TRL divides dapo, "
        "cispo and vespo's by gradient accumulation)"
    ),
    "use_adaptive_entropy": supported(
        "updated once per optimizer step; the controller state is saved in checkpoints"
    ),
    "entropy_coef_min": supported(),
    "entropy_coef_max": supported(),
    "entropy_coef_delta": supported(),
    "entropy_target": supported(),
    # rewards
    "reward_weights": supported(),
    "scale_rewards": supported("'group', 'batch', 'none' (or True/False)"),
    "multi_objective_aggregation": supported("sum_then_normalize (default) or normalize_then_sum (GDPO)"),
    # reference sync (TR-DPO)
    "sync_ref_model": supported(
        "needs `beta > 0` and a non-PEFT policy; the blended reference is saved in checkpoints"
    ),
    "ref_model_mixup_alpha": supported(),
    "ref_model_sync_steps": supported(),
    # logging
    "log_completions": different(
        "appends rows to `output_dir/completions.jsonl` (and a W&B table) instead of rich tables and parquet files"
    ),
    "num_completions_to_print": different(
        "prints the first N rows as plain text at each log; None prints none (TRL prints every row with rich)"
    ),
    "log_multimodal": unsupported("no image inputs"),
    "log_unique_prompts": unsupported("the W&B table always has one row per completion"),
    "log_completions_hub_repo": unsupported("the trainer uploads nothing to the Hub"),
}
