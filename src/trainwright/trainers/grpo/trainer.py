"""``GRPOTrainer``: Group Relative Policy Optimisation on ``transformers.Trainer``, public overrides only.

GRPO (Shao et al. 2024, arXiv:2402.03300) samples G completions per prompt, scores them with reward
functions, and pushes up the completions that beat their group's mean reward (formulas in
:mod:`trainwright.trainers.grpo.advantages` and :mod:`trainwright.trainers.grpo.loss`).

How it fits the Trainer without private overrides (TRL overrides ``_prepare_inputs`` and
``_get_train_sampler``):

* ``get_train_dataloader`` returns a loader of *round batches*
  (:class:`~trainwright.trainers.grpo.sampler.RoundBatch`: a round's dataset rows tagged with the round
  and micro-step, its *slot*), one per micro-step: over a
  :class:`~trainwright.trainers.grpo.sampler.GroupedRoundSampler` for a map-style dataset, from a
  :class:`~trainwright.trainers.grpo.stream.RoundStream` for a streamed one. Each round's batch is
  repeated once per micro-step, so the Trainer's step, epoch and resume bookkeeping is right.
* ``training_step`` turns that batch into a real micro-batch: at slot 0 it runs one generation round
  (:meth:`~trainwright.trainers.grpo.generation_rounds.GenerationRounds.generate_round`: one ``generate`` call
  covering ``steps_per_generation`` micro-batches, then rewards, advantages, and old/reference
  log-probs when needed) into a :class:`~trainwright.trainers.grpo.buffer.RoundBuffer`; at every slot
  it hands ``super().training_step`` the buffered micro-batch ``slot % steps_per_generation``.
* ``compute_loss`` computes the policy log-probs and token entropies (each distinct prompt of a
  micro-batch run once for its completions when that pays off, :meth:`GRPOTrainer.completion_scores`)
  and the loss; ``log`` adds the windowed metrics.
* ``train`` (:class:`~trainwright.trainers.common.skeleton.TrainerSkeleton`'s, shared with DPO) gives the
  trainer-owned callbacks their checkpoint state back: the generation buffer (so a resume in the
  middle of a round continues with the same completions), the TR-DPO reference and the adaptive
  entropy coefficient.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

from trainwright._extras import require_train_extra

require_train_extra("trainwright.trainers.grpo.trainer")

import torch
from torch import nn
from torch.utils.data import DataLoader

from trainwright.trainers.common.config_checks import finite_knob
from trainwright.trainers.common.construction import load_pretrained
from trainwright.trainers.common.lm_head import FusedHead, backbone_hidden, fused_head, head_token_logps
from trainwright.trainers.common.logprobs import (
    SharedPrefix,
    selective_log_softmax,
    shared_prefix_logits,
    token_logps_and_entropy,
)
from trainwright.trainers.common.reference import kept, reference_forward
from trainwright.trainers.common.skeleton import TrainerSkeleton
from trainwright.trainers.common.streaming import is_streamed
from trainwright.trainers.grpo.agent import (
    AgentRollouts,
    agent_rollouts,
    environment_reward_weights,
    with_environment_rewards,
)
from trainwright.trainers.grpo.buffer import BufferSchema, RoundBuffer
from trainwright.trainers.grpo.callbacks import (
    EntropyControlCallback,
    SaveRoundBufferCallback,
    StepTimeCallback,
)
from trainwright.trainers.grpo.config import GRPOConfig, check_batching, loss_setting_notes
from trainwright.trainers.grpo.entropy import (
    EntropyController,
    high_entropy_mask,
)
from trainwright.trainers.grpo.environments import EnvironmentFactory, environment_owned_dataset
from trainwright.trainers.grpo.generation import GenerationBackend, backend_from_config
from trainwright.trainers.grpo.generation_rounds import GenerationRounds
from trainwright.trainers.grpo.loss import LossOutput, LossSettings, grpo_loss, off_policy_mask
from trainwright.trainers.grpo.model import cast_lm_head_to_fp32
from trainwright.trainers.grpo.rewards import RewardFunc, RewardScorer
from trainwright.trainers.grpo.rollout import RolloutFunc
from trainwright.trainers.grpo.round_data import check_prompt_dataset, loss_mask
from trainwright.trainers.grpo.sampler import (
    GroupedRoundSampler,
    RoundBatch,
    RoundLayout,
    RoundRows,
    collate_round,
)
from trainwright.trainers.grpo.stream import NO_DISPATCH, RoundStream, configure_for_streaming

logger = logging.getLogger(__name__)


def _check_datasets(
    args: GRPOConfig, train_dataset: Any, eval_dataset: Any, agent: AgentRollouts | None
) -> None:
    """Refuse datasets a round cannot start from (before a model is moved): prompts checked (unless an
    environment owns the data), streaming configured, dynamic sampling only on map-style data."""
    if (
        agent is None
        or agent.environments is None
        or "prompt" in getattr(train_dataset, "column_names", ["prompt"])
    ):
        check_prompt_dataset(train_dataset, "train_dataset")
    check_prompt_dataset(eval_dataset, "eval_dataset")
    configure_for_streaming(args, train_dataset, eval_dataset)
    if args.dynamic_sampling and is_streamed(train_dataset):
        raise ValueError(
            "dynamic_sampling refills groups with prompts looked up by index, which a streamed "
            "train_dataset does not have; turn dynamic_sampling off or pass a map-style Dataset"
        )


def _reward_scorer(
    args: GRPOConfig, reward_funcs: Any, processing_classes: Any, agent: AgentRollouts | None
) -> RewardScorer:
    """The reward functions (and environments' rewards) with their weights; reward models given as ids are
    loaded with the config's ``model_init_kwargs``."""
    return RewardScorer(
        reward_funcs,
        environment_reward_weights(args.reward_weights, agent),
        processing_classes,
        load=lambda model_id, auto_class: load_pretrained(model_id, auto_class, args, num_labels=1),
        chat_template_kwargs=args.chat_template_kwargs,
    )


def _cast_heads_to_fp32(*models: nn.Module | None) -> None:
    """``cast_lm_head_to_fp32`` on the policy and the reference (when there is one)."""
    for module in models:
        if module is not None:
            cast_lm_head_to_fp32(module)


def _identity_collator(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return rows


class CompletionScores(NamedTuple):
    """What one forward over a micro-batch's completions gives the loss."""

    logps: torch.Tensor  # (B, C) log π(completion_t | prompt, completion_<t)
    entropies: torch.Tensor | None  # (B, C) entropy of each position's next-token distribution
    aux_loss: torch.Tensor | None  # the MoE load-balancing loss of the forward


class GRPOTrainer(TrainerSkeleton):
    """GRPO with generation batched across ``steps_per_generation`` micro-steps (see module docstring).

    The arguments are TRL's, in TRL's order; ``peft_config``, ``ref_model`` (an explicit reference for
    ``beta > 0``; default: a frozen copy of the policy) and ``generation_backend`` are keyword-only.
    ``model`` and reward models may be ids / local folders (loaded with ``model_init_kwargs``); without
    ``processing_class`` the tokenizer is loaded from the model's folder.
    """

    trl_name = "GRPO"
    train_dataset_needs = "GRPO generates its completions from the dataset's prompts"
    config_class = GRPOConfig

    @classmethod
    def uses_reference_for(cls, args: GRPOConfig) -> bool:
        """The KL term ``β·KL(π_θ ‖ π_ref)`` needs a reference exactly when ``beta != 0`` (TRL's rule)."""
        return args.beta != 0.0

    def __init__(
        self,
        model: nn.Module | str,
        reward_funcs: RewardFunc | Sequence[RewardFunc] | None = None,
        args: GRPOConfig | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        reward_processing_classes: Any = None,
        callbacks: list[Any] | None = None,
        optimizers: tuple[Any, Any] = (None, None),
        *,
        quantization_config: Any = None,
        peft_config: Any = None,
        ref_model: nn.Module | str | None = None,
        generation_backend: GenerationBackend | None = None,
        tools: Sequence[Callable[..., Any]] | None = None,
        rollout_func: RolloutFunc | None = None,
        environment_factory: EnvironmentFactory | dict[str, EnvironmentFactory] | None = None,
    ) -> None:
        owned_data = train_dataset is None and environment_factory is not None
        parts = self.prepare(
            args=args,
            model=model,
            train_dataset=True if owned_data else train_dataset,
            processing_class=processing_class,
            ref_model=ref_model,
            peft_config=peft_config,
            quantization_config=quantization_config,
        )
        args, model, tokenizer = parts.args, parts.model, parts.processing_class
        self.agent = agent_rollouts(tokenizer, args, tools, environment_factory, rollout_func)
        reward_funcs = with_environment_rewards(reward_funcs, self.agent)
        if owned_data:
            train_dataset = environment_owned_dataset(args, multi=isinstance(environment_factory, dict))
        _check_datasets(args, train_dataset, eval_dataset, self.agent)
        for note in loss_setting_notes(args):
            logger.warning(note)
        self.scorer = _reward_scorer(args, reward_funcs, reward_processing_classes, self.agent)
        if args.cast_lm_head_to_fp32:
            _cast_heads_to_fp32(model, parts.ref_model)
        super().__init__(
            model=model,
            args=args,
            data_collator=_identity_collator,
            train_dataset=train_dataset,
            eval_dataset=eval_dataset,
            processing_class=tokenizer,
            callbacks=callbacks,
            optimizers=optimizers,
        )
        for func in self.scorer.funcs:
            if isinstance(func, nn.Module):
                func.to(self.args.device)
        self._set_up_rounds(
            generation_backend or backend_from_config(self.args, model, tokenizer, self.pad_token_id)
        )
        self._attach_grpo_callbacks()
        self.rounds.completions_logger = self.finish()

    def _set_up_rounds(self, generation_backend: GenerationBackend) -> None:
        """After ``Trainer.__init__``: the backend, the generation rounds, the round buffer and sampler, and the
        entropy controller."""
        self.generation_backend = generation_backend
        self.rounds = GenerationRounds(
            self,
            scorer=self.scorer,
            agent=self.agent,
            processing_class=self.processing_class,
            pad_token_id=self.pad_token_id,
            uses_reference=self.uses_reference,
            metrics=self.metrics,
        )
        self.round_buffer = RoundBuffer()
        self.round_sampler: GroupedRoundSampler | None = None
        self.entropy_controller = EntropyController(
            self.args.entropy_coef,
            adaptive=self.args.use_adaptive_entropy,
            target=self.args.entropy_target,
            delta=self.args.entropy_coef_delta,
            coef_min=self.args.entropy_coef_min,
            coef_max=self.args.entropy_coef_max,
        )

    def _attach_grpo_callbacks(self) -> None:
        """The GRPO callbacks this trainer attaches to itself (:mod:`trainwright.trainers.grpo.callbacks`)."""
        self.add_callback(
            SaveRoundBufferCallback(
                lambda: self.round_buffer,
                partial(setattr, self, "round_buffer"),
                self.args.process_index,
                self.buffer_schema,
            )
        )
        self.add_callback(StepTimeCallback(self.metrics))
        if self.args.entropy_bonus_enabled:
            reduce_sum = lambda stats: self.accelerator.reduce(stats, reduction="sum")
            self.add_callback(EntropyControlCallback(self.entropy_controller, self.metrics, reduce_sum))

    def buffer_schema(self) -> BufferSchema:
        """What this run's round buffer holds: a saved buffer must fit it to be resumed from."""
        logps = ("old_per_token_logps",) if self.rounds.needs_old_logps() else ()
        logps += ("ref_per_token_logps",) if self.uses_reference else ()
        return BufferSchema(
            micro_batches=self.args.steps_per_generation,
            rows=self.args.per_device_train_batch_size,
            vocab_size=self.model.get_input_embeddings().num_embeddings,
            logps=logps,
        )

    # ------------------------------------------------------------------ TRL's public attributes
    @property
    def reward_funcs(self) -> list[Any]:
        """The reward functions and (loaded) reward models, in order."""
        return self.scorer.funcs

    @property
    def _logs(self) -> dict[str, Any]:
        """The last training round's completions in the shape of TRL's private ``_logs`` (``prompt``,
        ``completion``, ``rewards`` per function, ``advantages``, ``extra`` per ``log_extra`` column), for
        scripts that read it; :attr:`last_completions` holds the same rows as completions-table rows."""
        rows = self.last_completions
        standard = {"prompt", "completion", "rewards", "advantage"}
        return {
            "prompt": [row["prompt"] for row in rows],
            "completion": [row["completion"] for row in rows],
            "rewards": {name: [row["rewards"][name] for row in rows] for name in self.reward_func_names},
            "advantages": [row["advantage"] for row in rows],
            "extra": {
                key: [row[key] for row in rows] for key in (rows[0] if rows else {}) if key not in standard
            },
        }

    @property
    def last_completions(self) -> list[dict[str, Any]]:
        """The last training round's completions-table rows (empty before the first round)."""
        return self.rounds.last_completions

    @property
    def tools(self) -> list[Callable[..., Any]]:
        """Every tool a rollout may call: ``tools=`` and the environments' methods (TRL's attribute)."""
        return list(self.agent.tools) if self.agent is not None else []

    @property
    def rollout_func(self) -> Any:
        """The user's rollout function (``rollout_func=``), or ``None``."""
        return self.agent.rollout_func if self.agent is not None else None

    @property
    def reward_func_names(self) -> list[str]:
        return self.scorer.names

    @property
    def reward_processing_classes(self) -> list[Any]:
        """One tokenizer per reward function (``None`` for plain functions)."""
        return self.scorer.processing_classes

    @property
    def reward_weights(self) -> torch.Tensor:
        return self.scorer.weights

    @property
    def entropy_coef(self) -> float:
        """The entropy-bonus coefficient now (moved once per optimizer step by adaptive control)."""
        return self.entropy_controller.coef

    @entropy_coef.setter
    def entropy_coef(self, value: float) -> None:
        self.entropy_controller.coef = float(value)

    # ------------------------------------------------------------------ data
    def get_train_dataloader(self) -> DataLoader:
        """A loader of round batches, one per micro-step; see :mod:`trainwright.trainers.grpo.sampler`."""
        if self.train_dataset is None:
            raise ValueError("GRPOTrainer: training requires a train_dataset")
        args = self.args
        processes = self.accelerator.num_processes
        check_batching(
            per_device_train_batch_size=args.per_device_train_batch_size,
            num_generations=args.num_generations,
            steps_per_generation=args.steps_per_generation,
            num_iterations=args.num_iterations,
            num_processes=processes,
        )
        per_device_round = args.per_device_train_batch_size * args.steps_per_generation
        if args.dynamic_sampling and per_device_round % args.num_generations != 0:
            raise ValueError(
                f"dynamic_sampling refills whole groups on each process, so per_device_train_batch_size "
                f"({args.per_device_train_batch_size}) x steps_per_generation "
                f"({args.steps_per_generation}) = "
                f"{per_device_round} must be divisible by num_generations ({args.num_generations})"
            )
        layout = RoundLayout(
            num_generations=args.num_generations,
            prompts_per_round=per_device_round * processes // args.num_generations,
            micro_steps_per_round=args.steps_per_generation * args.num_iterations,
            shuffle=args.shuffle_dataset,
            seed=args.seed,
        )
        if is_streamed(self.train_dataset):
            self.round_sampler = None
            stream = RoundStream(self.train_dataset, layout)
            loader = DataLoader(stream, batch_size=per_device_round, collate_fn=collate_round, num_workers=0)
            return self.accelerator.prepare(loader)
        self.round_sampler = GroupedRoundSampler(len(self.train_dataset), layout)
        loader = DataLoader(
            RoundRows(self.train_dataset, len(self.round_sampler)),
            sampler=self.round_sampler,
            batch_size=per_device_round,
            collate_fn=collate_round,
            **self._worker_settings(),
        )
        return self.accelerator.prepare(loader)

    def _worker_settings(self) -> dict[str, Any]:
        """The DataLoader worker options of ``TrainingArguments`` (the workers look rows up by index)."""
        args = self.args
        settings: dict[str, Any] = {
            "num_workers": args.dataloader_num_workers,
            "pin_memory": args.dataloader_pin_memory,
        }
        if args.dataloader_num_workers > 0:
            settings["persistent_workers"] = args.dataloader_persistent_workers
            settings["prefetch_factor"] = args.dataloader_prefetch_factor
            settings["multiprocessing_context"] = args.dataloader_multiprocessing_context
        return settings

    def get_eval_dataloader(self, eval_dataset: Any = None) -> DataLoader:
        """``Trainer.get_eval_dataloader``; a streamed evaluation set is read with ``dispatch_batches=False``
        and by one worker (for this loader only: ``dataloader_num_workers`` is restored after)."""
        dataset = self.eval_dataset[eval_dataset] if isinstance(eval_dataset, str) else eval_dataset
        if not is_streamed(dataset if dataset is not None else self.eval_dataset):
            return super().get_eval_dataloader(eval_dataset)
        if self.args.accelerator_config.dispatch_batches:
            raise ValueError(NO_DISPATCH)
        self.accelerator.dataloader_config.dispatch_batches = False
        workers = self.args.dataloader_num_workers
        self.args.dataloader_num_workers = 0
        try:
            return super().get_eval_dataloader(eval_dataset)
        finally:
            self.args.dataloader_num_workers = workers

    # ------------------------------------------------------------------ training
    def training_step(
        self, model: nn.Module, inputs: RoundBatch, num_items_in_batch: torch.Tensor | int | None = None
    ) -> torch.Tensor:
        """Swap the round batch for its buffered micro-batch (generating at the round's first slot)."""
        if not self.round_buffer.matches(inputs.key):
            if inputs.slot != 0:
                warnings.warn(
                    f"no buffered generation round for epoch {inputs.epoch} round {inputs.round} at micro-step "
                    f"{inputs.slot} (resumed from a checkpoint without grpo_buffer_rank*.pt?): regenerating "
                    f"this round",
                    stacklevel=2,
                )
            self.round_buffer = RoundBuffer(inputs.key, self.rounds.generate_round(inputs))
        micro_batch = self.round_buffer.micro_batches[inputs.slot % self.args.steps_per_generation]
        return super().training_step(model, micro_batch, num_items_in_batch)

    # ------------------------------------------------------------------ the update
    def compute_loss(
        self,
        model: nn.Module,
        inputs: dict[str, Any],
        return_outputs: bool = False,
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor:
        """The GRPO loss of one buffered micro-batch (before division by gradient accumulation)."""
        if return_outputs:
            raise ValueError("GRPOTrainer.compute_loss has no model outputs to return (return_outputs=True)")
        args = self.args
        mode = "train" if model.training else "eval"
        bonus = args.entropy_bonus_enabled
        scores = self.completion_scores(
            model, inputs, entropy=True, entropy_grad=bonus, aux_loss=self.aux_loss_enabled
        )
        mask = loss_mask(inputs)  # tool-result tokens (multi-turn rounds) are not the policy's: no loss
        token_mask = None
        if args.top_entropy_quantile < 1.0:
            token_mask = self.get_high_entropy_mask(scores.entropies, mask, 1.0 - args.top_entropy_quantile)
        output = grpo_loss(
            scores.logps,
            inputs["advantages"],
            mask,
            LossSettings.from_config(args),  # knobs checked where read: a schedule may change them
            old_per_token_logps=inputs.get("old_per_token_logps"),
            ref_per_token_logps=inputs.get("ref_per_token_logps"),
            tokens_per_micro_step=inputs["tokens_per_micro_step"],
            token_mask=token_mask,
            entropies=scores.entropies,
            entropy_coef=self.entropy_controller.applied_coef() if bonus else 0.0,
        )
        loss = output.loss
        if bonus and mode == "train":
            effective = mask if token_mask is None else mask * token_mask
            self.entropy_controller.record((scores.entropies * effective).sum(), effective.sum())
        if bonus:
            self.metrics.add(
                mode, "policy_loss", self.accelerator.gather(output.policy_loss.reshape(1)).mean().item()
            )
        if scores.aux_loss is not None:
            loss = loss + self.router_aux_loss_coef * scores.aux_loss
            aux = self.accelerator.gather(scores.aux_loss.detach().reshape(1)).mean().item()
            self.metrics.add(mode, "aux_loss", aux)
        self.log_loss_metrics(mode, output)
        return loss

    def log_loss_metrics(self, mode: str, output: LossOutput) -> None:
        """The loss statistics, pooled over all processes: masked means as (Σ, count) pairs in one gather,
        ``clip_ratio/low_min`` / ``high_max`` as the min / max over every process's sequences."""
        gather = self.accelerator.gather
        if output.means:
            names = list(output.means)
            local = torch.stack([torch.stack(output.means[name]) for name in names]).to(self.args.device)
            totals = gather(local.unsqueeze(0)).sum(dim=0)
            for name, (total, count) in zip(names, totals.tolist()):
                if count > 0:
                    self.metrics.add(mode, name, total / count)
        for name, values in output.per_sequence.items():
            pooled = gather(values.to(self.args.device))
            pooled = pooled[~torch.isnan(pooled)]
            if pooled.numel():
                self.metrics.add(mode, name, (pooled.min() if name.endswith("_min") else pooled.max()).item())

    def get_high_entropy_mask(
        self, entropies: torch.Tensor, mask: torch.Tensor, threshold: float
    ) -> torch.Tensor:
        """Bool mask of the active tokens whose entropy reaches the ``threshold`` quantile of the active
        tokens of every process (TRL's name; :func:`~trainwright.trainers.grpo.entropy.high_entropy_mask`)."""
        local = entropies[mask.bool()].float()
        padded = self.accelerator.pad_across_processes(local, dim=0, pad_index=float("-inf"))
        pooled = self.accelerator.gather(padded)
        return high_entropy_mask(entropies, mask, pooled[torch.isfinite(pooled)], threshold)

    @staticmethod
    def get_off_policy_mask(
        advantages: torch.Tensor,
        per_token_logps: torch.Tensor,
        sampling_per_token_logps: torch.Tensor,
        mask: torch.Tensor,
        off_policy_threshold: float,
    ) -> torch.Tensor:
        """TRL's name for :func:`~trainwright.trainers.grpo.loss.off_policy_mask`: (B, 1), 1 keeps a sequence."""
        return off_policy_mask(
            advantages, per_token_logps, sampling_per_token_logps, mask, off_policy_threshold
        )

    def completion_logps(self, model: nn.Module, batch: dict[str, Any]) -> torch.Tensor:
        """Per-token ``log π(completion_t | prompt, completion_<t)`` of temperature-scaled logits, (B, C)."""
        return self.completion_scores(model, batch).logps

    def completion_scores(
        self,
        model: nn.Module,
        batch: dict[str, Any],
        *,
        entropy: bool = False,
        entropy_grad: bool = False,
        aux_loss: bool = False,
    ) -> CompletionScores:
        """Log-probs (and, when asked, entropies and the MoE load-balancing loss) of a batch's completions.

        Logits are divided by the sampling temperature so that π_θ, π_old and π_ref are the
        distributions the completions were actually drawn from (as TRL does). The MoE loss needs router
        logits of the one forward over the whole sequences, so it turns the shared-prompt forward off.
        A model with a plain LM head (:func:`~trainwright.trainers.common.lm_head.fused_head`) is scored from its
        hidden states, the head and the log-softmax in one node, unless the entropy needs a gradient.
        """
        prompt_ids, completion_ids = batch["prompt_ids"], batch["completion_ids"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.cat([batch["prompt_mask"], batch["completion_mask"].clamp(max=1)], dim=1)
        width = completion_ids.size(1)
        head = None if aux_loss or entropy_grad else fused_head(model)
        pieces = (
            None if aux_loss else self._shared_prompt_logits(model, batch, input_ids, attention_mask, head)
        )
        router_loss = None
        if pieces is None and head is not None:
            hidden = backbone_hidden(head, width + 1, input_ids=input_ids, attention_mask=attention_mask)
            pieces = [hidden[:, :-1]]
        elif pieces is None:
            extra = {"output_router_logits": True} if aux_loss else {}
            outputs = model(
                input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=width + 1, **extra
            )
            pieces = [outputs.logits[:, :-1]]
            router_loss = getattr(outputs, "aux_loss", None) if aux_loss else None
        temperature = finite_knob(self.args, "temperature", minimum=0.0, strict=True)
        targets = completion_ids.split([piece.shape[1] for piece in pieces], dim=1)
        if head is not None:
            scored = [head_token_logps(head, p, t, temperature) for p, t in zip(pieces, targets)]
            logps = torch.cat([s.logps for s in scored], dim=1)
            entropies = torch.cat([s.entropy for s in scored], dim=1) if entropy else None
            return CompletionScores(logps, entropies, None)
        pieces = [piece if temperature == 1.0 else piece / temperature for piece in pieces]
        if not entropy:
            logps = [selective_log_softmax(piece, target) for piece, target in zip(pieces, targets)]
            return CompletionScores(
                torch.cat(logps, dim=1) if len(logps) > 1 else logps[0], None, router_loss
            )
        both = [token_logps_and_entropy(p, t, entropy_grad=entropy_grad) for p, t in zip(pieces, targets)]
        logps = torch.cat([lp for lp, _ in both], dim=1)
        entropies = torch.cat([h for _, h in both], dim=1)
        return CompletionScores(logps, entropies, router_loss)

    def _shared_prompt_logits(
        self,
        model: nn.Module,
        batch: dict[str, Any],
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        head: FusedHead | None = None,
    ) -> list[torch.Tensor] | None:
        """The completion logits (with ``head``: hidden states) with each distinct prompt of the micro-batch
        run once (its G completions share it; :func:`~trainwright.trainers.common.logprobs.shared_prefix_logits`),
        or ``None`` for one plain
        forward: no prompt groups in the batch (see :func:`~trainwright.trainers.grpo.round_data.split_round`),
        no repeated prompt, too small a saving, or a model / set-up that cannot reuse a KV cache."""
        rows, inverse = batch.get("prompt_rows"), batch.get("prompt_inverse")
        if rows is None or inverse is None or rows.numel() >= inverse.numel():
            return None
        sharing = self.prefix_sharing
        width = batch["prompt_ids"].shape[1]
        saved = (inverse.numel() - rows.numel()) * (width - 1)  # cached prompt tokens not run again
        argument = sharing.argument(model, saved_tokens=saved)
        if argument is None:
            return None
        prefix = SharedPrefix(width, rows, inverse)
        pieces = shared_prefix_logits(model, input_ids, attention_mask, prefix, argument, head)
        if pieces is None:
            sharing.disable(model)
        return pieces

    # ------------------------------------------------------------------ evaluation and logging
    def prediction_step(
        self,
        model: nn.Module,
        inputs: list[dict[str, Any]],
        prediction_loss_only: bool,
        ignore_keys: list[str] | None = None,
    ) -> tuple[torch.Tensor | None, None, None]:
        """Generate G completions for each evaluation prompt, score them, and return the loss.

        The eval batch counts prompts; G is ``num_generations_eval`` (default ``num_generations``);
        advantages are normalised over the batch of every process, metrics logged as in training.
        """
        batch = self.rounds.evaluation_batch(inputs)
        with torch.no_grad():
            if self.uses_reference:
                with reference_forward(self.accelerator.unwrap_model(model), self.ref_model) as ref:
                    ref_logps = self.completion_logps(ref, batch)
                batch["ref_per_token_logps"] = kept(ref_logps)
            loss = self.compute_loss(model, batch)
        return loss.detach(), None, None
