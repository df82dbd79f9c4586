"""One GRPO generation round as data: what was sampled and scored, then the padded micro-batches.

A round goes (see :meth:`trainwright.trainers.grpo.generation_rounds.GenerationRounds.generate_round`):

1. sample and score: a :class:`RoundSample` per process (prompts, token ids, decoded completions,
   ``(N, K)`` rewards, what the reward functions logged);
2. advantages from the rewards gathered over all processes;
3. :func:`pad_round`: left-padded prompts and right-padded completions as tensors;
4. :func:`shuffle_rows` (as TRL) and :func:`split_round`: ``steps_per_generation`` micro-batches, each
   trimmed to its own padding;
5. :func:`completion_rows`: the completions-table rows.

Steps 3–5 are pure functions of tensors and lists, testable without a trainer. The prompts a round
starts from are checked once, when the trainer is built (:func:`check_prompt_dataset`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from trainwright.trainers.common.logprobs import distinct_rows
from trainwright.trainers.grpo.rewards import RewardLog


def is_conversational(prompt: Any) -> bool:
    """True for a list of ``{"role": ..., "content": ...}`` chat messages."""
    return isinstance(prompt, list) and all(isinstance(m, dict) and "role" in m for m in prompt)


def prompt_problem(prompt: Any) -> str | None:
    """What is wrong with one ``prompt`` value, or ``None`` if it is usable."""
    if isinstance(prompt, str):
        return (
            None
            if prompt
            else "is an empty string: the policy would generate from nothing; give every row a prompt"
        )
    if is_conversational(prompt) and prompt:
        return None
    if isinstance(prompt, list) and not prompt:
        return "is an empty list of messages; give every row a prompt"
    return (
        f"holds {type(prompt).__name__} ({prompt!r:.60}); a prompt must be a non-empty string or a list of "
        f"chat messages ({{'role': ..., 'content': ...}})"
    )


def check_prompt_dataset(dataset: Any, name: str) -> None:
    """Refuse a dataset without a usable ``prompt`` in every row, naming the row and what it holds.

    Checked once at construction (a ``datasets.Dataset``, or a dict of them for evaluation), so a bad
    row fails before training instead of as a tokenizer error in the middle of a round.
    """
    if dataset is None:
        return
    if isinstance(dataset, dict):
        for key, part in dataset.items():
            check_prompt_dataset(part, f"{name}[{key!r}]")
        return
    columns = getattr(dataset, "column_names", None)
    if columns is None:
        return
    if "prompt" not in columns:
        raise ValueError(f"{name} needs a 'prompt' column; it has {columns}")
    if not hasattr(dataset, "__len__"):  # an IterableDataset: rows are only seen when streamed
        return
    for i, prompt in enumerate(dataset["prompt"]):
        problem = prompt_problem(prompt)
        if problem is not None:
            error = ValueError if isinstance(prompt, (str, list)) else TypeError
            raise error(f"{name} row {i}: column 'prompt' {problem}")


def check_rows(rows: Sequence[dict[str, Any]], where: str) -> None:
    """The same check for rows met only when a round is read (a streamed dataset has no rows up front)."""
    for row in rows:
        if not isinstance(row, dict) or "prompt" not in row:
            keys = sorted(row) if isinstance(row, dict) else type(row).__name__
            raise ValueError(f"{where}: a row without a 'prompt' column ({keys}); every row needs a prompt")
        problem = prompt_problem(row["prompt"])
        if problem is not None:
            raise ValueError(f"{where}: column 'prompt' {problem}")


@dataclass
class RoundSample:
    """This process's completions of one round, before padding (G consecutive rows per prompt)."""

    rows: list[dict[str, Any]]  # the dataset rows, one per completion
    prompts: list[Any]
    prompt_ids: list[list[int]]
    completion_ids: list[list[int]]
    completions: list[Any]  # decoded text, or [{"role": "assistant", "content": text}] for conversations
    rewards_per_func: torch.Tensor  # (N, K) float32, NaN where a function returned None
    reward_log: RewardLog  # log_extra columns and log_metric values of the reward functions
    tool_mask: list[list[int]] | None = None  # 1 on sampled tokens, 0 on tool results (multi-turn rounds)
    tool_stats: Any = None  # ToolStats of the round's tool calls (when tools are used)

    def __len__(self) -> int:
        return len(self.completion_ids)

    def replace_groups(self, groups: Sequence[int], other: RoundSample, group_size: int) -> None:
        """Overwrite group ``groups[j]`` (``group_size`` consecutive rows) with group ``j`` of ``other``.

        Dynamic sampling uses it to swap flat groups for fresh ones; the reward functions' extra
        columns move with their rows, and their metrics are pooled.
        """
        g = group_size
        for j, group in enumerate(groups):
            mine, theirs = slice(group * g, (group + 1) * g), slice(j * g, (j + 1) * g)
            names = ("rows", "prompts", "prompt_ids", "completion_ids", "completions", "tool_mask")
            for name in names if self.tool_mask is not None else names[:-1]:
                getattr(self, name)[mine] = getattr(other, name)[theirs]
            self.rewards_per_func[mine] = other.rewards_per_func[theirs]
            for column in set(self.reward_log.extra) | set(other.reward_log.extra):
                target = self.reward_log.extra.setdefault(column, [None] * len(self))
                target[mine] = other.reward_log.extra.get(column, [None] * len(other))[theirs]
        for name, values in other.reward_log.metrics.items():
            self.reward_log.metrics.setdefault(name, []).extend(values)


def pad_round(
    prompt_ids: list[list[int]],
    completion_ids: list[list[int]],
    *,
    pad_token_id: int,
    eos_token_ids: Collection[int],
    mask_truncated_completions: bool = False,
    tool_mask: list[list[int]] | None = None,
) -> dict[str, torch.Tensor]:
    """Left-pad prompts, right-pad completions; mask completions (and truncated ones if asked).

    A completion is *truncated* when it does not end with an EOS token (it hit ``max_completion_length``);
    with ``mask_truncated_completions`` (DAPO's overlong filtering) its mask is all zeros, so it adds no
    gradient. With a ``tool_mask`` (multi-turn rounds: 0 on tool-result tokens) the batch also holds it as a
    tensor (1 on the padding, as TRL) and ``model_lengths``, the sampled tokens per completion.
    """
    n = len(prompt_ids)
    p_width = max(len(p) for p in prompt_ids)
    c_width = max(1, max(len(c) for c in completion_ids))
    prompt = torch.full((n, p_width), pad_token_id, dtype=torch.long)
    prompt_mask = torch.zeros((n, p_width), dtype=torch.long)
    completion = torch.full((n, c_width), pad_token_id, dtype=torch.long)
    completion_mask = torch.zeros((n, c_width), dtype=torch.long)
    truncated = torch.zeros(n, dtype=torch.bool)
    for i, (p, c) in enumerate(zip(prompt_ids, completion_ids)):
        if p:
            prompt[i, p_width - len(p) :] = torch.tensor(p)
            prompt_mask[i, p_width - len(p) :] = 1
        if c:
            completion[i, : len(c)] = torch.tensor(c)
            completion_mask[i, : len(c)] = 1
        truncated[i] = not c or c[-1] not in eos_token_ids
    if mask_truncated_completions:
        completion_mask = completion_mask * (~truncated).long().unsqueeze(1)
    batch = {
        "prompt_ids": prompt,
        "prompt_mask": prompt_mask,
        "completion_ids": completion,
        "completion_mask": completion_mask,
        "truncated": truncated,
        "completion_lengths": torch.tensor([len(c) for c in completion_ids]),
    }
    if tool_mask is not None:
        batch["tool_mask"] = torch.ones((n, c_width), dtype=torch.long)
        for i, row in enumerate(tool_mask):
            if row:
                batch["tool_mask"][i, : len(row)] = torch.tensor(row, dtype=torch.long)
        batch["model_lengths"] = torch.tensor([sum(row) for row in tool_mask])
    return batch


def loss_mask(batch: dict[str, Any]) -> torch.Tensor:
    """The tokens the loss counts: the completion mask, times the tool mask in a multi-turn round."""
    mask = batch["completion_mask"]
    return mask if "tool_mask" not in batch else mask * batch["tool_mask"]


def pad_to_multiple(tensor: torch.Tensor, multiple: int | None, value: int, left: bool) -> torch.Tensor:
    """``tensor`` (B, W) padded with ``value`` on the left or right up to a width divisible by ``multiple``."""
    if not multiple or tensor.size(1) % multiple == 0:
        return tensor
    extra = multiple - tensor.size(1) % multiple
    padding = tensor.new_full((tensor.size(0), extra), value)
    return torch.cat([padding, tensor] if left else [tensor, padding], dim=1)


def pad_micro_batch(part: dict[str, Any], pad_token_id: int, multiple: int | None) -> None:
    """Pad a micro-batch's prompt (left) and completion (right) widths up to ``multiple``, in place
    (``pad_to_multiple_of``: fixed shapes for compile-once backends; masks are 0 on the padding)."""
    if not multiple:
        return
    part["prompt_ids"] = pad_to_multiple(part["prompt_ids"], multiple, pad_token_id, left=True)
    part["prompt_mask"] = pad_to_multiple(part["prompt_mask"], multiple, 0, left=True)
    part["completion_ids"] = pad_to_multiple(part["completion_ids"], multiple, pad_token_id, left=False)
    part["completion_mask"] = pad_to_multiple(part["completion_mask"], multiple, 0, left=False)
    if "tool_mask" in part:
        part["tool_mask"] = pad_to_multiple(part["tool_mask"], multiple, 1, left=False)


def shuffle_rows(
    batch: dict[str, torch.Tensor], seed: int, window: int | None = None
) -> dict[str, torch.Tensor]:
    """``batch``'s rows in one random order (every tensor with a row dimension permuted alike).

    TRL shuffles a round before splitting it, so that an optimiser step sees completions of several prompts
    rather than whole groups. The order comes from ``seed`` (derived from the round), not the global RNG,
    so a resumed run regenerating a round cuts it the same way.

    With ``window`` (the rows of one optimiser step, given only when the step's gradient does not depend on
    how its rows are cut into micro-batches) the rows of each window are then ordered by prompt: which rows
    share a step is still the random draw, but a micro-batch holds whole groups where the draw allows, so
    the shared-prompt forward runs fewer distinct prompts (2 instead of ~4 per micro-batch of 8 at G=4).
    """
    rows = len(batch["completion_ids"])
    order = torch.randperm(rows, generator=torch.Generator().manual_seed(seed))
    if window is not None and window > 1:
        _, prompt = torch.unique(batch["prompt_ids"], dim=0, return_inverse=True)
        order = torch.cat(
            [part[torch.sort(prompt[part], stable=True).indices] for part in order.split(window)]
        )
    return {k: v[order] if v.dim() and len(v) == rows else v for k, v in batch.items()}


def split_round(
    batch: dict[str, torch.Tensor],
    micro_batch_size: int,
    steps: int,
    tokens_per_micro_step: torch.Tensor,
    *,
    pad_token_id: int = 0,
    pad_to_multiple_of: int | None = None,
) -> list[dict[str, Any]]:
    """Cut the round into ``steps`` micro-batches, each trimmed to its own padding (then padded up to
    ``pad_to_multiple_of`` when set).

    Trimming matters because the round is padded to its longest prompt and completion; a micro-batch
    whose rows are all short would otherwise run the model over columns of padding. Each micro-batch
    also gets ``prompt_rows`` / ``prompt_inverse`` (:func:`~trainwright.trainers.common.logprobs.distinct_rows`
    of its prompts), computed here on the CPU so the forward needs no host sync to share prompts.
    """
    micro_batches = []
    for s in range(steps):
        rows = slice(s * micro_batch_size, (s + 1) * micro_batch_size)
        part = {
            k: v[rows]
            for k, v in batch.items()
            if k not in ("truncated", "completion_lengths", "model_lengths")
        }
        keep_p = part["prompt_mask"].any(0).nonzero()
        first = int(keep_p.min()) if keep_p.numel() else part["prompt_mask"].size(1) - 1
        part["prompt_ids"] = part["prompt_ids"][:, first:]
        part["prompt_mask"] = part["prompt_mask"][:, first:]
        c_len = int(batch["completion_lengths"][rows].max().clamp(min=1))
        part["completion_ids"] = part["completion_ids"][:, :c_len]
        part["completion_mask"] = part["completion_mask"][:, :c_len]
        if "tool_mask" in part:
            part["tool_mask"] = part["tool_mask"][:, :c_len]
        pad_micro_batch(part, pad_token_id, pad_to_multiple_of)
        part["tokens_per_micro_step"] = tokens_per_micro_step
        # rows with the same (trimmed) prompt: the forward runs each distinct prompt once
        part["prompt_rows"], part["prompt_inverse"] = distinct_rows(part["prompt_ids"], part["prompt_mask"])
        micro_batches.append(part)
    return micro_batches


def completion_rows(
    sample: RoundSample, reward_names: Sequence[str], advantages: torch.Tensor
) -> list[dict[str, Any]]:
    """The completions-table rows of this process: prompt, completion, rewards, advantage, extra columns."""
    extra = sample.reward_log.extra
    rows = []
    for i, (prompt, completion, rewards, advantage) in enumerate(
        zip(sample.prompts, sample.completions, sample.rewards_per_func.tolist(), advantages.tolist())
    ):
        row = {
            "prompt": prompt,
            "completion": completion,
            "rewards": {
                name: None if math.isnan(value) else value for name, value in zip(reward_names, rewards)
            },
            "advantage": float(advantage),
        }
        row.update({column: values[i] for column, values in extra.items()})
        rows.append(row)
    return rows
