"""Every TRL 1.16 ``DPOConfig`` field, and what trainwright's ``DPOConfig`` does with it (the table's rules are
:mod:`trainwright.trainers.common.trl_fields`')."""

from __future__ import annotations

from trainwright.trainers.common.trl_fields import COMMON_FIELDS, TRLField, different, supported, unsupported

DPO_FIELDS: dict[str, TRLField] = {
    **COMMON_FIELDS,
    "disable_dropout": supported("default on, as TRL's DPO; applies to policy and reference"),
    "logging_steps": different("`TrainingArguments`' default (500) is kept; TRL's is 10"),
    "dataset_num_proc": supported(),
    "max_length": supported("truncation per sequence in the collator, as TRL"),
    "truncation_mode": supported("keep_start (default) or keep_end"),
    "padding_free": different(
        "implemented (TRL 1.16 warns and pads): rows are packed into one sequence with restarting position_ids; "
        "exact with every attention implementation, memory-efficient with flash-attention kernels"
    ),
    "precompute_ref_log_probs": different(
        "cached on disk by dataset tokens and reference weights; an explicit `ref_model` is freed after the "
        "precompute, so `evaluate()` on data not seen at construction raises (TRL keeps it and scores the data); "
        "refused for streamed datasets, as TRL"
    ),
    "precompute_ref_batch_size": supported(),
    "loss_type": supported("TRL's 15 losses, plus cdpo and simpo"),
    "loss_weights": supported(),
    "ld_alpha": supported(
        "LD-DPO: tokens past the pair's shorter completion weigh α in policy and reference log-probs (the "
        "collator builds the weights; the precompute cache is keyed by α)"
    ),
    "f_divergence_type": supported(
        "f-DPO: reverse_kl, forward_kl, js_divergence, alpha_divergence; refused at config time for losses with "
        "no f-DPO form (TRL refuses them when the trainer is built)"
    ),
    "f_alpha_divergence_coef": supported(),
    "label_smoothing": supported(),
    "beta": supported(),
    "use_weighting": supported("WPO pair weights (not with aot / aot_unpaired, as TRL)"),
    "discopop_tau": supported(),
    "activation_offloading": unsupported(
        "activations are not offloaded to CPU; use gradient_checkpointing to save memory"
    ),
    "sync_ref_model": supported(
        "TR-DPO; the blended reference is saved in checkpoints and restored on resume"
    ),
    "ref_model_mixup_alpha": supported(),
    "ref_model_sync_steps": supported(),
    "pad_token": unsupported("deprecated in TRL: set `tokenizer.pad_token` instead"),
    "pad_to_multiple_of": unsupported(
        "each micro-batch is trimmed to its own longest row; fixed shapes only help compile-once backends (Neuron)"
    ),
    "router_aux_loss_coef": supported(
        "MoE load-balancing loss added with this weight (None: the model config's), logged as `aux_loss`; refused "
        "for non-MoE models; such a batch runs one forward (no shared-prompt forward)"
    ),
}
