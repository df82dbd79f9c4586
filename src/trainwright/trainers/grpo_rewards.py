"""Calling reward functions and reward models, with validation that names the culprit.

Calling convention (TRL's, so TRL reward functions work unchanged)::

    func(prompts=[...], completions=[...], completion_ids=[[...], ...], **every_other_dataset_column)
        -> list of float | None, one per completion

Conversational data gives ``completions`` as ``[{"role": "assistant", "content": text}]`` per row.
``None`` means "this function does not apply to this row": it becomes NaN and the row's weighted
reward skips it (:func:`trainwright.trainers.grpo_loss.combine_rewards`).

A sequence-classification model scores ``prompt + completion`` (through the chat template for
conversational data); its reward is ``logits[:, 0]``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

RewardFunc = Callable[..., Sequence[float | None]] | nn.Module


def reward_name(func: RewardFunc) -> str:
    """A readable name: the function's ``__name__``, or the reward model's name/class."""
    if isinstance(func, nn.Module):
        config = getattr(func, "config", None)
        name = getattr(config, "_name_or_path", "") if config is not None else ""
        return name.split("/")[-1] if name else type(func).__name__
    return getattr(func, "__name__", None) or type(func).__name__


class RewardError(RuntimeError):
    """A reward function failed or returned something unusable."""


class RewardScorer:
    """Holds the reward functions/models and scores a batch of completions into an ``(N, K)`` tensor."""

    def __init__(
        self,
        reward_funcs: RewardFunc | Sequence[RewardFunc],
        reward_weights: Sequence[float] | None = None,
        reward_processing_classes: Any | Sequence[Any] | None = None,
    ) -> None:
        funcs = list(reward_funcs) if isinstance(reward_funcs, (list, tuple)) else [reward_funcs]
        if not funcs:
            raise ValueError("reward_funcs is empty: pass at least one reward function or reward model")
        for func in funcs:
            if not (callable(func) or isinstance(func, nn.Module)):
                raise TypeError(f"reward function {func!r} is neither callable nor an nn.Module")
        self.funcs = funcs
        self.names = [reward_name(func) for func in funcs]
        if reward_weights is None:
            reward_weights = [1.0] * len(funcs)
        if len(reward_weights) != len(funcs):
            raise ValueError(
                f"reward_weights has {len(reward_weights)} entries but there are {len(funcs)} "
                f"reward functions "
                f"({', '.join(self.names)})"
            )
        self.weights = torch.tensor([float(w) for w in reward_weights], dtype=torch.float32)
        if reward_processing_classes is None or not isinstance(reward_processing_classes, (list, tuple)):
            reward_processing_classes = [reward_processing_classes] * len(funcs)
        if len(reward_processing_classes) != len(funcs):
            raise ValueError(
                f"reward_processing_classes has {len(reward_processing_classes)} entries "
                f"for {len(funcs)} reward functions"
            )
        self.processing_classes = list(reward_processing_classes)
        for func, processing_class, name in zip(funcs, self.processing_classes, self.names):
            if isinstance(func, nn.Module) and processing_class is None:
                raise ValueError(f"reward model {name!r} needs a tokenizer: pass reward_processing_classes")
            if isinstance(func, nn.Module):
                func.eval()
                func.requires_grad_(False)

    def score(
        self,
        prompts: list[Any],
        completions: list[Any],
        completion_ids: list[list[int]],
        columns: dict[str, list[Any]],
    ) -> torch.Tensor:
        """Return ``(N, K)`` float32 rewards; NaN where a function returned ``None``."""
        n = len(completions)
        out = torch.full((n, len(self.funcs)), float("nan"), dtype=torch.float32)
        for k, (func, processing_class, name) in enumerate(
            zip(self.funcs, self.processing_classes, self.names)
        ):
            if isinstance(func, nn.Module):
                out[:, k] = self._score_model(func, processing_class, prompts, completions)
                continue
            try:
                values = func(
                    prompts=prompts, completions=completions, completion_ids=completion_ids, **columns
                )
            except Exception as error:
                raise RewardError(
                    f"reward function {name!r} raised {type(error).__name__}: {error}"
                ) from error
            out[:, k] = _validate(values, n, name)
        return out

    @staticmethod
    def _score_model(
        model: nn.Module, tokenizer: Any, prompts: list[Any], completions: list[Any]
    ) -> torch.Tensor:
        if isinstance(prompts[0], list):  # conversational
            texts = [
                tokenizer.apply_chat_template(prompt + completion, tokenize=False)
                for prompt, completion in zip(prompts, completions)
            ]
        else:
            texts = [prompt + completion for prompt, completion in zip(prompts, completions)]
        previous_side = tokenizer.padding_side
        tokenizer.padding_side = "right"
        try:
            encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        finally:
            tokenizer.padding_side = previous_side
        device = next(model.parameters()).device
        with torch.inference_mode():
            logits = model(**{key: value.to(device) for key, value in encoded.items()}).logits
        return logits[:, 0].float().cpu()


def _validate(values: Any, n: int, name: str) -> torch.Tensor:
    if isinstance(values, torch.Tensor):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise RewardError(
            f"reward function {name!r} returned {type(values).__name__} ({_short(values)}); "
            f"it must return a list of {n} floats (or None)"
        )
    if len(values) != n:
        raise RewardError(f"reward function {name!r} returned {len(values)} rewards for {n} completions")
    result = []
    for i, value in enumerate(values):
        if value is None:
            result.append(math.nan)
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            result.append(float(value))
        else:
            raise RewardError(
                f"reward function {name!r} returned {type(value).__name__} ({_short(value)}) at row {i}; "
                f"each reward must be a float or None"
            )
    return torch.tensor(result, dtype=torch.float32)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
