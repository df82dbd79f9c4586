"""``DPOConfig``: ``TrainingArguments`` plus the preference-optimisation knobs.

Field names follow TRL's ``DPOConfig`` where the feature is the same, so a config ports over by
changing the import. Everything is validated here, at construction, so a typo in ``loss_type`` fails
before a model is loaded rather than at the first training step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainwright._extras import require_train_extra

require_train_extra("trainwright.DPOConfig")

from transformers import TrainingArguments

from trainwright.trainers.common.config_checks import (
    TRLCompatibleConfig,
    check_finite_fields,
    check_sync_settings,
)
from trainwright.trainers.dpo.losses import F_DIVERGENCES, check_f_divergence, check_loss_types
from trainwright.trainers.dpo.trl_fields import DPO_FIELDS

TRUNCATION_MODES = ("keep_start", "keep_end")


@dataclass
class DPOConfig(TRLCompatibleConfig, TrainingArguments):
    """Configuration for :class:`trainwright.DPOTrainer`.

    Unlike TRL we keep ``TrainingArguments``' defaults for precision, gradient checkpointing and learning
    rate (TRL turns bf16 and checkpointing on even on CPU); the only changed default is
    ``remove_unused_columns=False`` (see its help). TRL options trainwright does not implement are
    refused by name (see :mod:`trainwright.trainers.dpo.trl_fields` and ``docs/trainers.md``).
    """

    trl_config_name = "DPOConfig"
    trl_fields = DPO_FIELDS

    # --- model loading -----------------------------------------------------------------------------
    model_init_kwargs: dict[str, Any] | None = field(
        default=None,
        metadata={"help": "from_pretrained kwargs for a model or ref_model given as an id / local folder."},
    )
    trust_remote_code: bool = False

    # --- objective -------------------------------------------------------------------------------
    beta: float = field(default=0.1, metadata={"help": "β: strength of the implicit KL penalty (τ for IPO)."})
    loss_type: list[str] = field(
        default_factory=lambda: ["sigmoid"],
        metadata={
            "help": "Loss name, or a list of names combined as Σ w_k·loss_k (e.g. ['sigmoid', 'sft'] = RPO)."
        },
    )
    loss_weights: list[float] | None = field(
        default=None, metadata={"help": "One weight per entry of loss_type (default 1.0 each)."}
    )
    label_smoothing: float = field(
        default=0.0,
        metadata={"help": "ε: label-flip rate for cdpo/robust/aot; the smoothing of exo_pair (>0)."},
    )
    discopop_tau: float = field(default=0.05, metadata={"help": "τ of the DiscoPOP blend."})
    simpo_gamma: float = field(default=0.5, metadata={"help": "γ: target reward margin of SimPO."})
    use_weighting: bool = field(
        default=False,
        metadata={"help": "WPO: weight each pair's loss by how likely the policy finds both completions."},
    )
    ld_alpha: float | None = field(
        default=None,
        metadata={
            "help": "LD-DPO α in [0, 1]: completion tokens past the shorter completion of the pair count with "
            "weight α in the sequence log-probs (None: no weighting; 1.0 is the same)."
        },
    )
    f_divergence_type: str = field(
        default="reverse_kl",
        metadata={
            "help": f"f-DPO divergence between policy and reference: one of {', '.join(F_DIVERGENCES)}."
        },
    )
    f_alpha_divergence_coef: float = field(
        default=0.5, metadata={"help": "α of the alpha_divergence f-divergence."}
    )
    router_aux_loss_coef: float | None = field(
        default=None,
        metadata={
            "help": "Weight of a Mixture-of-Experts model's load-balancing loss added to the loss (None: the model "
            "config's router_aux_loss_coef; 0 turns it off). Refused for a model without router logits."
        },
    )
    reference_free: bool = field(
        default=False,
        metadata={"help": "Treat reference log-probs as 0: no reference model is built or run."},
    )
    # --- data ------------------------------------------------------------------------------------
    max_length: int | None = field(
        default=1024, metadata={"help": "Cap on prompt+completion tokens per sequence; None: no truncation."}
    )
    truncation_mode: str = field(
        default="keep_start", metadata={"help": "'keep_start' (cut the end) or 'keep_end' (cut the start)."}
    )
    padding_free: bool = field(
        default=False,
        metadata={
            "help": "Pack the batch into one sequence (restarting position_ids) instead of padding it."
        },
    )
    dataset_num_proc: int | None = field(
        default=None, metadata={"help": "Worker processes for tokenisation."}
    )
    # Trainer's default (True) drops every dataset column that is not an argument of model.forward —
    # that would delete prompt_ids/chosen_ids/rejected_ids before our collator sees them.
    remove_unused_columns: bool = field(
        default=False,
        metadata={
            "help": "Kept False: the preference collator needs the tokenised columns model.forward lacks."
        },
    )
    # --- reference ---------------------------------------------------------------------------------
    precompute_ref_log_probs: bool = field(
        default=False,
        metadata={"help": "Compute reference log-probs once before training and free the reference model."},
    )
    precompute_ref_batch_size: int | None = field(
        default=None,
        metadata={"help": "Batch size of the precompute pass (default: per-device eval batch size)."},
    )
    precompute_cache_dir: str | None = field(
        default=None,
        metadata={
            "help": "Where precomputed reference log-probs are cached (default: <output_dir>/ref_logps_cache)."
        },
    )
    sync_ref_model: bool = field(
        default=False,
        metadata={"help": "TR-DPO: move the reference towards the policy every ref_model_sync_steps."},
    )
    ref_model_mixup_alpha: float = field(default=0.6, metadata={"help": "α in ref ← α·θ + (1−α)·ref."})
    ref_model_sync_steps: int = field(
        default=512, metadata={"help": "Optimizer steps between two TR-DPO syncs."}
    )
    disable_dropout: bool = field(
        default=True, metadata={"help": "Turn dropout off in policy and reference."}
    )
    logps_chunk_size: int = field(
        default=4,
        metadata={"help": "Rows per chunk when turning logits into token log-probs (memory bound)."},
    )

    def __post_init__(self) -> None:
        check_finite_fields(self)
        if isinstance(self.loss_type, str):
            self.loss_type = [self.loss_type]
        self.loss_type = list(self.loss_type)
        self.loss_weights = check_loss_types(self.loss_type, self.loss_weights)
        check_f_divergence(self.f_divergence_type, self.loss_type)
        if self.ld_alpha is not None and not 0.0 <= self.ld_alpha <= 1.0:
            raise ValueError(f"ld_alpha must be in [0, 1] (or None), got {self.ld_alpha}")
        if self.router_aux_loss_coef is not None and self.router_aux_loss_coef < 0:
            raise ValueError(f"router_aux_loss_coef must be >= 0 (or None), got {self.router_aux_loss_coef}")
        if self.beta <= 0:
            raise ValueError(f"beta must be > 0, got {self.beta}")
        if self.truncation_mode not in TRUNCATION_MODES:
            raise ValueError(
                f"truncation_mode must be one of {TRUNCATION_MODES}, got {self.truncation_mode!r}"
            )
        if self.max_length is not None and self.max_length < 2:
            raise ValueError(
                f"max_length must be >= 2 (room for a prompt token and a completion token), got {self.max_length}"
            )
        if not 0.0 <= self.label_smoothing < 0.5:
            raise ValueError(f"label_smoothing must be in [0, 0.5), got {self.label_smoothing}")
        if self.use_weighting and {"aot", "aot_unpaired"} & set(self.loss_type):
            raise ValueError(
                "use_weighting (WPO) cannot be combined with loss_type 'aot' / 'aot_unpaired': those losses sort "
                "the pairs of the batch, so per-pair weights would land on the wrong pairs (TRL refuses it too)"
            )
        if "exo_pair" in self.loss_type and self.label_smoothing == 0.0:
            raise ValueError(
                "loss_type 'exo_pair' needs label_smoothing > 0 (log ε appears in the loss); 1e-3 is usual"
            )
        if self.sync_ref_model:
            if self.precompute_ref_log_probs or self.reference_free:
                raise ValueError(
                    "sync_ref_model (TR-DPO) updates a live reference model; it cannot be combined with "
                    "precompute_ref_log_probs or reference_free"
                )
            check_sync_settings(self.ref_model_mixup_alpha, self.ref_model_sync_steps)
        if self.logps_chunk_size < 1:
            raise ValueError(f"logps_chunk_size must be >= 1, got {self.logps_chunk_size}")
        super().__post_init__()
