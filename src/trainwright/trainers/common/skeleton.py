"""The skeleton ``DPOTrainer`` and ``GRPOTrainer`` share: what both do the same way, in one place.

Why a base class: the two trainers drifted when each wrote its own version of the same decision
(whether there is a reference policy, what to pad with, where to write by default, how metrics reach
the logs). :class:`TrainerSkeleton` owns each of these once; a trainer says only what differs
(:attr:`TrainerSkeleton.trl_name`, :meth:`TrainerSkeleton.uses_reference_for`) and keeps its own
file for its own algorithm.

A trainer's ``__init__`` runs, in order:

1. :meth:`TrainerSkeleton.prepare`: the construction checks and parts of
   :func:`~trainwright.trainers.common.construction.prepare_parts` (config type, model and tokenizer loading,
   PEFT, the reference policy, dropout off), with TRL's default output folder
   (``<model name>-DPO`` / ``<model name>-GRPO``), the pad id, the metrics window and the weight of
   a Mixture-of-Experts model's load-balancing loss (TRL's ``aux_loss_enabled``);
2. its own set-up, then ``Trainer.__init__``;
3. :meth:`TrainerSkeleton.finish`: the model tags (``trl`` and the trainer's name), the model card
   written at each checkpoint, the reference on the device and the callbacks the configuration asks for
   (:func:`~trainwright.trainers.common.construction.attach_owned_callbacks`).

Public overrides only: ``train`` (resume from the newest *complete* checkpoint and give the
trainer-owned callbacks their checkpoint state back) and ``log`` (the metrics window's means, in
place so that ``evaluate()`` returns them too).
"""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn
from transformers import Trainer

from trainwright.callbacks.completions_log import CompletionsLogCallback
from trainwright.callbacks.model_card import ModelCardCallback
from trainwright.trainers.common.construction import (
    TrainerParts,
    attach_owned_callbacks,
    default_output_dir,
    padding_token_id,
    prepare_parts,
    resolve_resume,
    tag_model,
)
from trainwright.trainers.common.logprobs import PrefixSharing, prefix_sharing_for
from trainwright.trainers.common.metrics import MetricsWindow
from trainwright.trainers.common.router_loss import router_aux_loss_coef
from trainwright.trainers.common.trl_hooks import warn_unused_trl_overrides


class TrainerSkeleton(Trainer):
    """Base of the reference trainers (see the module docstring); not a trainer by itself."""

    #: TRL's name of the algorithm: the default output folder's suffix (``<model>-DPO``) and, lower-cased,
    #: the model-card tag
    trl_name: ClassVar[str]
    #: the trainer's config class (``DPOConfig`` / ``GRPOConfig``); ``args`` must be one
    config_class: ClassVar[type]
    #: what the train dataset must hold, for the error when there is none
    train_dataset_needs: ClassVar[str]

    # Both compute_loss methods return the mean over the micro-batch; Trainer.training_step then divides
    # by gradient accumulation (transformers 5.x asks a subclass whether it already did).
    loss_is_scaled_for_ga = False

    #: whether the objective compares with a reference policy (fixed at construction)
    uses_reference: bool
    #: the id batches are padded with: the tokenizer's pad token, else its EOS
    pad_token_id: int
    #: metrics accumulated between two ``log`` calls
    metrics: MetricsWindow
    #: the reference module kept on the trainer (``None``: none needed, precomputed, or a PEFT policy's base)
    ref_model: nn.Module | None
    #: weight of a Mixture-of-Experts model's load-balancing loss in the objective (0: not added)
    router_aux_loss_coef: float

    @classmethod
    def uses_reference_for(cls, args: Any) -> bool:
        """Whether a run with ``args`` compares with a reference policy: the one place each trainer says it."""
        raise NotImplementedError

    @classmethod
    def keeps_reference_module(cls, args: Any) -> bool:
        """Whether a reference *module* is needed during training (DPO's precomputed log-probs need none)."""
        return cls.uses_reference_for(args)

    def prepare(
        self,
        *,
        args: Any,
        model: str | nn.Module,
        train_dataset: Any,
        processing_class: Any,
        ref_model: str | nn.Module | None,
        peft_config: Any,
        quantization_config: Any = None,
    ) -> TrainerParts:
        """Step 1 of ``__init__`` (before ``Trainer.__init__``): checks, parts and the shared facts."""
        cls = type(self)
        base = next(k for k in cls.__mro__ if k.__module__.startswith("trainwright.trainers."))
        warn_unused_trl_overrides(cls, base, f"{cls.trl_name}Trainer")
        if train_dataset is None:
            raise ValueError(f"`train_dataset` is required: {cls.train_dataset_needs}")
        parts = prepare_parts(
            who=cls.__name__,
            args=args,
            config_class=cls.config_class,
            default_output_dir=default_output_dir(model, cls.trl_name),
            model=model,
            processing_class=processing_class,
            ref_model=ref_model,
            needs_reference=cls.keeps_reference_module,
            peft_config=peft_config,
            quantization_config=quantization_config,
        )
        self.uses_reference = cls.uses_reference_for(parts.args)
        self.pad_token_id = padding_token_id(parts.processing_class, parts.model, cls.__name__)
        self.metrics = MetricsWindow()
        self.ref_model = parts.ref_model
        self.router_aux_loss_coef = router_aux_loss_coef(parts.model, parts.args.router_aux_loss_coef)
        return parts

    @property
    def beta(self) -> float:
        """TRL's ``trainer.beta``: the config's ``beta``, which the loss reads at every step, so setting it
        (by hand or with ``ParameterScheduleCallback(trainer, "beta", ...)``) changes the next step's loss."""
        return self.args.beta

    @beta.setter
    def beta(self, value: float) -> None:
        self.args.beta = value

    @property
    def aux_loss_enabled(self) -> bool:
        """Whether the loss adds the MoE load-balancing loss (``router_aux_loss_coef != 0``), TRL's name."""
        return self.router_aux_loss_coef != 0.0

    def finish(self) -> CompletionsLogCallback | None:
        """Step 3 of ``__init__`` (after ``Trainer.__init__``); returns the completions table's callback
        when ``log_completions`` asks for one. Both trainers write the tagged model card (``README.md`` in
        ``output_dir``) at every checkpoint, as TRL's do."""
        tag_model(self.model, "trl", type(self).trl_name.lower())
        self.add_callback(ModelCardCallback(self))
        return attach_owned_callbacks(self, self.ref_model)

    @property
    def prefix_sharing(self) -> PrefixSharing:
        """Whether and how a micro-batch's shared prompt is run once (decided on first use, once the
        accelerator is set up: off under FSDP / DeepSpeed and gradient checkpointing); see
        :class:`~trainwright.trainers.common.logprobs.PrefixSharing`."""
        sharing = self.__dict__.get("_prefix_sharing")
        if sharing is None:
            sharing = self._prefix_sharing = prefix_sharing_for(self)
        return sharing

    def train(self, resume_from_checkpoint: str | bool | None = None, **kwargs: Any) -> Any:
        """``Trainer.train`` resuming from the newest *complete* checkpoint, with the trainer-owned
        callbacks' state restored from it first (the Trainer restores the rest)."""
        return super().train(resume_from_checkpoint=resolve_resume(self, resume_from_checkpoint), **kwargs)

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """Add the metrics window's means (``eval_``-prefixed in evaluation), in place."""
        self.metrics.merge_into(logs)
        super().log(logs, start_time)
