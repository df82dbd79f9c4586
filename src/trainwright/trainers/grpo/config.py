"""Configuration of :class:`trainwright.trainers.grpo.trainer.GRPOTrainer`.

Batching vocabulary (the same as TRL's, so configs carry over):

* ``per_device_train_batch_size`` counts **completions** per device per micro-step;
* ``num_generations`` (G) completions are sampled per prompt; a prompt's G completions form a *group*
  whose mean reward is the baseline of GRPO's advantage;
* ``steps_per_generation`` micro-steps are fed by one *generation round*: one ``generate`` call per
  device produces ``per_device_train_batch_size × steps_per_generation`` completions. Generating once
  for many steps is the point of the trainer: autoregressive decoding costs one forward pass per new
  token, so fewer, larger ``generate`` calls are much cheaper;
* ``num_iterations`` (μ) replays each round μ times (PPO-style reuse; the clipped ratio keeps it safe).

So the number of ``generate`` calls is ``micro-steps / (steps_per_generation × num_iterations)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainwright._extras import require_train_extra

require_train_extra("trainwright.trainers.grpo.config")

from transformers import TrainingArguments

from trainwright.trainers.common.config_checks import (
    TRLCompatibleConfig,
    check_choice,
    check_finite_fields,
    check_sync_settings,
)
from trainwright.trainers.grpo import loss_types
from trainwright.trainers.grpo.trl_fields import GRPO_FIELDS

SCALE_REWARDS = ("group", "batch", "none")
IMPORTANCE_SAMPLING_LEVELS = ("token", "sequence")
AGGREGATIONS = ("sum_then_normalize", "normalize_then_sum")


@dataclass
class GRPOConfig(TRLCompatibleConfig, TrainingArguments):
    """``TrainingArguments`` plus the GRPO knobs (defaults follow TRL 1.16 unless noted).

    TRL options trainwright does not implement are refused by name (see
    :mod:`trainwright.trainers.grpo.trl_fields` and the table in ``docs/trainers.md``).
    """

    trl_config_name = "GRPOConfig"
    trl_fields = GRPO_FIELDS

    # --- model loading --------------------------------------------------------------------------
    model_init_kwargs: dict[str, Any] | None = field(
        default=None,
        metadata={
            "help": "from_pretrained kwargs for a model (or reward model) given as an id / local folder."
        },
    )
    trust_remote_code: bool = False
    disable_dropout: bool = field(
        default=False, metadata={"help": "Turn dropout off in policy and reference."}
    )
    cast_lm_head_to_fp32: bool = field(
        default=False,
        metadata={"help": "Run the LM head of policy and reference in float32 (ScaleRL, arXiv:2510.13786)."},
    )
    router_aux_loss_coef: float | None = field(
        default=None,
        metadata={
            "help": "Weight of a Mixture-of-Experts model's load-balancing loss (None: the model config's "
            "router_aux_loss_coef; 0 turns it off). Refused for a model without router logits."
        },
    )

    # --- batching -------------------------------------------------------------------------------
    num_generations: int = field(default=8, metadata={"help": "G: completions per prompt (>= 2)."})
    num_generations_eval: int | None = field(
        default=None, metadata={"help": "G in evaluation (default: num_generations)."}
    )
    steps_per_generation: int | None = field(
        default=None,
        metadata={"help": "Micro-steps fed by one generation round (default: gradient_accumulation_steps)."},
    )
    generation_batch_size: int | None = field(
        default=None,
        metadata={
            "help": "Completions per generation round over all processes; the alternative to "
            "steps_per_generation (set one of the two)."
        },
    )
    num_iterations: int = field(default=1, metadata={"help": "mu: times each generation round is reused."})
    shuffle_dataset: bool = field(
        default=True, metadata={"help": "Shuffle prompts (seeded, same on every rank)."}
    )
    pad_to_multiple_of: int | str | None = field(
        default="auto",
        metadata={
            "help": "Pad each micro-batch's prompt and completion widths to a multiple of this ('auto': 128 on "
            "Neuron, which compiles once per shape; no padding elsewhere)."
        },
    )

    # --- generation -----------------------------------------------------------------------------
    max_completion_length: int = field(default=256, metadata={"help": "max_new_tokens of each completion."})
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float | None = None
    repetition_penalty: float = 1.0
    cache_implementation: str | None = field(
        default=None, metadata={"help": "GenerationConfig.cache_implementation of model.generate."}
    )
    generation_kwargs: dict[str, Any] | None = field(
        default=None, metadata={"help": "Extra GenerationConfig fields; they override the fields above."}
    )
    chat_template_kwargs: dict[str, Any] | None = None
    max_tool_calling_iterations: int | None = field(
        default=None,
        metadata={
            "help": "Most tool-call turns per rollout with tools= / environment_factory= (None: no cap)."
        },
    )

    # --- rewards and advantages -----------------------------------------------------------------
    reward_weights: list[float] | None = None
    multi_objective_aggregation: str = field(
        default="sum_then_normalize",
        metadata={
            "help": "'sum_then_normalize' (weighted sum, then scale_rewards) or 'normalize_then_sum' (GDPO: each "
            "reward normalised in its group, then the weighted sum normalised over the batch)."
        },
    )
    scale_rewards: str | bool = field(default="group", metadata={"help": "'group', 'batch' or 'none'."})
    dynamic_sampling: bool = field(
        default=False,
        metadata={
            "help": "DAPO dynamic sampling: drop zero-variance groups and refill from the next prompts."
        },
    )
    max_dynamic_sampling_rounds: int = field(
        default=4, metadata={"help": "Extra generate calls allowed per round to refill dropped groups."}
    )

    # --- loss -----------------------------------------------------------------------------------
    loss_type: str = "dapo"
    beta: float = 0.0
    epsilon: float = 0.2
    epsilon_high: float | None = None
    delta: float | None = field(
        default=None, metadata={"help": "INTELLECT-2 two-sided clipping: cap the unclipped ratio at delta."}
    )
    importance_sampling_level: str = "token"
    mask_truncated_completions: bool = False
    use_bias_correction_kl: bool = True
    off_policy_mask_threshold: float | None = field(
        default=None,
        metadata={
            "help": "DeepSeek-V3.2 off-policy sequence masking: drop sequences with A < 0 whose mean KL(π_old‖π_θ) "
            "exceeds this (None: off)."
        },
    )
    sapo_temperature_pos: float = field(default=1.0, metadata={"help": "SAPO gate temperature for A > 0."})
    sapo_temperature_neg: float = field(default=1.05, metadata={"help": "SAPO gate temperature for A <= 0."})
    vespo_k_pos: float = field(default=2.0, metadata={"help": "VESPO gamma power k for A >= 0."})
    vespo_lambda_pos: float = field(default=3.0, metadata={"help": "VESPO gamma decay λ for A >= 0."})
    vespo_k_neg: float = field(default=3.0, metadata={"help": "VESPO gamma power k for A < 0."})
    vespo_lambda_neg: float = field(default=2.0, metadata={"help": "VESPO gamma decay λ for A < 0."})

    # --- entropy ---------------------------------------------------------------------------------
    top_entropy_quantile: float = field(
        default=1.0,
        metadata={"help": "Keep only the top-ρ quantile of tokens by entropy in the policy loss (1.0: all)."},
    )
    entropy_coef: float = field(
        default=0.0, metadata={"help": "Entropy bonus: loss − entropy_coef × mean token entropy (0: off)."}
    )
    use_adaptive_entropy: bool = field(
        default=False,
        metadata={
            "help": "Skywork-OR1 adaptive entropy control: move entropy_coef by entropy_coef_delta per step."
        },
    )
    entropy_coef_min: float = 0.0
    entropy_coef_max: float = 1.0
    entropy_coef_delta: float = 0.005
    entropy_target: float = field(
        default=0.2, metadata={"help": "Adaptive control applies the bonus only at or below this entropy."}
    )

    # --- reference sync (TR-DPO) ----------------------------------------------------------------
    sync_ref_model: bool = field(
        default=False,
        metadata={
            "help": "Move the reference towards the policy every ref_model_sync_steps (needs beta > 0)."
        },
    )
    ref_model_mixup_alpha: float = field(default=0.6, metadata={"help": "α in ref ← α·θ + (1−α)·ref."})
    ref_model_sync_steps: int = field(default=512, metadata={"help": "Optimizer steps between two syncs."})

    shuffle_round_rows: bool = field(
        default=True,
        metadata={
            "help": "As TRL: shuffle a generation round's rows before cutting it into micro-batches (a step sees "
            "completions of several prompts). False keeps each prompt's group whole in one micro-batch."
        },
    )

    # --- logging --------------------------------------------------------------------------------
    log_completions: bool = False
    completions_jsonl: str | None = field(
        default=None,
        metadata={"help": "JSONL file for the completions table (default: output_dir/completions.jsonl)."},
    )
    num_completions_to_print: int | None = field(
        default=None,
        metadata={"help": "With log_completions: print this many completion rows at each log (None: none)."},
    )

    # TRL's defaults for the inherited fields that matter to GRPO
    remove_unused_columns: bool = False
    logging_steps: float = 10

    def __post_init__(self) -> None:
        check_finite_fields(self)
        super().__post_init__()
        if isinstance(self.scale_rewards, bool):
            self.scale_rewards = "group" if self.scale_rewards else "none"
        check_choice("loss_type", self.loss_type, loss_types.loss_type_names())
        check_choice("scale_rewards", self.scale_rewards, SCALE_REWARDS)
        check_choice("importance_sampling_level", self.importance_sampling_level, IMPORTANCE_SAMPLING_LEVELS)
        check_choice("multi_objective_aggregation", self.multi_objective_aggregation, AGGREGATIONS)
        if self.max_tool_calling_iterations is not None and self.max_tool_calling_iterations < 0:
            raise ValueError(
                f"max_tool_calling_iterations must be >= 0 (or None for no cap), got {self.max_tool_calling_iterations}"
            )
        if self.auto_find_batch_size:
            raise ValueError(
                "auto_find_batch_size is not supported by GRPO: a generation round must hold whole groups of "
                "num_generations completions, which halving the batch on out-of-memory breaks; lower "
                "per_device_train_batch_size instead"
            )
        self._resolve_generation_batch()
        if self.epsilon_high is None:
            self.epsilon_high = self.epsilon
        check_batching(
            per_device_train_batch_size=self.per_device_train_batch_size,
            num_generations=self.num_generations,
            steps_per_generation=self.steps_per_generation,
            num_iterations=self.num_iterations,
            num_processes=self.world_size,
        )
        if self.num_generations_eval is not None and self.num_generations_eval < 1:
            raise ValueError(f"num_generations_eval must be >= 1, got {self.num_generations_eval}")
        self._check_loss_knobs()
        if self.max_completion_length < 1:
            raise ValueError(f"max_completion_length must be >= 1, got {self.max_completion_length}")
        if self.temperature <= 0:
            raise ValueError(
                f"temperature must be > 0 (sampling is required for GRPO), got {self.temperature}"
            )
        if self.epsilon < 0 or self.epsilon_high < 0:
            raise ValueError(f"epsilon ({self.epsilon}) and epsilon_high ({self.epsilon_high}) must be >= 0")
        if self.beta < 0:
            raise ValueError(f"beta must be >= 0, got {self.beta}")
        if self.max_dynamic_sampling_rounds < 0:
            raise ValueError(
                f"max_dynamic_sampling_rounds must be >= 0, got {self.max_dynamic_sampling_rounds}"
            )
        if self.num_completions_to_print is not None and self.num_completions_to_print < 0:
            raise ValueError(f"num_completions_to_print must be >= 0, got {self.num_completions_to_print}")
        if self.sync_ref_model:
            if self.beta == 0.0:
                raise ValueError(
                    "sync_ref_model moves the reference model, but beta=0 uses no reference; set beta > 0 "
                    "or turn sync_ref_model off"
                )
            check_sync_settings(self.ref_model_mixup_alpha, self.ref_model_sync_steps)

    def _check_loss_knobs(self) -> None:
        """Ranges of the loss and entropy options, each refused by name."""
        if not 0.0 <= self.top_entropy_quantile <= 1.0:
            raise ValueError(f"top_entropy_quantile must be in [0, 1], got {self.top_entropy_quantile}")
        if self.off_policy_mask_threshold is not None and self.off_policy_mask_threshold < 0:
            raise ValueError(
                f"off_policy_mask_threshold must be >= 0 (or None), got {self.off_policy_mask_threshold}"
            )
        if self.delta is not None and self.delta <= 0:
            raise ValueError(f"delta must be > 0 (or None), got {self.delta}")
        if self.sapo_temperature_pos <= 0 or self.sapo_temperature_neg <= 0:
            raise ValueError(
                f"sapo_temperature_pos ({self.sapo_temperature_pos}) and sapo_temperature_neg "
                f"({self.sapo_temperature_neg}) must be > 0"
            )
        if not self.entropy_coef_min <= self.entropy_coef_max:
            raise ValueError(
                f"entropy_coef_min ({self.entropy_coef_min}) must be <= entropy_coef_max ({self.entropy_coef_max})"
            )
        if self.router_aux_loss_coef is not None and self.router_aux_loss_coef < 0:
            raise ValueError(f"router_aux_loss_coef must be >= 0 (or None), got {self.router_aux_loss_coef}")
        if isinstance(self.pad_to_multiple_of, str) and self.pad_to_multiple_of != "auto":
            raise ValueError(
                f"pad_to_multiple_of must be 'auto', None or an int >= 1, got {self.pad_to_multiple_of!r}"
            )
        if isinstance(self.pad_to_multiple_of, int) and self.pad_to_multiple_of < 1:
            raise ValueError(f"pad_to_multiple_of must be >= 1, got {self.pad_to_multiple_of}")

    @property
    def entropy_bonus_enabled(self) -> bool:
        """Whether the loss subtracts an entropy bonus (adaptive control keeps it on even at coefficient 0)."""
        return self.entropy_coef != 0.0 or self.use_adaptive_entropy

    def resolved_pad_to_multiple_of(self) -> int | None:
        """``pad_to_multiple_of`` with 'auto' resolved as TRL does: 128 on Neuron, else no padding."""
        if self.pad_to_multiple_of == "auto":
            return 128 if self.device.type == "neuron" else None
        return self.pad_to_multiple_of

    def _resolve_generation_batch(self) -> None:
        """Derive ``steps_per_generation`` / ``generation_batch_size`` from each other, as TRL does.

        ``generation_batch_size`` counts completions over all processes, so it must be a whole number of
        micro-batches (``per_device_train_batch_size × processes``); setting both is ambiguous.
        """
        global_batch = self.per_device_train_batch_size * self.world_size
        if self.generation_batch_size is not None and self.steps_per_generation is not None:
            raise ValueError(
                f"generation_batch_size ({self.generation_batch_size}) and steps_per_generation "
                f"({self.steps_per_generation}) cannot both be set: one determines the other; set one of them"
            )
        if self.generation_batch_size is None:
            if self.steps_per_generation is None:
                self.steps_per_generation = self.gradient_accumulation_steps
            self.generation_batch_size = global_batch * self.steps_per_generation
            return
        if self.generation_batch_size < 1 or self.generation_batch_size % global_batch != 0:
            raise ValueError(
                f"generation_batch_size ({self.generation_batch_size}) must be a positive multiple of the global "
                f"batch size per_device_train_batch_size ({self.per_device_train_batch_size}) x processes "
                f"({self.world_size}) = {global_batch}"
            )
        self.steps_per_generation = self.generation_batch_size // global_batch


def check_batching(
    *,
    per_device_train_batch_size: int,
    num_generations: int,
    steps_per_generation: int,
    num_iterations: int,
    num_processes: int,
) -> None:
    """Raise a ``ValueError`` naming the numbers when the batch sizes cannot form whole groups.

    A generation round holds ``per_device_train_batch_size × num_processes × steps_per_generation``
    completions; it must split into whole groups of ``num_generations`` so that every prompt's
    completions are generated (and their advantages normalised) together.
    """
    if num_generations < 2:
        raise ValueError(
            f"num_generations must be >= 2 (GRPO's baseline is the mean reward of a group), "
            f"got {num_generations}"
        )
    if steps_per_generation < 1:
        raise ValueError(f"steps_per_generation must be >= 1, got {steps_per_generation}")
    if num_iterations < 1:
        raise ValueError(f"num_iterations must be >= 1, got {num_iterations}")
    per_round = per_device_train_batch_size * num_processes * steps_per_generation
    if per_round % num_generations != 0:
        raise ValueError(
            f"a generation round of per_device_train_batch_size ({per_device_train_batch_size}) x processes "
            f"({num_processes}) x steps_per_generation ({steps_per_generation}) = {per_round} completions "
            f"is not "
            f"divisible by num_generations ({num_generations}); change one of these so that it is"
        )


def loss_setting_notes(args: GRPOConfig) -> list[str]:
    """Combinations of loss options that run but are probably not what was meant (the trainer logs them
    as warnings at construction, as TRL does)."""
    notes = []
    spec = loss_types.get(args.loss_type)
    if spec.ratio_level is not None and args.importance_sampling_level != spec.ratio_level:
        notes.append(spec.ratio_level_note)
    if args.importance_sampling_level == "sequence" and args.loss_type in token_summed_losses():
        notes.append(
            f"importance_sampling_level='sequence' with loss_type={args.loss_type!r}: this loss sums per-token "
            "terms, so it weights each sequence by its completion length instead of optimising the "
            "per-sequence (GSPO) objective; use loss_type='grpo' to follow GSPO"
        )
    return notes


def token_summed_losses() -> tuple[str, ...]:
    """Loss types whose aggregation sums per-token terms across sequences (so a sequence-level ratio weighs a
    sequence by its length) and that do not fix their own ratio level (those get their own note)."""
    return loss_types.losses_where(lambda spec: spec.aggregation.token_summed and spec.ratio_level is None)
