"""Configuration of :class:`trainwright.trainers.grpo.GRPOTrainer`.

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

require_train_extra("trainwright.trainers.grpo_config")

from transformers import TrainingArguments  # noqa: E402

from trainwright.trainers.config_checks import (  # noqa: E402
    TRLCompatibleConfig,
    check_choice,
    check_finite_fields,
    check_sync_settings,
)

LOSS_TYPES = ("grpo", "bnpo", "dr_grpo", "dapo")
SCALE_REWARDS = ("group", "batch", "none")
IMPORTANCE_SAMPLING_LEVELS = ("token", "sequence")


@dataclass
class GRPOConfig(TRLCompatibleConfig, TrainingArguments):
    """``TrainingArguments`` plus the GRPO knobs (defaults follow TRL 1.16 unless noted).

    TRL options trainwright does not implement are refused by name (see
    :mod:`trainwright.trainers.trl_fields` and the table in ``docs/trainers.md``).
    """

    trl_config_name = "GRPOConfig"

    # --- model loading --------------------------------------------------------------------------
    model_init_kwargs: dict[str, Any] | None = field(
        default=None,
        metadata={"help": "from_pretrained kwargs for a model (or reward model) given as an id / local folder."},
    )
    trust_remote_code: bool = False
    disable_dropout: bool = field(default=False, metadata={"help": "Turn dropout off in policy and reference."})

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

    # --- rewards and advantages -----------------------------------------------------------------
    reward_weights: list[float] | None = None
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
    importance_sampling_level: str = "token"
    mask_truncated_completions: bool = False
    use_bias_correction_kl: bool = True

    # --- reference sync (TR-DPO) ----------------------------------------------------------------
    sync_ref_model: bool = field(
        default=False,
        metadata={"help": "Move the reference towards the policy every ref_model_sync_steps (needs beta > 0)."},
    )
    ref_model_mixup_alpha: float = field(default=0.6, metadata={"help": "α in ref ← α·θ + (1−α)·ref."})
    ref_model_sync_steps: int = field(default=512, metadata={"help": "Optimizer steps between two syncs."})

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
        check_choice("loss_type", self.loss_type, LOSS_TYPES)
        check_choice("scale_rewards", self.scale_rewards, SCALE_REWARDS)
        check_choice("importance_sampling_level", self.importance_sampling_level, IMPORTANCE_SAMPLING_LEVELS)
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
        if self.num_generations_eval is not None and self.num_generations_eval < 2:
            raise ValueError(
                f"num_generations_eval must be >= 2 (advantages need a group), got {self.num_generations_eval}"
            )
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
