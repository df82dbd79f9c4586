"""``GRPOTrainer``: Group Relative Policy Optimisation on ``transformers.Trainer``, public overrides only.

GRPO (Shao et al. 2024, arXiv:2402.03300) samples G completions per prompt, scores them with reward
functions, and pushes up the completions that beat their group's mean reward (formulas in
:mod:`trainwright.trainers.grpo_loss`).

How it fits the Trainer without private overrides (TRL overrides ``_prepare_inputs`` and
``_get_train_sampler``):

* ``get_train_dataloader`` returns a loader over a
  :class:`~trainwright.trainers.grpo_sampler.GroupedRoundSampler`.
  Each batch is only *indices* plus the round and micro-step (slot) it belongs to, and each round's
  batch is repeated once per micro-step, so the Trainer's step, epoch and resume bookkeeping is right.
* ``training_step`` turns that index batch into a real micro-batch: at slot 0 it runs one generation
  round (:meth:`GRPOTrainer.generate_round`: one ``generate`` call covering ``steps_per_generation``
  micro-batches, then rewards, advantages, and old/reference log-probs when needed) into a
  :class:`~trainwright.trainers.grpo_buffer.RoundBuffer`;
  at every slot it hands ``super().training_step`` the buffered micro-batch ``slot % steps_per_generation``.
* ``compute_loss`` computes the policy log-probs (each distinct prompt of a micro-batch run once for its
  completions when that pays off, :meth:`GRPOTrainer.completion_logps`) and the loss; ``log`` adds the
  windowed metrics.
* ``train`` loads the buffer saved in the checkpoint (a callback's ``on_save`` writes it), so a resume
  in the middle of a round continues with the same completions; likewise the TR-DPO reference.

The methods below are in the order a round happens.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from trainwright._extras import require_train_extra

require_train_extra("trainwright.trainers.grpo")

import torch  # noqa: E402
from accelerate.utils import gather_object  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402
from transformers import Trainer  # noqa: E402

from trainwright.trainers.config_checks import finite_knob  # noqa: E402
from trainwright.trainers.construction import (  # noqa: E402
    attach_owned_callbacks,
    load_pretrained,
    prepare_parts,
    resolve_resume,
)
from trainwright.trainers.generation import (  # noqa: E402
    GenerationBackend,
    SamplingSettings,
    TransformersGenerateBackend,
)
from trainwright.trainers.grpo_buffer import RoundBuffer, SaveRoundBufferCallback  # noqa: E402
from trainwright.trainers.grpo_config import GRPOConfig, check_batching  # noqa: E402
from trainwright.trainers.grpo_loss import (  # noqa: E402
    AdvantageResult,
    combine_rewards,
    compute_advantages,
    grpo_loss,
)
from trainwright.trainers.grpo_rewards import RewardFunc, RewardLog, RewardScorer  # noqa: E402
from trainwright.trainers.grpo_round import (  # noqa: E402
    RoundSample,
    check_prompt_dataset,
    completion_rows,
    is_conversational,
    pad_round,
    split_round,
)
from trainwright.trainers.grpo_sampler import (  # noqa: E402
    GroupedRoundSampler,
    RoundItemDataset,
    collate_round_items,
)
from trainwright.trainers.learning_signal import NoSignalRounds  # noqa: E402
from trainwright.trainers.logprobs import (  # noqa: E402
    SharedPrefix,
    distinct_rows,
    prefix_sharing_for,
    selective_log_softmax,
    shared_prefix_logits,
)
from trainwright.trainers.metrics import MetricsWindow  # noqa: E402
from trainwright.trainers.reference import reference_forward  # noqa: E402


class NoRewardSignalWarning(UserWarning):
    """A generation round in which some (or all) completions got no reward from any reward function."""


def _identity_collator(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return rows


class GRPOTrainer(Trainer):
    """GRPO with generation batched across ``steps_per_generation`` micro-steps (see module docstring).

    The arguments are TRL's, in TRL's order; ``peft_config``, ``ref_model`` (an explicit reference for
    ``beta > 0``; default: a frozen copy of the policy) and ``generation_backend`` are keyword-only.
    ``model`` and reward models may be ids / local folders (loaded with ``model_init_kwargs``); without
    ``processing_class`` the tokenizer is loaded from the model's folder.
    """

    # compute_loss returns the micro-batch loss; Trainer.training_step divides it by gradient accumulation.
    loss_is_scaled_for_ga = False

    def __init__(
        self,
        model: nn.Module | str,
        reward_funcs: RewardFunc | Sequence[RewardFunc],
        args: GRPOConfig | None = None,
        train_dataset: Any = None,
        eval_dataset: Any = None,
        processing_class: Any = None,
        reward_processing_classes: Any = None,
        callbacks: list[Any] | None = None,
        optimizers: tuple[Any, Any] = (None, None),
        *,
        peft_config: Any = None,
        ref_model: nn.Module | str | None = None,
        generation_backend: GenerationBackend | None = None,
    ) -> None:
        parts = prepare_parts(
            who="GRPOTrainer",
            args=args,
            config_class=GRPOConfig,
            default_output_dir="grpo-output",
            model=model,
            processing_class=processing_class,
            ref_model=ref_model,
            needs_reference=lambda config: config.beta != 0.0,
            peft_config=peft_config,
        )
        args, model, tokenizer = parts.args, parts.model, parts.processing_class
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        check_prompt_dataset(train_dataset, "train_dataset")
        check_prompt_dataset(eval_dataset, "eval_dataset")
        self.scorer = RewardScorer(
            reward_funcs,
            args.reward_weights,
            reward_processing_classes,
            load=lambda model_id, auto_class: load_pretrained(model_id, auto_class, args, num_labels=1),
            chat_template_kwargs=args.chat_template_kwargs,
        )
        self.ref_model = parts.ref_model
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
        self.generation_backend = generation_backend or self._default_backend(model, tokenizer)
        self.eos_token_ids = (
            set(self.generation_backend.eos_token_ids)
            if hasattr(self.generation_backend, "eos_token_ids")
            else {tokenizer.eos_token_id}
        )
        self.metrics = MetricsWindow()
        self.no_signal_rounds = NoSignalRounds()  # logs rounds whose groups all agree (no gradient)
        self.round_buffer = RoundBuffer()
        self.round_sampler: GroupedRoundSampler | None = None
        self.add_callback(SaveRoundBufferCallback(lambda: self.round_buffer, self.args.process_index))
        self.completions_logger = attach_owned_callbacks(self, self.ref_model)

    def _default_backend(self, model: nn.Module, tokenizer: Any) -> TransformersGenerateBackend:
        """``model.generate`` with the config's sampling knobs; a completion ends at any EOS the model declares."""
        args = self.args
        eos_ids = [tokenizer.eos_token_id]
        config_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos_ids += (
            config_eos if isinstance(config_eos, list) else [config_eos] if config_eos is not None else []
        )
        extra: dict[str, Any] = {}
        if args.cache_implementation is not None:
            extra["cache_implementation"] = args.cache_implementation
        extra.update(args.generation_kwargs or {})
        return TransformersGenerateBackend(
            SamplingSettings(
                max_completion_length=args.max_completion_length,
                temperature=args.temperature,
                top_p=args.top_p,
                top_k=args.top_k,
                min_p=args.min_p,
                repetition_penalty=args.repetition_penalty,
                extra=extra,
            ),
            pad_token_id=tokenizer.pad_token_id,
            eos_token_ids=[i for i in eos_ids if i is not None],
        )

    # ------------------------------------------------------------------ data
    def get_train_dataloader(self) -> DataLoader:
        """A loader of index batches, one per micro-step; see :mod:`trainwright.trainers.grpo_sampler`."""
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
        self.round_sampler = GroupedRoundSampler(
            len(self.train_dataset),
            num_generations=args.num_generations,
            prompts_per_round=per_device_round * processes // args.num_generations,
            micro_steps_per_round=args.steps_per_generation * args.num_iterations,
            shuffle=args.shuffle_dataset,
            seed=args.seed,
        )
        loader = DataLoader(
            RoundItemDataset(len(self.round_sampler)),
            sampler=self.round_sampler,
            batch_size=per_device_round,
            collate_fn=collate_round_items,
            num_workers=0,
        )
        return self.accelerator.prepare(loader)

    # ------------------------------------------------------------------ training
    def train(self, resume_from_checkpoint: str | bool | None = None, **kwargs: Any) -> Any:
        """``Trainer.train`` that also restores the generation buffer and the TR-DPO reference saved in the
        checkpoint (the Trainer restores the rest)."""
        checkpoint = resolve_resume(self, resume_from_checkpoint)
        if isinstance(checkpoint, str):
            restored = RoundBuffer.load(checkpoint, self.args.process_index)
            if restored is not None:
                self.round_buffer = restored
        return super().train(resume_from_checkpoint=checkpoint, **kwargs)

    def training_step(
        self, model: nn.Module, inputs: dict[str, Any], num_items_in_batch: torch.Tensor | int | None = None
    ) -> torch.Tensor:
        """Swap the index batch for its buffered micro-batch (generating at the round's first slot)."""
        key = (int(inputs["epoch"]), int(inputs["round"]))
        slot = int(inputs["slot"])
        if not self.round_buffer.matches(key):
            if slot != 0:
                warnings.warn(
                    f"no buffered generation round for epoch {key[0]} round {key[1]} at micro-step {slot} "
                    f"(resumed from a checkpoint without grpo_buffer_rank*.pt?): regenerating this round",
                    stacklevel=2,
                )
            self.round_buffer = RoundBuffer(key, self.generate_round(key, inputs["prompt_index"].tolist()))
        micro_batch = self.round_buffer.micro_batches[slot % self.args.steps_per_generation]
        return super().training_step(model, micro_batch, num_items_in_batch)

    # ------------------------------------------------------------------ one generation round, in order
    def generate_round(self, key: tuple[int, int], prompt_indices: list[int]) -> list[dict[str, Any]]:
        """One generation round: generate, score, normalise, and split into micro-batches."""
        args, accelerator, device = self.args, self.accelerator, self.args.device
        rows = [self.train_dataset[i] for i in prompt_indices]
        sample = self.sample_completions(rows, seed_key=key)
        if args.dynamic_sampling:
            self.refill_zero_variance_groups(sample, key)

        # rewards from every process, so that groups split across processes and batch-level scaling
        # are normalised on the whole round
        all_rewards = accelerator.gather(sample.rewards_per_func.to(device)).cpu()
        self.check_reward_signal(all_rewards, sample, key)
        combined = combine_rewards(all_rewards, self.scorer.weights)
        adv = compute_advantages(combined, args.num_generations, args.scale_rewards)
        self.no_signal_rounds.observe(adv.rewards, adv.zero_std, key, log=accelerator.is_main_process)
        start = accelerator.process_index * len(sample)
        advantages = adv.advantages[start : start + len(sample)]

        batch = pad_round(
            sample.prompt_ids,
            sample.completion_ids,
            pad_token_id=self.processing_class.pad_token_id,
            eos_token_ids=self.eos_token_ids,
            mask_truncated_completions=args.mask_truncated_completions,
        )
        batch["advantages"] = advantages
        active_tokens = accelerator.gather(batch["completion_mask"].sum().reshape(1).to(device)).sum().float()
        tokens_per_micro_step = active_tokens / (accelerator.num_processes * args.steps_per_generation)

        self.log_round_metrics(all_rewards, combined, adv, batch, sample.reward_log)
        micro_batches = split_round(
            batch, args.per_device_train_batch_size, args.steps_per_generation, tokens_per_micro_step.cpu()
        )
        if self.needs_old_logps() or args.beta != 0.0:
            self.add_reference_and_old_logps(micro_batches)
        if self.completions_logger is not None:
            self.completions_logger.add_rows(completion_rows(sample, self.scorer.names, advantages))
        return micro_batches

    def sample_completions(
        self, rows: list[dict[str, Any]], seed_key: tuple[int, ...] | None = None
    ) -> RoundSample:
        """Generate one completion per row (rows already hold G copies of each prompt) and score it."""
        prompts = [row["prompt"] for row in rows]
        prompt_ids = self.tokenize_prompts(prompts)
        unwrapped = self.accelerator.unwrap_model(self.model)
        with self.generation_rng(seed_key), self._generation_grad_mode():
            completion_ids = self.generation_backend.generate(unwrapped, prompt_ids)
        texts = self.processing_class.batch_decode(completion_ids, skip_special_tokens=True)
        completions: list[Any] = [
            [{"role": "assistant", "content": text}] if is_conversational(prompt) else text
            for prompt, text in zip(prompts, texts)
        ]
        columns = {key: [row[key] for row in rows] for key in rows[0] if key != "prompt"}
        rewards, reward_log = self.scorer.score(
            prompts, completions, completion_ids, columns, trainer_state=self.state
        )
        return RoundSample(rows, prompts, prompt_ids, completion_ids, completions, rewards, reward_log)

    def _generation_grad_mode(self) -> contextlib.AbstractContextManager[Any]:
        """``torch.inference_mode`` around the built-in backend (its ``generate`` is about 7 % faster on CPU
        than under ``no_grad`` alone: no version counters or view tracking); a no-op otherwise.

        Only there, because that backend returns plain lists, so no inference tensor leaves the call; a
        custom backend may keep tensors (a weight copy, a cache) that later meet autograd. Not under FSDP
        / DeepSpeed, whose gather of the sharded parameters for generation writes them back afterwards.
        """
        sharded = getattr(self, "is_fsdp_enabled", False) or getattr(self, "is_deepspeed_enabled", False)
        if sharded or type(self.generation_backend) is not TransformersGenerateBackend:
            return contextlib.nullcontext()
        return torch.inference_mode()

    def tokenize_prompts(self, prompts: list[Any]) -> list[list[int]]:
        """Token ids of each prompt: the chat template (with the generation prompt) for conversations."""
        tokenizer = self.processing_class
        # Plain-text prompts in one batched call, each distinct prompt once (a round repeats every prompt G
        # times); conversations go through the chat template one by one below.
        texts = list(dict.fromkeys(p for p in prompts if isinstance(p, str)))
        encoded_texts = dict(zip(texts, tokenizer(texts)["input_ids"])) if texts else {}
        ids = []
        for prompt in prompts:
            if isinstance(prompt, str):
                ids.append(list(encoded_texts[prompt]))
            elif is_conversational(prompt):
                encoded = tokenizer.apply_chat_template(
                    prompt,
                    add_generation_prompt=True,
                    tokenize=True,
                    **(self.args.chat_template_kwargs or {}),
                )
                if isinstance(encoded, dict) or hasattr(encoded, "keys"):
                    encoded = encoded["input_ids"]
                ids.append(list(encoded))
            else:
                raise ValueError(
                    f"a prompt must be a string or a list of chat messages, "
                    f"got {type(prompt).__name__}: {prompt!r:.80}"
                )
        return ids

    @contextlib.contextmanager
    def generation_rng(self, seed_key: tuple[int, ...] | None) -> Iterator[None]:
        """Sample from an RNG seeded by ``(seed, process, *seed_key)``, leaving the global RNG untouched.

        Why: every process starts from the same ``args.seed``, so sampling from the global RNG would give
        all processes the *same* completions for a group split across them. A per-(process, round)
        seed makes them differ, and makes a round's completions independent of everything that ran
        before it, which is what lets a resumed run regenerate nothing and still match exactly.
        """
        if seed_key is None:
            yield
            return
        devices = [self.args.device] if self.args.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            seed = hash((self.args.seed, self.accelerator.process_index, *seed_key)) % (2**63)
            torch.manual_seed(seed)
            yield

    def refill_zero_variance_groups(self, sample: RoundSample, key: tuple[int, int]) -> None:
        """DAPO dynamic sampling (Yu et al. 2025, arXiv:2503.14476): groups whose rewards all agree have
        zero advantage, hence no gradient; replace them (in place) with groups of the next prompts.

        Each process refills its own groups (its share holds whole groups), with up to
        ``max_dynamic_sampling_rounds`` extra ``generate`` calls; groups still flat after that are kept.
        """
        g = self.args.num_generations
        refilled = 0
        for _ in range(self.args.max_dynamic_sampling_rounds):
            rewards = combine_rewards(sample.rewards_per_func, self.scorer.weights).view(-1, g)
            flat = [i for i, group in enumerate(rewards) if _is_flat(group)]
            if not flat:
                break
            world, rank = self.accelerator.num_processes, self.accelerator.process_index
            positions = [(refilled + j) * world + rank for j in range(len(flat))]
            refilled += len(flat)
            indices = self.round_sampler.refill_prompts(key[0], key[1], positions)
            new_rows = [self.train_dataset[i] for i in indices for _ in range(g)]
            sample.replace_groups(flat, self.sample_completions(new_rows, seed_key=(*key, refilled)), g)
        self.metrics.add("train", "dynamic_sampling/refilled_groups", float(refilled))

    def check_reward_signal(
        self, all_rewards: torch.Tensor, sample: RoundSample, key: tuple[int, int]
    ) -> None:
        """Log ``frac_reward_unscorable`` and warn once per round when completions got no reward at all.

        A completion for which every reward function returned None (or NaN) is *unscorable*: its
        advantage is 0 and it teaches nothing; a round of only those trains nothing. This is usually a
        wrong column name or an answer format the reward functions do not parse (TRL warns about it too).
        """
        unscorable = torch.isnan(all_rewards).all(dim=1)
        count, total = int(unscorable.sum()), unscorable.numel()
        self.metrics.add("train", "frac_reward_unscorable", count / total)
        if count == 0 or not self.accelerator.is_main_process:
            return
        local = torch.isnan(sample.rewards_per_func).all(dim=1).nonzero()
        example = ""
        if local.numel():
            i = int(local[0])
            example = (
                f" First one: prompt={sample.prompts[i]!r:.80}, completion={sample.completions[i]!r:.80}."
            )
        what = (
            f"no usable reward signal: every reward function returned None (or NaN) for all {total} completions, "
            f"so every advantage is 0 and the round trains nothing"
            if count == total
            else f"{count} of {total} completions got no reward (every reward function returned None or NaN); "
            f"their advantage is 0"
        )
        warnings.warn(
            f"GRPO round {key[1]} of epoch {key[0]}: {what}.{example} Check the reward functions' arguments "
            f"(dataset column names) and what they parse; 'frac_reward_unscorable' in the logs counts these.",
            NoRewardSignalWarning,
            stacklevel=3,
        )

    def needs_old_logps(self) -> bool:
        """Whether π_old can differ from π_θ when a micro-batch is used.

        It cannot when every round lies within one optimiser step (``steps_per_generation × μ`` divides
        gradient accumulation): then the ratio is exactly 1 and ``per_token_logps.detach()`` serves.
        """
        per_round = self.args.steps_per_generation * self.args.num_iterations
        return self.args.gradient_accumulation_steps % per_round != 0

    def add_reference_and_old_logps(self, micro_batches: list[dict[str, Any]]) -> None:
        """π_old (when the ratio can differ from 1) and π_ref (when β ≠ 0), without gradients."""
        model = self.model
        for part in micro_batches:
            on_device = {k: v.to(self.args.device) for k, v in part.items()}
            if self.needs_old_logps():
                with torch.no_grad():
                    part["old_per_token_logps"] = self.completion_logps(model, on_device).cpu()
            if self.args.beta != 0.0:
                with reference_forward(self.accelerator.unwrap_model(model), self.ref_model) as ref:
                    part["ref_per_token_logps"] = self.completion_logps(ref, on_device).cpu()

    def log_round_metrics(
        self,
        all_rewards: torch.Tensor,
        combined: torch.Tensor,
        adv: AdvantageResult,
        batch: dict[str, torch.Tensor],
        reward_log: RewardLog,
    ) -> None:
        """TRL's metric names, from the gathered round (NaN values, e.g. an all-None reward, are skipped)."""
        gather = self.accelerator.gather
        device = self.args.device
        lengths = gather(batch["completion_lengths"].float().to(device)).cpu()
        truncated = gather(batch["truncated"].float().to(device)).cpu()
        add = lambda name, value: self._add_metric("train", name, value)  # noqa: E731
        add("reward", torch.nanmean(combined))
        add("reward_std", torch.nan_to_num(adv.group_std, nan=0.0).mean())
        add("frac_reward_zero_std", adv.zero_std.float().mean())
        add("completions/mean_length", lengths.mean())
        add("completions/min_length", lengths.min())
        add("completions/max_length", lengths.max())
        add("completions/clipped_ratio", truncated.mean())
        for k, name in enumerate(self.scorer.names):
            add(f"rewards/{name}/mean", torch.nanmean(all_rewards[:, k]))
        self.log_reward_metrics("train", reward_log)

    def log_reward_metrics(self, mode: str, reward_log: RewardLog) -> None:
        """The reward functions' ``log_metric`` values: one mean per name over the round and all processes.

        Names are unioned across processes first (``gather_object``), so a metric only some processes
        logged still takes part in the same, identically ordered ``gather`` everywhere.
        """
        names = sorted(set(gather_object(sorted(reward_log.metrics))))
        if not names:
            return
        stats = torch.tensor(
            [
                [sum(reward_log.metrics.get(name, [])), len(reward_log.metrics.get(name, []))]
                for name in names
            ],
            dtype=torch.float64,
            device=self.args.device,
        )
        totals = self.accelerator.gather(stats.unsqueeze(0)).sum(dim=0).tolist()
        for name, (total, count) in zip(names, totals):
            if count > 0:
                self._add_metric(mode, name, total / count)

    def _add_metric(self, mode: str, name: str, value: float | torch.Tensor) -> None:
        value = float(value)
        if not math.isnan(value):
            self.metrics.add(mode, name, value)

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
        per_token_logps = self.completion_logps(model, inputs)
        args = self.args
        output = grpo_loss(
            per_token_logps,
            inputs["advantages"],
            inputs["completion_mask"],
            loss_type=args.loss_type,
            old_per_token_logps=inputs.get("old_per_token_logps"),
            ref_per_token_logps=inputs.get("ref_per_token_logps"),
            beta=finite_knob(args, "beta", minimum=0.0),  # checked where read: a schedule may change it
            epsilon_low=finite_knob(args, "epsilon", minimum=0.0),
            epsilon_high=finite_knob(args, "epsilon_high", minimum=0.0),
            importance_sampling_level=args.importance_sampling_level,
            use_bias_correction_kl=args.use_bias_correction_kl,
            max_completion_length=args.max_completion_length,
            tokens_per_micro_step=inputs["tokens_per_micro_step"],
        )
        mode = "train" if model.training else "eval"
        gather = self.accelerator.gather
        stats = {
            "clip_ratio/low_mean": output.low_clip,
            "clip_ratio/high_mean": output.high_clip,
            "clip_ratio/region_mean": output.region_clip,
        }
        if output.kl is not None:
            stats["kl"] = output.kl
        for name, value in stats.items():
            self.metrics.add(mode, name, gather(value.detach().reshape(1)).mean().item())
        return output.loss

    def completion_logps(self, model: nn.Module, batch: dict[str, Any]) -> torch.Tensor:
        """Per-token ``log π(completion_t | prompt, completion_<t)`` of temperature-scaled logits, (B, C).

        Logits are divided by the sampling temperature so that π_θ, π_old and π_ref are the
        distributions the completions were actually drawn from (as TRL does).
        """
        prompt_ids, completion_ids = batch["prompt_ids"], batch["completion_ids"]
        input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
        attention_mask = torch.cat([batch["prompt_mask"], batch["completion_mask"].clamp(max=1)], dim=1)
        width = completion_ids.size(1)
        pieces = self._shared_prompt_logits(model, batch, input_ids, attention_mask)
        if pieces is None:
            outputs = model(input_ids=input_ids, attention_mask=attention_mask, logits_to_keep=width + 1)
            pieces = [outputs.logits[:, :-1]]
        temperature = finite_knob(self.args, "temperature", minimum=0.0, strict=True)
        targets = completion_ids.split([piece.shape[1] for piece in pieces], dim=1)
        logps = [
            selective_log_softmax(piece if temperature == 1.0 else piece / temperature, target)
            for piece, target in zip(pieces, targets)
        ]
        return logps[0] if len(logps) == 1 else torch.cat(logps, dim=1)

    def _shared_prompt_logits(
        self, model: nn.Module, batch: dict[str, Any], input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> list[torch.Tensor] | None:
        """The completion logits with each distinct prompt of the micro-batch run once (its G completions
        share it; :func:`~trainwright.trainers.logprobs.shared_prefix_logits`), or ``None`` for one plain
        forward: no prompt groups in the batch (see :func:`~trainwright.trainers.grpo_round.split_round`),
        no repeated prompt, too small a saving, or a model / set-up that cannot reuse a KV cache."""
        rows, inverse = batch.get("prompt_rows"), batch.get("prompt_inverse")
        if rows is None or inverse is None or rows.numel() >= inverse.numel():
            return None
        sharing = self.__dict__.get("_prefix_sharing")
        if sharing is None:
            sharing = self._prefix_sharing = prefix_sharing_for(self)
        width = batch["prompt_ids"].shape[1]
        saved = (inverse.numel() - rows.numel()) * width  # prompt tokens not run again
        argument = sharing.argument(model, saved_tokens=saved)
        if argument is None:
            return None
        prefix = SharedPrefix(width, rows, inverse)
        pieces = shared_prefix_logits(model, input_ids, attention_mask, prefix, argument)
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
        advantages are normalised within this batch.
        """
        g = self.args.num_generations_eval or self.args.num_generations
        rows = [row for row in inputs for _ in range(g)]
        sample = self.sample_completions(rows)
        combined = combine_rewards(sample.rewards_per_func, self.scorer.weights)
        adv = compute_advantages(combined, g, self.args.scale_rewards)
        batch = pad_round(
            sample.prompt_ids,
            sample.completion_ids,
            pad_token_id=self.processing_class.pad_token_id,
            eos_token_ids=self.eos_token_ids,
            mask_truncated_completions=self.args.mask_truncated_completions,
        )
        rows, inverse = distinct_rows(batch["prompt_ids"], batch["prompt_mask"])
        batch["prompt_rows"], batch["prompt_inverse"] = rows, inverse
        batch = {k: v.to(self.args.device) for k, v in batch.items()}
        batch["advantages"] = adv.advantages.to(self.args.device)
        batch["tokens_per_micro_step"] = batch["completion_mask"].sum().float()
        self._add_metric("eval", "reward", torch.nanmean(combined))
        self.log_reward_metrics("eval", sample.reward_log)
        with torch.no_grad():
            if self.args.beta != 0.0:
                with reference_forward(self.accelerator.unwrap_model(model), self.ref_model) as ref:
                    batch["ref_per_token_logps"] = self.completion_logps(ref, batch)
            loss = self.compute_loss(model, batch)
        return loss.detach(), None, None

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """Add the GRPO metrics averaged over the logging window, in place (see ``MetricsWindow.merge_into``)."""
        self.metrics.merge_into(logs)
        super().log(logs, start_time)


def _is_flat(group: torch.Tensor) -> bool:
    valid = group[~torch.isnan(group)]
    return valid.numel() < 2 or bool(torch.isclose(valid, valid[0]).all())
