"""Calling reward functions and reward models, with validation that names the culprit.

Calling convention (TRL 1.16's, so TRL reward functions work unchanged)::

    func(prompts=[...], completions=[...], completion_ids=[[...], ...],
         trainer_state=TrainerState, log_extra=f(column, values), log_metric=f(name, value),
         **every_other_dataset_column)
        -> list of float | None, one per completion

* Conversational data gives ``completions`` as ``[{"role": "assistant", "content": text}]`` per row.
* ``None`` (or NaN) means "this function does not apply to this row": it becomes NaN and the row's
  weighted reward skips it (:func:`trainwright.trainers.grpo.loss.combine_rewards`). An infinite
  reward is an error: it would make every advantage of its group NaN or ±inf.
* ``trainer_state`` is the live ``TrainerState`` (``global_step``, ``max_steps``, ...), for rewards that
  change over training (curricula).
* ``log_extra(column, values)`` adds a column (one value per completion) to the completions table;
  ``log_metric(name, value)`` logs a scalar: its mean over the round (over all processes) enters the
  logging window like the built-in metrics (``eval_``-prefixed in evaluation). See :class:`RewardLog`.
* ``async def`` functions (anything whose call returns an awaitable, e.g. an object with an async
  ``__call__``) are awaited concurrently with each other, on one event loop per scoring call, after the
  synchronous ones: a remote judge or sandbox per function then costs one round trip, not one each.

Reward models: an ``nn.Module`` sequence classifier, or a model id / local folder (loaded as
``AutoModelForSequenceClassification(num_labels=1)`` with ``model_init_kwargs``), scores
``prompt + completion`` (through the chat template for conversational data); its reward is
``logits[:, 0]``. Its tokenizer comes from ``reward_processing_classes``, or from the model's folder.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import math
import numbers
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

RewardFunc = Callable[..., Sequence[float | None]] | nn.Module | str

#: keys of a completions-table row that a ``log_extra`` column may not overwrite
RESERVED_COLUMNS = frozenset({"step", "prompt", "completion", "rewards", "advantage"})


class RewardError(RuntimeError):
    """A reward function failed or returned something unusable (the message names it and the fix)."""


def reward_name(func: RewardFunc) -> str:
    """A readable name: the function's ``__name__`` (through ``functools.partial``), or the model's name."""
    if isinstance(func, nn.Module):
        config = getattr(func, "config", None)
        name = getattr(config, "_name_or_path", "") if config is not None else ""
        return name.rstrip("/").split("/")[-1] if name else type(func).__name__
    while isinstance(func, functools.partial):
        func = func.func
    return getattr(func, "__name__", None) or type(func).__name__


@dataclass
class RewardLog:
    """What reward functions logged during one scoring call (TRL's ``log_extra`` / ``log_metric`` hooks).

    ``extra`` holds completions-table columns (one value per completion of this process); ``metrics``
    every value logged per name (the trainer averages them over the round and all processes).
    """

    num_rows: int
    extra: dict[str, list[Any]] = field(default_factory=dict)
    metrics: dict[str, list[float]] = field(default_factory=dict)

    def log_extra(self, column: str, values: Sequence[Any]) -> None:
        """Add (or replace) the completions-table column ``column``: one value per completion."""
        if not isinstance(column, str) or column in RESERVED_COLUMNS:
            raise ValueError(
                f"log_extra column {column!r}: give a string other than {', '.join(sorted(RESERVED_COLUMNS))}"
            )
        values = list(values)
        if len(values) != self.num_rows:
            raise ValueError(
                f"log_extra({column!r}, ...) got {len(values)} values for {self.num_rows} completions; "
                f"give one value per completion"
            )
        self.extra[column] = values

    def log_metric(self, name: str, value: float) -> None:
        """Log the scalar ``value`` under ``name`` (averaged with the other values of the round)."""
        if isinstance(value, torch.Tensor) and value.numel() == 1:
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"log_metric({name!r}, ...) needs a real number, got {type(value).__name__}")
        self.metrics.setdefault(str(name), []).append(float(value))


def load_reward_models(
    funcs: list[RewardFunc], processing_classes: list[Any], load: Callable[[str, Any], nn.Module]
) -> tuple[list[Any], list[Any]]:
    """Load reward models given as ids / folders, and their tokenizers when none was given (as TRL).

    ``load(model_id, auto_class)`` is the trainer's loader (it applies ``model_init_kwargs``). A reward
    model's pad token is set on its config: classifiers score the last non-pad token.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    funcs, processing_classes = list(funcs), list(processing_classes)
    for k, func in enumerate(funcs):
        if isinstance(func, str):
            funcs[k] = load(func, AutoModelForSequenceClassification)
        module = funcs[k]
        if not isinstance(module, nn.Module) or not hasattr(module, "config"):
            continue
        if processing_classes[k] is None and getattr(module.config, "_name_or_path", ""):
            processing_classes[k] = AutoTokenizer.from_pretrained(module.config._name_or_path)
        tokenizer = processing_classes[k]
        if tokenizer is not None:
            if tokenizer.pad_token_id is None:
                tokenizer.pad_token = tokenizer.eos_token
            module.config.pad_token_id = tokenizer.pad_token_id
    return funcs, processing_classes


class RewardScorer:
    """Holds the reward functions/models and scores a batch of completions into an ``(N, K)`` tensor."""

    def __init__(
        self,
        reward_funcs: RewardFunc | Sequence[RewardFunc],
        reward_weights: Sequence[float] | None = None,
        reward_processing_classes: Any | Sequence[Any] | None = None,
        load: Callable[[str, Any], nn.Module] | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
    ) -> None:
        funcs = list(reward_funcs) if isinstance(reward_funcs, (list, tuple)) else [reward_funcs]
        if not funcs:
            raise ValueError("reward_funcs is empty: pass at least one reward function or reward model")
        for func in funcs:
            if isinstance(func, str) and load is None:
                raise TypeError(f"reward model id {func!r} given, but no loader: pass an nn.Module")
            if not (callable(func) or isinstance(func, (nn.Module, str))):
                raise TypeError(f"reward function {func!r} is neither callable, an nn.Module nor a model id")
        # TRL's convention: None means one per function (loaded from the model's folder); a single
        # tokenizer is a list of one, so its length must match the reward functions like a list's
        if reward_processing_classes is None:
            reward_processing_classes = [None] * len(funcs)
        elif not isinstance(reward_processing_classes, (list, tuple)):
            reward_processing_classes = [reward_processing_classes]
        if len(reward_processing_classes) != len(funcs):
            raise ValueError(
                f"reward_processing_classes has {len(reward_processing_classes)} entries but there are "
                f"{len(funcs)} reward functions: the numbers must match (one tokenizer, or None, per reward "
                f"function, in order)"
            )
        if load is not None:
            funcs, reward_processing_classes = load_reward_models(
                funcs, list(reward_processing_classes), load
            )
        self.funcs = funcs
        self.names = [reward_name(func) for func in funcs]
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        if reward_weights is None:
            reward_weights = [1.0] * len(funcs)
        if len(reward_weights) != len(funcs):
            raise ValueError(
                f"reward_weights has {len(reward_weights)} entries but there are {len(funcs)} "
                f"reward functions "
                f"({', '.join(self.names)})"
            )
        self.weights = torch.tensor([float(w) for w in reward_weights], dtype=torch.float32)
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
        trainer_state: Any = None,
    ) -> tuple[torch.Tensor, RewardLog]:
        """Return ``(N, K)`` float32 rewards (NaN where a function returned ``None``) and what was logged."""
        n = len(completions)
        out = torch.full((n, len(self.funcs)), float("nan"), dtype=torch.float32)
        log = RewardLog(num_rows=n)
        kwargs = {
            **columns,
            "trainer_state": trainer_state,
            "log_extra": log.log_extra,
            "log_metric": log.log_metric,
        }
        pending: list[tuple[int, str, Awaitable[Any]]] = []
        for k, (func, processing_class, name) in enumerate(
            zip(self.funcs, self.processing_classes, self.names)
        ):
            if isinstance(func, nn.Module):
                row_kwargs = columns.get("chat_template_kwargs") or [None] * n
                template_kwargs = [{**self.chat_template_kwargs, **(extra or {})} for extra in row_kwargs]
                out[:, k] = self._score_model(
                    func, processing_class, prompts, completions, name, template_kwargs
                )
                continue
            try:
                values = func(
                    prompts=prompts, completions=completions, completion_ids=completion_ids, **kwargs
                )
            except Exception as error:
                _close(pending)
                raise _wrapped(name, error) from error
            if inspect.isawaitable(values):  # async def: run below, concurrently with the others
                pending.append((k, name, values))
            else:
                try:
                    out[:, k] = _validate(values, n, name)
                except RewardError:
                    _close(pending)
                    raise
        for (k, name, _), values in zip(pending, _run_concurrently(pending)):
            out[:, k] = _validate(values, n, name)
        return out, log

    @staticmethod
    def _score_model(
        model: nn.Module,
        tokenizer: Any,
        prompts: list[Any],
        completions: list[Any],
        name: str,
        chat_template_kwargs: list[dict[str, Any]],
    ) -> torch.Tensor:
        """Score ``prompt + completion`` (through the chat template, with each row's kwargs, for conversations)."""
        if isinstance(prompts[0], list):  # conversational
            texts = [
                tokenizer.apply_chat_template(prompt + completion, tokenize=False, **kwargs)
                for prompt, completion, kwargs in zip(prompts, completions, chat_template_kwargs)
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
        rewards = logits[:, 0].float().cpu()
        if not torch.isfinite(rewards).all():
            row = int((~torch.isfinite(rewards)).nonzero()[0])
            raise RewardError(
                f"reward model {name!r} returned {rewards[row].item()} at row {row}: its weights or inputs are "
                f"broken (check the model and its tokenizer's pad token)"
            )
        return rewards


def _close(pending: list[tuple[int, str, Awaitable[Any]]]) -> None:
    """Close coroutines that will never run (a synchronous function failed first): no "never awaited" warning."""
    for _, _, awaitable in pending:
        close = getattr(awaitable, "close", None)
        if close is not None:
            close()


def _wrapped(name: str, error: Exception) -> RewardError:
    if isinstance(error, RewardError):
        return error
    return RewardError(
        f"reward function {name!r} raised {type(error).__name__}: {error} "
        f"(the error comes from the reward function itself; see the traceback above)"
    )


def _run_concurrently(pending: list[tuple[int, str, Awaitable[Any]]]) -> list[Any]:
    """Await every coroutine of ``pending`` concurrently on a fresh event loop; errors name their function."""
    if not pending:
        return []

    async def named(name: str, awaitable: Awaitable[Any]) -> Any:
        try:
            return await awaitable
        except Exception as error:
            raise _wrapped(name, error) from error

    async def gather() -> list[Any]:
        return list(await asyncio.gather(*(named(name, awaitable) for _, name, awaitable in pending)))

    try:
        asyncio.get_running_loop()
    except RuntimeError:  # the usual case: no loop in this thread
        return asyncio.run(gather())
    # A loop already runs in this thread (a notebook, an async application): asyncio.run would refuse,
    # so run the round's loop in a helper thread and wait for it.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, gather()).result()


def _validate(values: Any, n: int, name: str) -> torch.Tensor:
    if isinstance(values, torch.Tensor):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise RewardError(
            f"reward function {name!r} returned {type(values).__name__} ({_short(values)}); "
            f"it must return a list of {n} floats (or None)"
        )
    if len(values) != n:
        raise RewardError(
            f"reward function {name!r} returned {len(values)} rewards for {n} completions; "
            f"return one float (or None to skip) per completion"
        )
    result = []
    for i, value in enumerate(values):
        if value is None:
            result.append(math.nan)
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            value = float(value)
            if math.isinf(value):
                raise RewardError(
                    f"reward function {name!r} returned {value} at row {i}; rewards must be finite "
                    f"(an infinite reward makes its group's advantages NaN): clip it, or return None to skip "
                    f"the row"
                )
            result.append(value)  # NaN counts as None
        else:
            raise RewardError(
                f"reward function {name!r} returned {type(value).__name__} ({_short(value)}) at row {i}; "
                f"each reward must be a float or None"
            )
    return torch.tensor(result, dtype=torch.float32)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
