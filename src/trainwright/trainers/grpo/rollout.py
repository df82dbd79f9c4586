"""Multi-turn rollouts for GRPO: the tool-calling loop and user rollout functions (TRL 1.16's semantics).

Every model call goes through the trainer's :class:`~trainwright.trainers.grpo.generation.GenerationBackend`
(``generate(model, prompt_ids) -> completion_ids``), so a custom backend (a serving engine) serves tool
turns too; no trainer method has to be overridden.

The tool loop (:class:`ToolLoop`), as TRL: completions whose parsed message has ``tool_calls`` run
them (:func:`~trainwright.trainers.grpo.tools.run_tool_calls`); the tool results' tokens
(:func:`~trainwright.trainers.grpo.tool_chat.tool_suffix_ids`) are appended to the completion and the
model continues from ``prompt + completion + results``, up to ``max_tool_calling_iterations`` times.
The result tokens are part of the completion (the model attends to them) but not of the loss: the
*tool mask* is 0 on them and 1 on sampled tokens. A turn whose results would push the completion past
``max_completion_length`` (or the sequence past the model's context) is rolled back and the rollout
stops there; the continuation is cut so the whole completion fits ``max_completion_length``.

A rollout function (``rollout_func(prompts, trainer) -> dict``) replaces generation: it returns
``prompt_ids``, ``completion_ids`` and ``logprobs`` (one entry per prompt), optionally ``env_mask``
(the tool mask: 1 on tokens the model sampled) and any other field, which reward functions receive
as a keyword argument. :func:`check_rollout_output` refuses a malformed result by name.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from trainwright.trainers.grpo.tool_chat import parse_completion, tool_suffix_ids
from trainwright.trainers.grpo.tools import ToolBox, run_tool_calls

RolloutFunc = Callable[[list[Any], Any], dict[str, Any]]
REQUIRED_ROLLOUT_KEYS = ("prompt_ids", "completion_ids", "logprobs")


class RolloutError(ValueError):
    """A rollout function returned something the trainer cannot train on (the message says what)."""


@dataclass
class ToolStats:
    """Tool calls made in a round and how many failed (TRL's ``tools/*`` metrics)."""

    calls: int = 0
    failures: int = 0


@dataclass
class Rollout:
    """One round's rollouts of this process, one entry per completion."""

    prompt_ids: list[list[int]]
    completion_ids: list[list[int]]
    completions: list[Any]
    tool_mask: list[list[int]] | None = None
    extra_fields: dict[str, Any] = field(default_factory=dict)
    tool_stats: ToolStats | None = None


@dataclass
class ToolLoop:
    """Runs the tool turns of a round's completions (see the module docstring)."""

    tokenizer: Any
    generate: Callable[[list[list[int]]], list[list[int]]]
    max_iterations: int | None
    max_completion_length: int
    max_model_length: int
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)

    def run(
        self,
        prompts: list[list[dict[str, Any]]],
        rollout: Rollout,
        boxes: Sequence[ToolBox],
        tools_per_row: Sequence[Sequence[Callable[..., Any]]],
    ) -> None:
        """Extend ``rollout`` in place: completions, ids, ``tool_mask`` and ``tool_stats``."""
        prompts = copy.deepcopy(prompts)  # the conversation so far, per row; the caller's stays as it was
        ids, completions = rollout.completion_ids, rollout.completions
        mask = [[1] * len(row) for row in ids]
        stats = ToolStats()
        calls = {i: c[0].get("tool_calls") for i, c in enumerate(completions) if c and c[0].get("tool_calls")}
        turns = 0
        while calls and (self.max_iterations is None or turns < self.max_iterations):
            extended = {}
            for i, tool_calls in calls.items():
                prompt_len, completion_len = len(prompts[i]), len(completions[i])
                prompts[i].append(completions[i][-1])
                turn = run_tool_calls(boxes[i], tool_calls)
                stats.calls += turn.calls
                stats.failures += turn.failures
                prompts[i] += turn.messages
                completions[i] += turn.messages
                sequence = rollout.prompt_ids[i] + ids[i] + self._suffix(turn.messages)
                if self._fits(sequence, len(rollout.prompt_ids[i])):
                    extended[i] = sequence
                else:  # roll the turn back: this rollout ends with its completion as it is
                    del completions[i][completion_len:]
                    del prompts[i][prompt_len:]
            if not extended:
                break
            continuations = self.generate(list(extended.values()))
            calls = {}
            for (i, sequence), new in zip(extended.items(), continuations):
                prompt_len = len(rollout.prompt_ids[i])
                new = new[: max(0, self.max_completion_length - (len(sequence) - prompt_len))]
                mask[i] += [0] * (len(sequence) - prompt_len - len(ids[i])) + [1] * len(new)
                ids[i] = sequence[prompt_len:] + new
                if not new:
                    continue
                message = parse_completion(self.tokenizer, new, sequence, tools_per_row[i])
                completions[i].append(message)
                if message.get("tool_calls"):
                    calls[i] = message["tool_calls"]
            turns += 1
        rollout.tool_mask = mask
        rollout.tool_stats = stats

    def _suffix(self, messages: list[dict[str, Any]]) -> list[int]:
        return tool_suffix_ids(self.tokenizer, messages, self.chat_template_kwargs)

    def _fits(self, sequence: list[int], prompt_len: int) -> bool:
        return (
            len(sequence) - prompt_len <= self.max_completion_length and len(sequence) < self.max_model_length
        )


def check_rollout_output(output: Any, num_prompts: int) -> Rollout:
    """A rollout function's result as a :class:`Rollout` (completions still to decode), or a
    :class:`RolloutError` naming the field that is missing or of the wrong length."""
    if not isinstance(output, dict):
        raise RolloutError(f"rollout_func must return a dict, got {type(output).__name__}")
    missing = sorted(set(REQUIRED_ROLLOUT_KEYS) - output.keys())
    if missing:
        raise RolloutError(f"rollout_func must return keys {missing} in its output dict.")
    for key in (*REQUIRED_ROLLOUT_KEYS, "env_mask"):
        value = output.get(key)
        if key == "logprobs" and value is None or key == "env_mask" and value is None:
            continue
        if not isinstance(value, (list, tuple)) or len(value) != num_prompts:
            size = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
            raise RolloutError(
                f"rollout_func returned {key!r} with {size} entries for {num_prompts} prompts; give one list of "
                f"token ids (or values) per prompt, in the order of the prompts it was given"
            )
    prompt_ids = [list(map(int, row)) for row in output["prompt_ids"]]
    completion_ids = [list(map(int, row)) for row in output["completion_ids"]]
    if any(not row for row in prompt_ids):
        raise RolloutError(
            "rollout_func returned an empty prompt_ids entry; every prompt needs its token ids"
        )
    env_mask = output.get("env_mask")
    if env_mask is not None:
        env_mask = [list(map(int, row)) for row in env_mask]
        for i, (row, completion) in enumerate(zip(env_mask, completion_ids)):
            if len(row) != len(completion):
                raise RolloutError(
                    f"rollout_func returned env_mask[{i}] of length {len(row)} for a completion of {len(completion)} "
                    f"tokens; give one 0/1 per completion token (1: sampled by the model, 0: from the environment)"
                )
    extra = {k: v for k, v in output.items() if k not in (*REQUIRED_ROLLOUT_KEYS, "env_mask")}
    for key, value in extra.items():
        if isinstance(value, list) and len(value) != num_prompts:
            raise RolloutError(
                f"rollout_func returned the extra field {key!r} with {len(value)} values for {num_prompts} prompts; "
                f"a list field needs one value per prompt (any other value is passed to every reward call as is)"
            )
    return Rollout(prompt_ids, completion_ids, [], tool_mask=env_mask, extra_fields=extra)


def expand_extra_fields(extra: dict[str, Any], num_rows: int) -> dict[str, list[Any]]:
    """Extra rollout fields as reward-function columns: a list is per row, any other value is repeated."""
    return {key: value if isinstance(value, list) else [value] * num_rows for key, value in extra.items()}


def tool_metrics(
    stats: ToolStats, num_completions: int, gather: Callable[[Any], Any], device: Any
) -> dict[str, float]:
    """TRL's ``tools/call_frequency`` (calls per completion) and ``tools/failure_frequency`` (failed calls
    per call, 0 without calls), over every process."""
    local = torch.tensor([[stats.calls, stats.failures, num_completions]], dtype=torch.float64, device=device)
    calls, failures, completions = gather(local).sum(dim=0).tolist()
    return {
        "tools/call_frequency": calls / completions if completions else 0.0,
        "tools/failure_frequency": failures / calls if calls else 0.0,
    }
