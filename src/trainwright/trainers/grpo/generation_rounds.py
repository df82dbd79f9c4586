"""The generation-round half of :class:`~trainwright.trainers.grpo.trainer.GRPOTrainer`, in the order a round runs.

:class:`GenerationRounds` is an object the trainer holds (``trainer.rounds``), built from what the trainer fixes at
construction and reading the rest through an explicit interface (:class:`RoundHost`): generate
G completions per prompt, score them, turn the rewards gathered over all processes into advantages, log the round's
metrics, split it into micro-batches and add the π_old / π_ref log-probs they need. The update itself
(forward, loss) stays in ``grpo/trainer.py``. Evaluation batches go through the same steps
(:meth:`GenerationRounds.evaluation_batch`), without buffering.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, Protocol

import torch
from accelerate import Accelerator
from accelerate.utils import gather_object
from torch import nn
from transformers import TrainerState

from trainwright.callbacks.completions_log import CompletionsLogCallback
from trainwright.trainers.common.logprobs import distinct_rows
from trainwright.trainers.common.metrics import MetricsWindow
from trainwright.trainers.common.reference import kept, reference_forward
from trainwright.trainers.grpo.advantages import AdvantageResult, combine_rewards, round_advantages
from trainwright.trainers.grpo.agent import AgentRollouts
from trainwright.trainers.grpo.generation import GenerationBackend, TransformersGenerateBackend
from trainwright.trainers.grpo.learning_signal import NoSignalRounds
from trainwright.trainers.grpo.loss_types import LOSSES, TOKEN_MEAN
from trainwright.trainers.grpo.metrics import completion_metrics, reward_metrics
from trainwright.trainers.grpo.rewards import RewardScorer
from trainwright.trainers.grpo.rollout import ToolLoop, tool_metrics
from trainwright.trainers.grpo.round_data import (
    RoundSample,
    check_rows,
    completion_rows,
    is_conversational,
    loss_mask,
    pad_micro_batch,
    pad_round,
    shuffle_rows,
    split_round,
)
from trainwright.trainers.grpo.sampler import GroupedRoundSampler, RoundBatch

logger = logging.getLogger(__name__)


def _is_flat(group: torch.Tensor) -> bool:
    valid = group[~torch.isnan(group)]
    return valid.numel() < 2 or bool(torch.isclose(valid, valid[0]).all())


class RoundHost(Protocol):
    """What a generation round reads from its trainer: the ``Trainer`` state that can change while it trains
    (the wrapped model, a new ``TrainerState`` per ``train()`` call, the sampler made with each train loader,
    a replaced backend) and the one model call it needs. ``GRPOTrainer`` is one; rollout functions receive it
    as their ``trainer`` argument."""

    args: Any  # a GRPOConfig
    accelerator: Accelerator
    model: nn.Module
    ref_model: nn.Module | None
    state: TrainerState
    train_dataset: Any
    round_sampler: GroupedRoundSampler | None
    generation_backend: GenerationBackend

    def completion_logps(self, model: nn.Module, batch: dict[str, Any]) -> torch.Tensor:
        """Per-token log-probs of ``batch``'s completions under ``model``."""
        ...


class GenerationRounds:
    """Generate, score, normalise and split one round (see the module docstring).

    What is fixed when the trainer is built is passed in (the reward scorer, the agent rollouts, the pad id,
    whether a reference is used, the metrics window, the tokenizer); what can change while it trains is read
    from ``host`` (:class:`RoundHost`). The rounds own what only they use: the EOS ids completions end with,
    the no-signal-round log, the completions table and the last round's rows.
    """

    def __init__(
        self,
        host: RoundHost,
        *,
        scorer: RewardScorer,
        agent: AgentRollouts | None,
        processing_class: Any,
        pad_token_id: int,
        uses_reference: bool,
        metrics: MetricsWindow,
    ) -> None:
        self.host = host
        self.scorer, self.agent, self.processing_class = scorer, agent, processing_class
        self.pad_token_id, self.uses_reference, self.metrics = pad_token_id, uses_reference, metrics
        backend = host.generation_backend
        eos = getattr(backend, "eos_token_ids", None)
        self.eos_token_ids: set[int] = set(eos) if eos is not None else {processing_class.eos_token_id}
        self.no_signal_rounds = NoSignalRounds()  # logs rounds whose groups all agree (no gradient)
        self.completions_logger: CompletionsLogCallback | None = None
        self.last_completions: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ training rounds
    def generate_round(self, batch: RoundBatch) -> list[dict[str, Any]]:
        """One generation round from its rows: the ``steps_per_generation`` micro-batches it feeds."""
        args, accelerator, device = self.host.args, self.host.accelerator, self.host.args.device
        sample = self.sample_completions(list(batch), seed_key=batch.key)
        if args.dynamic_sampling:
            self.refill_zero_variance_groups(sample, batch.key)
        all_rewards, adv, advantages = self.score_round(sample, args.num_generations)
        self.check_reward_signal(all_rewards, sample, batch.key)
        self.no_signal_rounds.observe(adv.rewards, adv.zero_std, batch.key, log=accelerator.is_main_process)
        padded = self.pad_sample(sample)
        padded["advantages"] = advantages
        active_tokens = accelerator.gather(loss_mask(padded).sum().reshape(1).to(device)).sum().float()
        tokens_per_micro_step = active_tokens / (accelerator.num_processes * args.steps_per_generation)
        self.log_round_metrics("train", all_rewards, adv, padded, sample)
        if args.shuffle_round_rows:  # as TRL; an int-only tuple hashes alike in every process and run
            row_seed = hash((args.seed, accelerator.process_index, *batch.key, -1)) % (2**63)
            padded = shuffle_rows(padded, row_seed, window=self.order_free_window())
        micro_batches = split_round(
            padded,
            args.per_device_train_batch_size,
            args.steps_per_generation,
            tokens_per_micro_step.cpu(),
            pad_token_id=self.pad_token_id,
            pad_to_multiple_of=args.resolved_pad_to_multiple_of(),
        )
        for part in micro_batches:  # TRL's loss input: the round's loss tokens over all processes
            part["num_items_in_batch"] = active_tokens.long().cpu()
        if self.needs_old_logps() or self.uses_reference:
            self.add_reference_and_old_logps(micro_batches)
        self.last_completions = completion_rows(sample, self.scorer.names, advantages)
        if self.completions_logger is not None:
            self.completions_logger.add_rows(self.last_completions)
        return micro_batches

    def order_free_window(self) -> int | None:
        """The rows of one optimiser step when its gradient is the same however they are cut into
        micro-batches (``None`` otherwise): the step's micro-batch losses then add up to one sum over its rows.

        That holds when each micro-batch's loss is a sum over rows with a normaliser fixed for the step:
        every aggregation of :data:`~trainwright.trainers.grpo.loss_types.LOSSES` but the micro-batch token
        mean (``bnpo``), without the per-micro-batch entropy quantile (``top_entropy_quantile`` < 1) or MoE
        load-balancing loss, and when steps do not straddle rounds (``steps_per_generation`` a multiple of
        gradient accumulation)."""
        args = self.host.args
        ga, spg = args.gradient_accumulation_steps, args.steps_per_generation
        if ga < 2 or spg % ga or args.top_entropy_quantile < 1.0:
            return None
        spec = LOSSES.get(args.loss_type)
        if spec is None or spec.aggregation is TOKEN_MEAN or getattr(self.host, "aux_loss_enabled", False):
            return None
        return ga * args.per_device_train_batch_size

    def evaluation_batch(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """An evaluation batch: ``num_generations_eval`` completions per prompt, scored, on the device."""
        args, accelerator = self.host.args, self.host.accelerator
        g = args.num_generations_eval or args.num_generations
        sample = self.sample_completions([row for row in rows for _ in range(g)])
        all_rewards, adv, advantages = self.score_round(sample, g)
        batch = self.pad_sample(sample)
        self.log_round_metrics("eval", all_rewards, adv, batch, sample)
        pad_micro_batch(batch, self.pad_token_id, args.resolved_pad_to_multiple_of())
        batch["prompt_rows"], batch["prompt_inverse"] = distinct_rows(
            batch["prompt_ids"], batch["prompt_mask"]
        )
        batch.pop("model_lengths", None)
        batch = {k: v.to(args.device) for k, v in batch.items()}
        batch["advantages"] = advantages.to(args.device)
        active = accelerator.gather(loss_mask(batch).sum().reshape(1)).sum().float()
        batch["tokens_per_micro_step"] = active / accelerator.num_processes
        batch["num_items_in_batch"] = active.long()
        return batch

    def sample_completions(
        self, rows: list[dict[str, Any]], seed_key: tuple[int, ...] | None = None
    ) -> RoundSample:
        """Generate one completion per row (rows already hold G copies of each prompt) and score it."""
        if self.agent is None or self.agent.environments is None:
            check_rows(rows, "a dataset row of this round")
        unwrapped = self.host.accelerator.unwrap_model(self.host.model)
        rollout = None
        with self.generation_rng(seed_key), self._generation_grad_mode():
            if self.agent is None:
                prompts = [row["prompt"] for row in rows]
                prompt_ids = self.tokenize_prompts(prompts, rows)
                completion_ids = self.host.generation_backend.generate(unwrapped, prompt_ids)
            else:
                generate = partial(self.host.generation_backend.generate, unwrapped)
                prompts, rollout, extra = self.agent.sample(
                    self.host, rows, generate, self.tool_loop(generate)
                )
                prompt_ids, completion_ids = rollout.prompt_ids, rollout.completion_ids
        if rollout is None:
            texts = self.processing_class.batch_decode(completion_ids, skip_special_tokens=True)
            completions: list[Any] = [
                [{"role": "assistant", "content": text}] if is_conversational(prompt) else text
                for prompt, text in zip(prompts, texts)
            ]
        else:
            completions = rollout.completions
        columns = {key: [row[key] for row in rows] for key in rows[0] if key != "prompt"}
        if rollout is not None:
            columns.update(extra)
        rewards, reward_log = self.scorer.score(
            prompts, completions, completion_ids, columns, trainer_state=self.host.state
        )
        sample = RoundSample(rows, prompts, prompt_ids, completion_ids, completions, rewards, reward_log)
        if rollout is not None:
            sample.tool_mask, sample.tool_stats = rollout.tool_mask, rollout.tool_stats
        return sample

    def tool_loop(self, generate: Callable[[list[list[int]]], list[list[int]]]) -> ToolLoop:
        """The tool-calling loop of a round, generating through ``generate`` (the backend, bound to the policy)."""
        config = getattr(self.host.model.config, "text_config", None) or self.host.model.config
        return ToolLoop(
            self.processing_class,
            generate,
            self.host.args.max_tool_calling_iterations,
            self.host.args.max_completion_length,
            getattr(config, "max_position_embeddings", None) or 2**62,
            dict(self.host.args.chat_template_kwargs or {}),
        )

    def _generation_grad_mode(self) -> contextlib.AbstractContextManager[Any]:
        """``torch.inference_mode`` around the built-in backend (its ``generate`` is about 7 % faster on CPU
        than under ``no_grad`` alone: no version counters or view tracking); a no-op otherwise.

        Only there, because that backend returns plain lists, so no inference tensor leaves the call; a
        custom backend may keep tensors (a weight copy, a cache) that later meet autograd. Not under FSDP
        / DeepSpeed, whose gather of the sharded parameters for generation writes them back afterwards.
        """
        sharded = getattr(self.host, "is_fsdp_enabled", False) or getattr(
            self.host, "is_deepspeed_enabled", False
        )
        if sharded or type(self.host.generation_backend) is not TransformersGenerateBackend:
            return contextlib.nullcontext()
        return torch.inference_mode()

    def tokenize_prompts(
        self, prompts: list[Any], rows: list[dict[str, Any]] | None = None
    ) -> list[list[int]]:
        """Token ids of each prompt: the chat template (with the generation prompt) for conversations.

        The chat template gets ``chat_template_kwargs`` from the config, updated with the row's own
        ``chat_template_kwargs`` column when the dataset has one (per-row template switches).
        """
        tokenizer = self.processing_class
        # Plain-text prompts in one batched call, each distinct prompt once (a round repeats every prompt G
        # times); conversations go through the chat template one by one below.
        texts = list(dict.fromkeys(p for p in prompts if isinstance(p, str)))
        encoded_texts = dict(zip(texts, tokenizer(texts)["input_ids"])) if texts else {}
        ids = []
        for i, prompt in enumerate(prompts):
            if isinstance(prompt, str):
                ids.append(list(encoded_texts[prompt]))
            elif is_conversational(prompt):
                row_kwargs = (rows[i].get("chat_template_kwargs") if rows is not None else None) or {}
                kwargs = {**(self.host.args.chat_template_kwargs or {}), **row_kwargs}
                encoded = tokenizer.apply_chat_template(
                    prompt, add_generation_prompt=True, tokenize=True, **kwargs
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
        devices = [self.host.args.device] if self.host.args.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):
            seed = hash((self.host.args.seed, self.host.accelerator.process_index, *seed_key)) % (2**63)
            torch.manual_seed(seed)
            yield

    def refill_zero_variance_groups(self, sample: RoundSample, key: tuple[int, int]) -> None:
        """DAPO dynamic sampling (Yu et al. 2025, arXiv:2503.14476): groups whose rewards all agree have
        zero advantage, hence no gradient; replace them (in place) with groups of the next prompts.

        Each process refills its own groups (its share holds whole groups), with up to
        ``max_dynamic_sampling_rounds`` extra ``generate`` calls; groups still flat after that are kept.
        """
        g = self.host.args.num_generations
        sampler = self.host.round_sampler
        assert sampler is not None  # map-style data: the trainer refuses dynamic_sampling on a stream
        refilled = 0
        for _ in range(self.host.args.max_dynamic_sampling_rounds):
            rewards = combine_rewards(sample.rewards_per_func, self.scorer.weights).view(-1, g)
            flat = [i for i, group in enumerate(rewards) if _is_flat(group)]
            if not flat:
                break
            world, rank = self.host.accelerator.num_processes, self.host.accelerator.process_index
            positions = [(refilled + j) * world + rank for j in range(len(flat))]
            refilled += len(flat)
            indices = sampler.refill_prompts(key[0], key[1], positions)
            new_rows = [self.host.train_dataset[i] for i in indices for _ in range(g)]
            sample.replace_groups(flat, self.sample_completions(new_rows, seed_key=(*key, refilled)), g)
        self.metrics.add("train", "dynamic_sampling/refilled_groups", float(refilled))

    def score_round(
        self, sample: RoundSample, num_generations: int
    ) -> tuple[torch.Tensor, AdvantageResult, torch.Tensor]:
        """The rewards of every process (groups split across processes and batch-level scaling are
        normalised on the whole round), their advantages, and this process's share of the advantages."""
        args, accelerator = self.host.args, self.host.accelerator
        all_rewards = accelerator.gather(sample.rewards_per_func.to(args.device)).cpu()
        adv = round_advantages(
            all_rewards,
            self.scorer.weights,
            num_generations,
            args.scale_rewards,
            args.multi_objective_aggregation,
        )
        start = accelerator.process_index * len(sample)
        return all_rewards, adv, adv.advantages[start : start + len(sample)]

    def pad_sample(self, sample: RoundSample) -> dict[str, torch.Tensor]:
        return pad_round(
            sample.prompt_ids,
            sample.completion_ids,
            pad_token_id=self.pad_token_id,
            eos_token_ids=self.eos_token_ids,
            mask_truncated_completions=self.host.args.mask_truncated_completions,
            tool_mask=sample.tool_mask,
        )

    def check_reward_signal(
        self, all_rewards: torch.Tensor, sample: RoundSample, key: tuple[int, int]
    ) -> None:
        """Warn (``logging``, as TRL) when completions of the round got no reward from any function.

        A completion for which every reward function returned None (or NaN) is *unscorable*: its
        advantage is 0 and it teaches nothing; a round of only those trains nothing. This is usually a
        wrong column name or an answer format the reward functions do not parse.
        ``frac_reward_unscorable`` in the logs counts them.
        """
        unscorable = torch.isnan(all_rewards).all(dim=1)
        count, total = int(unscorable.sum()), unscorable.numel()
        if count == 0 or not self.host.accelerator.is_main_process:
            return
        local = torch.isnan(sample.rewards_per_func).all(dim=1).nonzero()
        example: dict[str, Any] = {}
        if local.numel():
            i = int(local[0])
            example = {k: v for k, v in sample.rows[i].items() if k != "prompt"}
            example.update(prompt=sample.prompts[i], completion=sample.completions[i])
        what = (
            f"every reward function returned None (or NaN) for all {total} completions, so every advantage is "
            f"0 and the round trains nothing"
            if count == total
            else f"{count} of {total} completions got no reward (every reward function returned None or NaN); "
            f"their advantage is 0"
        )
        logger.warning(
            "All reward functions returned None for the following kwargs:\n%s\nGRPO round %d of epoch %d: %s. "
            "Please ensure that at least one reward function returns a valid reward: check the reward "
            "functions' arguments (dataset column names) and what they parse; 'frac_reward_unscorable' in the "
            "logs counts these.",
            example,
            key[1],
            key[0],
            what,
        )

    def needs_old_logps(self) -> bool:
        """Whether π_old can differ from π_θ when a micro-batch is used.

        It cannot when every round lies within one optimiser step (``steps_per_generation × μ`` divides
        gradient accumulation): then the ratio is exactly 1 and ``per_token_logps.detach()`` serves.
        """
        per_round = self.host.args.steps_per_generation * self.host.args.num_iterations
        return self.host.args.gradient_accumulation_steps % per_round != 0

    def add_reference_and_old_logps(self, micro_batches: list[dict[str, Any]]) -> None:
        """π_old (when the ratio can differ from 1) and π_ref (when β ≠ 0), without gradients."""
        model = self.host.model
        for part in micro_batches:
            on_device = {k: v.to(self.host.args.device) for k, v in part.items()}
            if self.needs_old_logps():
                with torch.inference_mode():
                    old_logps = self.host.completion_logps(model, on_device)
                part["old_per_token_logps"] = kept(old_logps.cpu())
            if self.uses_reference:
                with reference_forward(self.host.accelerator.unwrap_model(model), self.host.ref_model) as ref:
                    ref_logps = self.host.completion_logps(ref, on_device)
                part["ref_per_token_logps"] = kept(ref_logps.cpu())

    # ------------------------------------------------------------------ metrics of a round
    def log_round_metrics(
        self,
        mode: str,
        all_rewards: torch.Tensor,
        adv: AdvantageResult,
        batch: dict[str, torch.Tensor],
        sample: RoundSample,
    ) -> None:
        """TRL's metric names, from the gathered round (:mod:`trainwright.trainers.grpo.metrics`); a
        training round also adds its prompt and completion tokens to ``state.num_input_tokens_seen``
        (``num_tokens``), as TRL."""
        gather, device = self.host.accelerator.gather, self.host.args.device
        lengths = gather(batch.get("model_lengths", batch["completion_lengths"]).to(device)).cpu()
        truncated = gather(batch["truncated"].to(device)).cpu()
        if mode == "train":
            prompt_tokens = gather(batch["prompt_mask"].sum().reshape(1).to(device)).sum()
            self.host.state.num_input_tokens_seen += int(prompt_tokens) + int(lengths.sum())
        self.metrics.set(mode, "num_tokens", float(self.host.state.num_input_tokens_seen))
        metrics = {
            **completion_metrics(lengths, truncated),
            **reward_metrics(all_rewards, self.scorer.names, self.scorer.weights, adv),
        }
        if sample.tool_stats is not None:
            metrics.update(tool_metrics(sample.tool_stats, len(sample), self.host.accelerator.gather, device))
        for name, value in metrics.items():
            self._add_metric(mode, name, value)
        self.log_reward_metrics(mode, sample.reward_log)

    def log_reward_metrics(self, mode: str, reward_log: Any) -> None:
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
            device=self.host.args.device,
        )
        totals = self.host.accelerator.gather(stats.unsqueeze(0)).sum(dim=0).tolist()
        for name, (total, count) in zip(names, totals):
            if count > 0:
                self._add_metric(mode, name, total / count)

    def _add_metric(self, mode: str, name: str, value: float | torch.Tensor) -> None:
        value = float(value)
        if not math.isnan(value):
            self.metrics.add(mode, name, value)
