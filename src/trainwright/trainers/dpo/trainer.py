"""``DPOTrainer``: direct preference optimisation as a ``transformers.Trainer`` subclass done right.

What it overrides, and why (public methods only; Trainer's training loop, GA, DDP wrapping,
checkpointing and logging stay Trainer's):

* ``compute_loss``: one forward pass over ``[prompt+chosen; prompt+rejected]`` (for models big enough to
  pay for a second call, the pair's shared prompt runs once and each half continues from its keys/values,
  :func:`shared_prompt_sequence_logps`), sequence log-probs, the reference log-probs, then a pure loss
  function from :mod:`.losses`;
* ``prediction_step``: evaluation batches have no ``labels``, so Trainer would not ask for a loss;
* ``log``: adds the preference metrics (TRL's names) averaged over the logging window;
* ``evaluate``: tokenises a raw dataset handed to it after construction and, with
  ``precompute_ref_log_probs``, computes its reference log-probs while the reference is still known;
* ``get_eval_dataloader``: the same tokenisation for a loader asked for directly;
* ``train`` and the metrics window's part of ``log`` are :class:`~trainwright.trainers.common.skeleton.TrainerSkeleton`'s,
  shared with GRPO (resume from the newest complete checkpoint, TR-DPO reference restored).

Streamed (``IterableDataset``) training and evaluation sets are accepted (:mod:`dpo_stream`).

The reference policy is, in order: ``reference_free`` / reference-free losses (none), precomputed
log-probs (computed once, cached, reference freed), an explicit ``ref_model``, the PEFT policy with
its adapter disabled, or a frozen copy of the policy (works for models built in memory).
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainwright._extras import require_train_extra

require_train_extra("trainwright.DPOTrainer")

import torch
from datasets import Dataset, IterableDataset
from torch import nn
from torch.utils.data import DataLoader
from transformers import PreTrainedTokenizerBase, TrainerCallback

from trainwright.storage.tensor_files import UNREADABLE, load_tensor_file, save_tensor_file, why_unusable
from trainwright.trainers.common.config_checks import finite_knob
from trainwright.trainers.common.reference import is_peft_model, kept, reference_forward
from trainwright.trainers.common.skeleton import TrainerSkeleton
from trainwright.trainers.common.streaming import RepeatedStream, is_streamed
from trainwright.trainers.dpo.config import DPOConfig
from trainwright.trainers.dpo.data import (
    REF_COLUMNS,
    TOKEN_COLUMNS,
    PreferenceCollator,
    prepare_preference_dataset,
)
from trainwright.trainers.dpo.losses import (
    LossParams,
    PairLogps,
    combined_loss,
    needs_reference,
    wpo_pair_weights,
)
from trainwright.trainers.dpo.preference_logps import (
    SequenceLogps,
    packed_sequence_logps,
    sequence_logps,
    shared_prompt_sequence_logps,
)
from trainwright.trainers.dpo.stream import check_stream_settings

logger = logging.getLogger(__name__)

CACHE_FORMAT_VERSION = "1"


def _hash_parameters(named_parameters: list[tuple[str, torch.Tensor]]) -> str:
    digest = hashlib.sha256()
    for name, param in named_parameters:
        digest.update(name.encode())
        digest.update(param.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
    return digest.hexdigest()


def _hash_token_columns(dataset: Dataset) -> str:
    digest = hashlib.sha256()
    for column in TOKEN_COLUMNS:
        for row in dataset[column]:
            digest.update(len(row).to_bytes(4, "little"))
            digest.update(torch.tensor(row, dtype=torch.int64).numpy().tobytes())
    return digest.hexdigest()


def _cache_problem(cached: Any, rows: int) -> str | None:
    """Why a loaded reference log-prob cache cannot serve a dataset of ``rows`` rows, or ``None``.

    The file may be foreign or damaged while holding plain tensors only: it must be a dict whose
    ``chosen`` and ``rejected`` are 1-D float tensors of one finite log-prob per row (a NaN reference
    would train the policy to NaN)."""
    if not isinstance(cached, dict):
        return f"holds a {type(cached).__name__}, not a dict"
    for name in ("chosen", "rejected"):  # what _add_reference_logps saves
        value = cached.get(name)
        if not isinstance(value, torch.Tensor) or not value.is_floating_point() or value.dim() != 1:
            return f"has no 1-D float tensor '{name}'"
        if len(value) != rows:
            return f"has {len(value)} rows, dataset has {rows}"
        if not torch.isfinite(value).all():
            return f"holds NaN or infinite '{name}' log-probs"
    return None


class DPOTrainer(TrainerSkeleton):
    """Train a causal LM on ``prompt`` / ``chosen`` / ``rejected`` pairs (DPO and 16 related losses).

    The arguments are TRL's, in TRL's order (``peft_config`` is keyword-only). ``model`` may be a model
    id / local folder (loaded with ``model_init_kwargs``), a ``PreTrainedModel`` or a ``peft.PeftModel``;
    ``peft_config`` wraps a plain model in a new adapter; ``ref_model`` may be a module or an id. Without
    ``processing_class`` the tokenizer is loaded from the model's folder.
    """

    # transformers 5.x: Trainer.training_step divides the loss by the number of gradient-accumulation
    # steps unless the subclass says it already did. Our compute_loss returns the *mean over the pairs
    # of this micro-batch* and ignores num_items_in_batch (Trainer only counts it from a "labels"
    # column, which preference batches do not have, so it is None). Declaring False makes Trainer do the
    # division: with equal micro-batches, the accumulated gradient is that of the mean over all pairs of
    # the optimizer step, independent of the GA setting. Under DDP each rank's mean is averaged by the
    # gradient all-reduce, which gives the same global mean. (``loss_is_scaled_for_ga = False``: TrainerSkeleton.)
    trl_name = "DPO"
    train_dataset_needs = "a datasets.Dataset (or IterableDataset) with prompt/chosen/rejected columns"
    config_class = DPOConfig

    @classmethod
    def uses_reference_for(cls, args: DPOConfig) -> bool:
        """Whether the objective compares with a reference policy (not for reference-free losses)."""
        return not args.reference_free and needs_reference(args.loss_type)

    @classmethod
    def keeps_reference_module(cls, args: DPOConfig) -> bool:
        """With precomputed reference log-probs no reference module is kept during training."""
        return cls.uses_reference_for(args) and not args.precompute_ref_log_probs

    def __init__(
        self,
        model: str | nn.Module,
        ref_model: str | nn.Module | None = None,
        args: DPOConfig | None = None,
        data_collator: Callable[[list[dict[str, Any]]], dict[str, torch.Tensor]] | None = None,
        train_dataset: Dataset | None = None,
        eval_dataset: Dataset | dict[str, Dataset] | None = None,
        processing_class: PreTrainedTokenizerBase | None = None,
        compute_metrics: Callable[..., dict[str, float]] | None = None,
        callbacks: list[TrainerCallback] | None = None,
        optimizers: tuple[Any, Any] = (None, None),
        *,
        quantization_config: Any = None,
        peft_config: Any | None = None,
    ) -> None:
        if getattr(args, "remove_unused_columns", False):
            raise ValueError(
                "DPOConfig.remove_unused_columns=True would drop the tokenised prompt_ids/chosen_ids/rejected_ids "
                "columns before the collator sees them; leave it False"
            )
        parts = self.prepare(
            args=args,
            model=model,
            train_dataset=train_dataset,
            processing_class=processing_class,
            ref_model=ref_model,
            peft_config=peft_config,
            quantization_config=quantization_config,
        )
        args, model, tokenizer = parts.args, parts.model, parts.processing_class
        check_stream_settings(args, train_dataset, eval_dataset)
        if args.padding_free:
            _warn_if_dense_packed_attention(model)

        train_dataset, eval_dataset = _prepared_datasets(args, tokenizer, train_dataset, eval_dataset)
        if data_collator is None:
            data_collator = _preference_collator(args, self.pad_token_id)

        super().__init__(
            model=model,
            args=args,
            data_collator=data_collator,
            train_dataset=train_dataset,
            eval_dataset=eval_dataset,
            processing_class=tokenizer,
            compute_metrics=compute_metrics,
            callbacks=callbacks,
            optimizers=optimizers,
        )
        base_model = model.get_base_model() if is_peft_model(model) else model
        self._accepts_logits_to_keep = "logits_to_keep" in inspect.signature(base_model.forward).parameters
        self.num_reference_forwards = 0  # precompute batches actually run (0 when the cache was reused)

        self._precompute_reference(parts.given_ref_model)
        del parts, ref_model
        self.finish()

    def _precompute_reference(self, given: nn.Module | None) -> None:
        """With ``precompute_ref_log_probs``: one pass with the reference before training, then no reference is
        kept. Without an explicit ref_model the untrained policy itself is the reference, so no copy is ever
        made. An explicit reference is freed after precompute: evaluate() can then only score new data while
        the policy (or the PEFT base) still is the reference."""
        precompute = self.uses_reference and self.args.precompute_ref_log_probs
        if precompute:
            self.train_dataset = self._add_reference_logps(self.train_dataset, "train", given)
            if self.eval_dataset is not None:
                self.eval_dataset = self._with_reference_logps(self.eval_dataset, "eval", given)
        self._reference_freed = precompute and given is not None

    # ---------------------------------------------------------------------------------------------
    # reference log-probs
    # ---------------------------------------------------------------------------------------------
    def _reference_weights_hash(self, ref_model: nn.Module | None) -> str:
        if ref_model is not None:
            return _hash_parameters(list(ref_model.named_parameters()))
        if is_peft_model(self.model):  # the reference is the base: skip every adapter's parameters
            adapters = tuple(f".{name}." for name in self.model.peft_config)
            return _hash_parameters(
                [(n, p) for n, p in self.model.named_parameters() if not any(a in n for a in adapters)]
            )
        return _hash_parameters(list(self.model.named_parameters()))

    def _add_reference_logps(self, dataset: Dataset, name: str, ref_model: nn.Module | None) -> Dataset:
        """Add ``ref_chosen_logps`` / ``ref_rejected_logps`` columns, from the cache when it has them.

        The cache key is the token content of the dataset, the reference weights and the truncation
        settings (the collator truncates, so they change the log-probs): any change recomputes.
        """
        if set(REF_COLUMNS) <= set(dataset.column_names):
            return dataset
        args = self.args
        key_parts = [
            CACHE_FORMAT_VERSION,
            _hash_token_columns(dataset),
            self._reference_weights_hash(ref_model),
        ]
        key_parts += [str(args.max_length), args.truncation_mode, str(args.ld_alpha)]
        key = hashlib.sha256("|".join(key_parts).encode()).hexdigest()[:32]
        cache_dir = Path(args.precompute_cache_dir or os.path.join(args.output_dir, "ref_logps_cache"))
        path = cache_dir / f"{name}-{key}.pt"
        if not path.exists():
            chosen, rejected = self._compute_reference_logps(dataset, ref_model)
            if self.accelerator.is_main_process:
                cache_dir.mkdir(parents=True, exist_ok=True)
                # atomic: a crashed run never leaves a half-written cache
                save_tensor_file({"chosen": chosen, "rejected": rejected}, path)
            self.accelerator.wait_for_everyone()
        try:
            cached = load_tensor_file(path)  # tensors only: a cache file planted in the folder runs no code
        except UNREADABLE as error:
            reason = why_unusable(error, path.stat().st_size, path)
            raise RuntimeError(f"reference cache {path} {reason}; delete it to recompute") from None
        problem = _cache_problem(cached, len(dataset))
        if problem is not None:
            raise RuntimeError(f"reference cache {path} {problem}; delete it to recompute")
        dataset = dataset.add_column(REF_COLUMNS[0], cached["chosen"].tolist())
        return dataset.add_column(REF_COLUMNS[1], cached["rejected"].tolist())

    def _compute_reference_logps(
        self, dataset: Dataset, ref_model: nn.Module | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        batch_size = self.args.precompute_ref_batch_size or self.args.per_device_eval_batch_size
        loader = DataLoader(dataset, batch_size=batch_size, collate_fn=self.data_collator, shuffle=False)
        # Each rank scores its share; gather_for_metrics restores dataset order and drops the padding
        # accelerate adds to even out the last batch.
        loader = self.accelerator.prepare(loader)
        if ref_model is not None:
            reference: nn.Module | None = ref_model.to(self.args.device)
        elif is_peft_model(self.model):
            reference = None  # reference_forward disables the adapter
        else:
            reference = self.model  # before any update, the policy is the reference: no copy needed
        was_training = self.model.training
        self.model.eval()
        chosen, rejected = [], []
        try:
            with reference_forward(self.model, reference) as ref:
                for batch in loader:
                    logps = self._forward(ref, batch).logps
                    half = logps.shape[0] // 2
                    c, r = self.accelerator.gather_for_metrics(
                        (logps[:half].contiguous(), logps[half:].contiguous())
                    )
                    chosen.append(c.float().cpu())
                    rejected.append(r.float().cpu())
                    self.num_reference_forwards += 1
        finally:
            self.model.train(was_training)
        return torch.cat(chosen), torch.cat(rejected)

    def _reference_logps(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor | None:
        """(2B,) reference log-probs of the batch rows, or None when training reference-free."""
        if not self.uses_reference:
            return None
        if REF_COLUMNS[0] in inputs:
            return torch.cat([inputs[REF_COLUMNS[0]], inputs[REF_COLUMNS[1]]]).to(self.args.device)
        if self.args.precompute_ref_log_probs:
            raise ValueError(
                "this batch has no precomputed reference log-probs and the reference model was freed after "
                "precompute; pass the dataset as eval_dataset when building the trainer, or pass ref_model"
            )
        with reference_forward(self.model, self.ref_model) as ref:
            logps = self._forward(ref, inputs).logps
        return kept(logps)

    def _forward(
        self,
        model: nn.Module,
        inputs: dict[str, torch.Tensor],
        with_sum_sq: bool = False,
        aux_loss: bool = False,
    ) -> SequenceLogps:
        return sequence_logps(
            model,
            inputs,
            chunk_size=self.args.logps_chunk_size,
            logits_to_keep=self._accepts_logits_to_keep,
            with_sum_sq=with_sum_sq,
            aux_loss=aux_loss,
            **self._prompt_sharing(model),
        )

    def _prompt_sharing(self, model: nn.Module) -> dict[str, Any]:
        """:func:`sequence_logps` arguments of the shared-prompt forward for ``model`` (none: one plain
        forward); see :class:`~trainwright.trainers.common.logprobs.PrefixSharing`."""
        sharing = self.prefix_sharing
        argument = sharing.argument(model)
        if argument is None:
            return {}
        cost = sharing.cost(model)  # one extra call; splitting the halves adds a call with an LM head
        return {
            "cache_argument": argument,
            "min_shared_tokens": cost.per_call,
            "min_split_tokens": cost.per_call + cost.per_head,
        }

    # ---------------------------------------------------------------------------------------------
    # Trainer hooks (public methods only)
    # ---------------------------------------------------------------------------------------------
    def compute_loss(
        self,
        model: nn.Module,
        inputs: dict[str, torch.Tensor],
        return_outputs: bool = False,
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Preference loss of one micro-batch: mean over its pairs (see ``loss_is_scaled_for_ga``), plus the
        weighted MoE load-balancing loss when ``aux_loss_enabled``."""
        if self.args.ld_alpha is not None and "logp_weights" not in inputs:
            raise ValueError(
                "ld_alpha (LD-DPO) is set but the batch has no 'logp_weights': a custom data_collator must add "
                "them (see trainwright.trainers.dpo.data.ld_token_weights), or use the default collator"
            )
        use_weighting, aux = self.args.use_weighting, self.aux_loss_enabled
        # one pass over [chosen; rejected]
        policy = self._forward(model, inputs, with_sum_sq=use_weighting, aux_loss=aux)
        ref = self._reference_logps(inputs)
        half = policy.logps.shape[0] // 2
        pairs = PairLogps(
            chosen=policy.logps[:half],
            rejected=policy.logps[half:],
            ref_chosen=None if ref is None else ref[:half],
            ref_rejected=None if ref is None else ref[half:],
            chosen_lengths=policy.lengths[:half],
            rejected_lengths=policy.lengths[half:],
            chosen_unweighted=None if policy.unweighted_logps is None else policy.unweighted_logps[:half],
        )
        weights = wpo_pair_weights(policy.logps, policy.log_sum_sq, policy.lengths) if use_weighting else None
        params = self.loss_params()
        loss = combined_loss(pairs, params, self.args.loss_type, self.args.loss_weights, weights)
        mode = "train" if model.training else "eval"
        if policy.aux_loss is not None:
            loss = loss + self.router_aux_loss_coef * policy.aux_loss
            aux_mean = self.accelerator.gather_for_metrics(policy.aux_loss.detach().float().reshape(1)).mean()
            self.metrics.add(mode, "aux_loss", aux_mean.item())
        rewards = self._record_metrics(mode, pairs, policy, inputs, params.beta)
        return (loss, rewards) if return_outputs else loss

    def loss_params(self) -> LossParams:
        """The loss's numeric knobs as they are now, each checked where the loss reads it: a schedule may
        anneal ``beta`` (``ParameterScheduleCallback``), and a NaN set after the config was built must
        be refused by name, not train every weight into NaN while the loss logs 0.0."""
        args = self.args
        return LossParams(
            beta=finite_knob(args, "beta", minimum=0.0, strict=True),
            label_smoothing=finite_knob(args, "label_smoothing", minimum=0.0),
            discopop_tau=finite_knob(args, "discopop_tau"),
            simpo_gamma=finite_knob(args, "simpo_gamma"),
            f_divergence_type=args.f_divergence_type,
            f_alpha_divergence_coef=finite_knob(args, "f_alpha_divergence_coef"),
        )

    def _record_metrics(
        self, mode: str, pairs: PairLogps, policy: SequenceLogps, inputs: dict[str, torch.Tensor], beta: float
    ) -> dict[str, torch.Tensor]:
        """Gather this micro-batch's statistics from all processes into the logging window."""
        chosen_rewards = beta * pairs.chosen_logratios.detach()
        rejected_rewards = beta * pairs.rejected_logratios.detach()
        per_pair = torch.stack(
            [
                chosen_rewards,
                rejected_rewards,
                (chosen_rewards > rejected_rewards).to(chosen_rewards.dtype),
                chosen_rewards - rejected_rewards,
                pairs.chosen.detach(),
                pairs.rejected.detach(),
            ],
            dim=1,
        ).float()
        half = pairs.chosen.shape[0]
        token_stats = torch.stack(
            [
                policy.logits_sum[:half].sum(),
                policy.lengths[:half].sum(),
                policy.logits_sum[half:].sum(),
                policy.lengths[half:].sum(),
                _attended_tokens(inputs),
                policy.entropy_sum.sum(),
                policy.top1_sum[:half].sum(),
            ]
        ).float()
        per_pair = self.accelerator.gather_for_metrics(per_pair)
        token_stats = self.accelerator.gather_for_metrics(token_stats.unsqueeze(0)).sum(dim=0)
        n = per_pair.shape[0]
        means = per_pair.mean(dim=0).tolist()
        names = (
            "rewards/chosen",
            "rewards/rejected",
            "rewards/accuracies",
            "rewards/margins",
            "logps/chosen",
            "logps/rejected",
        )
        for name, value in zip(names, means):
            self.metrics.add(mode, name, value, weight=n)
        logit_c, tok_c, logit_r, tok_r, attended, entropy, top1_c = token_stats.tolist()
        if tok_c > 0:
            self.metrics.add(mode, "logits/chosen", logit_c / tok_c, weight=tok_c)
            self.metrics.add(mode, "mean_token_accuracy", top1_c / tok_c, weight=tok_c)
        if tok_r > 0:
            self.metrics.add(mode, "logits/rejected", logit_r / tok_r, weight=tok_r)
        if tok_c + tok_r > 0:
            self.metrics.add(mode, "entropy", entropy / (tok_c + tok_r), weight=tok_c + tok_r)
        if mode == "train" and self.args.include_num_input_tokens_seen == "no":
            # Kept in TrainerState (saved in checkpoints, so resuming continues the count). When the user
            # asks Trainer to count input tokens itself, Trainer owns the field and we only report it.
            self.state.num_input_tokens_seen += int(attended)
        return {"rewards_chosen": chosen_rewards, "rewards_rejected": rejected_rewards}

    def prediction_step(
        self,
        model: nn.Module,
        inputs: dict[str, torch.Tensor],
        prediction_loss_only: bool,
        ignore_keys: list[str] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """Evaluation: the preference loss (batches have no ``labels``, so Trainer would skip it)."""
        # The eval dataloader is accelerate-prepared, so batches are normally on the device already; this
        # covers a user-supplied loader without reaching for the private Trainer._prepare_inputs.
        device = self.args.device
        inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        with torch.no_grad(), self.compute_loss_context_manager():
            loss, rewards = self.compute_loss(model, inputs, return_outputs=True)
        if prediction_loss_only or self.compute_metrics is None:
            return loss.detach(), None, None
        # For a user's compute_metrics: per-pair rewards as "logits" (column 0 chosen, 1 rejected).
        logits = torch.stack([rewards["rewards_chosen"], rewards["rewards_rejected"]], dim=1)
        return loss.detach(), logits, torch.zeros(logits.shape[0], dtype=torch.long, device=logits.device)

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """Add ``num_tokens`` (the training tokens seen so far, in evaluation too) beside the window-averaged
        preference metrics that ``TrainerSkeleton.log`` adds (``eval_``-prefixed in evaluation). As TRL, a log
        with an empty window (the run summary right after a logging step) gets neither."""
        evaluating = any(key.startswith("eval_") for key in logs)
        if self.metrics.has("eval" if evaluating else "train", "rewards/chosen"):
            logs["eval_num_tokens" if evaluating else "num_tokens"] = float(self.state.num_input_tokens_seen)
        super().log(logs, start_time)

    def evaluate(
        self,
        eval_dataset: Dataset | IterableDataset | dict[str, Any] | None = None,
        ignore_keys: list[str] | None = None,
        metric_key_prefix: str = "eval",
    ) -> dict[str, float]:
        """``Trainer.evaluate``, also for a raw dataset (or dict of them) given here: tokenised like the
        construction-time ones and, with ``precompute_ref_log_probs``, given reference log-probs, which
        needs the reference still at hand (see :meth:`_check_reference_available`)."""
        if eval_dataset is not None and not isinstance(eval_dataset, str):
            check_stream_settings(self.args, None, eval_dataset)
            if (
                self.uses_reference
                and self.args.precompute_ref_log_probs
                and not _has_reference_logps(eval_dataset)
            ):
                self._check_reference_available()
            eval_dataset = _prepared(eval_dataset, self.processing_class, self.args, metric_key_prefix)
            if self.uses_reference and self.args.precompute_ref_log_probs:
                eval_dataset = self._with_reference_logps(eval_dataset, metric_key_prefix)
            if isinstance(eval_dataset, dict):
                # one Trainer.evaluate per split, each already prepared (Trainer would call this override again)
                metrics: dict[str, float] = {}
                for name, split in eval_dataset.items():
                    metrics.update(super().evaluate(split, ignore_keys, f"{metric_key_prefix}_{name}"))
                return metrics
        return super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)

    def _check_reference_available(self) -> None:
        """Raise unless reference log-probs can still be computed for new data after precompute: the
        reference is the PEFT base (adapter off), or the policy before its first update."""
        if is_peft_model(self.model):
            return
        if self._reference_freed or self.state.global_step > 0:
            raise ValueError(
                "Cannot compute reference log-probs for a dataset passed to `evaluate()`: with "
                "precompute_ref_log_probs=True the reference model is not kept in memory, and "
                + (
                    "the ref_model given was freed after its precompute"
                    if self._reference_freed
                    else "after training has started the policy no longer is the reference"
                )
                + ". Provide this dataset as eval_dataset when building the trainer, or set "
                "precompute_ref_log_probs=False"
            )

    def _with_reference_logps(self, dataset: Any, name: str, ref_model: nn.Module | None = None) -> Any:
        """``dataset`` (or each split of a dict) with its reference log-prob columns."""
        if isinstance(dataset, dict):
            return {
                key: self._add_reference_logps(split, f"{name}-{key}", ref_model)
                for key, split in dataset.items()
            }
        return self._add_reference_logps(dataset, name, ref_model)

    def get_eval_dataloader(self, eval_dataset: str | Dataset | IterableDataset | None = None) -> DataLoader:
        """Tokenise a raw preference dataset handed here directly (``evaluate`` already did); read a stream
        with ``dispatch_batches=False`` (:func:`~trainwright.trainers.dpo.stream.check_stream_settings`)."""
        if isinstance(eval_dataset, (Dataset, IterableDataset)):
            eval_dataset = _prepared(eval_dataset, self.processing_class, self.args, "eval")
        resolved = self.eval_dataset[eval_dataset] if isinstance(eval_dataset, str) else eval_dataset
        if is_streamed(resolved if resolved is not None else self.eval_dataset):
            self.accelerator.dataloader_config.dispatch_batches = False
        return super().get_eval_dataloader(eval_dataset)


def _preference_collator(args: DPOConfig, pad_token_id: int) -> PreferenceCollator:
    """The default collator: pads (or packs, ``padding_free``) pairs and truncates them as the config says."""
    return PreferenceCollator(
        pad_token_id,
        args.max_length,
        args.truncation_mode,
        padding_free=args.padding_free,
        ld_alpha=args.ld_alpha,
    )


def _prepared_datasets(
    args: DPOConfig, tokenizer: Any, train_dataset: Any, eval_dataset: Any
) -> tuple[Any, Any]:
    """Both datasets tokenised (the main process first: it writes the datasets cache, the others then read
    it); a streamed train set read through :class:`RepeatedStream`."""
    with args.main_process_first(desc="tokenising the preference data"):
        train_dataset = _prepared(train_dataset, tokenizer, args, "train")
        if eval_dataset is not None:
            eval_dataset = _prepared(eval_dataset, tokenizer, args, "eval")
    if is_streamed(train_dataset):
        train_dataset = RepeatedStream(train_dataset)
    return train_dataset, eval_dataset


def _prepared(dataset: Any, tokenizer: PreTrainedTokenizerBase, args: DPOConfig, name: str) -> Any:
    """A dataset (or each split of a dict of them) validated and tokenised; tokenised ones pass unchanged."""
    if isinstance(dataset, dict):
        return {key: _prepared(split, tokenizer, args, f"{name}[{key}]") for key, split in dataset.items()}
    return prepare_preference_dataset(
        dataset,
        tokenizer,
        max_length=args.max_length,
        truncation_mode=args.truncation_mode,
        num_proc=args.dataset_num_proc,
        name=name,
    )


def _has_reference_logps(dataset: Any) -> bool:
    """Whether a map-style dataset (or every split of a dict) already carries reference log-prob columns."""
    if isinstance(dataset, dict):
        return all(_has_reference_logps(split) for split in dataset.values())
    return isinstance(dataset, Dataset) and set(REF_COLUMNS) <= set(dataset.column_names)


def _attended_tokens(inputs: dict[str, torch.Tensor]) -> torch.Tensor:
    """Real (non-pad) tokens of a batch, padded or packed."""
    if "attention_mask" in inputs:
        return inputs["attention_mask"].sum()
    return inputs["sequence_lengths"].sum()


def _warn_if_dense_packed_attention(model: nn.Module) -> None:
    """Packing is exact with every attention implementation, but only flash-attention kernels use the
    sequence boundaries directly; eager / sdpa attend through a dense ``L × L`` block-diagonal mask,
    which for large batches costs more memory than the padding it removes."""
    implementation = str(getattr(getattr(model, "config", None), "_attn_implementation", "") or "")
    if "flash" not in implementation:
        logger.warning(
            "padding_free=True with attn_implementation=%r: results are exact, but the packed batch is attended "
            "through a dense L x L mask; load the model with a flash-attention implementation (e.g. "
            "attn_implementation='flash_attention_2') for the memory saving",
            implementation,
        )


__all__ = [
    "DPOConfig",
    "DPOTrainer",
    "packed_sequence_logps",
    "sequence_logps",
    "shared_prompt_sequence_logps",
]
