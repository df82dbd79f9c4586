"""Freeze / unfreeze parameters by name pattern at given optimizer steps or epochs.

Replaces ``training_step`` / ``_inner_training_loop`` overrides that flip ``requires_grad`` when
``self.state.global_step`` or the epoch reaches a threshold (gradual unfreezing, frozen embeddings
during warm-up, ...).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from torch import nn
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks._logs import add_to_logs, is_training_log

_EPOCH_TOLERANCE = 1e-9


@dataclass(frozen=True)
class FreezeRule:
    """From optimizer step ``step`` (``global_step >= step``) or epoch ``epoch`` on, set the matching parameters.

    ``pattern`` is a shell-style glob on ``model.named_parameters()`` names (``"model.embed_tokens.*"``,
    ``"*.layers.0.*"``). Exactly one of ``step`` / ``epoch`` must be given.
    """

    pattern: str
    freeze: bool
    step: int | None = None
    epoch: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str) or not self.pattern:
            raise ValueError(f"FreezeRule: pattern must be a non-empty glob string, got {self.pattern!r}")
        if (self.step is None) == (self.epoch is None):
            raise ValueError(f"FreezeRule({self.pattern!r}): give exactly one of step= or epoch=")
        if self.step is not None and (not isinstance(self.step, int) or self.step < 0):
            raise ValueError(f"FreezeRule({self.pattern!r}): step must be an integer >= 0, got {self.step!r}")
        if self.epoch is not None and (not isinstance(self.epoch, (int, float)) or self.epoch < 0):
            raise ValueError(f"FreezeRule({self.pattern!r}): epoch must be >= 0, got {self.epoch!r}")

    @classmethod
    def freeze_at(cls, pattern: str, *, step: int | None = None, epoch: float | None = None) -> FreezeRule:
        return cls(pattern, True, step, epoch)

    @classmethod
    def unfreeze_at(cls, pattern: str, *, step: int | None = None, epoch: float | None = None) -> FreezeRule:
        return cls(pattern, False, step, epoch)

    def is_due(self, state: TrainerState) -> bool:
        if self.step is not None:
            return state.global_step >= self.step
        return (state.epoch or 0.0) + _EPOCH_TOLERANCE >= float(self.epoch)  # type: ignore[arg-type]

    def matches(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.pattern)


class FreezeScheduleCallback(TrainerCallback):
    """Apply :class:`FreezeRule` s: set ``requires_grad`` on parameters matching a pattern once a step/epoch is reached.

    Replaces: overrides that toggle ``requires_grad`` from inside the training loop.

    Events: ``on_train_begin`` (validates patterns, applies the rules already due — at step 0, or at the
    resumed step), ``on_epoch_begin`` and ``on_step_begin`` (before the step's forward passes). Each
    time, every due rule is applied in the order given, so the later rule wins for a parameter two
    rules match; the result depends only on the step/epoch, so resuming re-creates the same frozen set.

    The optimizer is built before ``on_train_begin``, from the parameters that required grad *then*:
    freezing here keeps a parameter in the optimizer (a frozen one gets no gradient, and PyTorch
    optimizers skip parameters whose ``grad`` is ``None``), so it can be unfrozen later. A parameter an
    unfreeze rule matches but the optimizer does not hold (it was frozen before the Trainer built its
    optimizer) raises a clear error instead of silently never training. ``freeze/trainable_params``
    (the count of trainable parameters) is added to the training logs.
    """

    def __init__(self, rules: Sequence[FreezeRule]) -> None:
        rules = list(rules)
        if not rules:
            raise ValueError("FreezeScheduleCallback needs at least one FreezeRule")
        for rule in rules:
            if not isinstance(rule, FreezeRule):
                raise TypeError(
                    f"FreezeScheduleCallback: rules must be FreezeRule objects, got {type(rule).__name__}"
                )
        self.rules = rules
        self._model: nn.Module | None = None

    def _validate(self, model: nn.Module, optimizer: Any) -> None:
        names = [name for name, _ in model.named_parameters()]
        for rule in self.rules:
            if not any(rule.matches(name) for name in names):
                examples = ", ".join(names[:5])
                raise ValueError(
                    f"FreezeScheduleCallback: pattern {rule.pattern!r} matches no parameter of "
                    f"{type(model).__name__} (names look like: {examples}, ...)"
                )
        if optimizer is None:
            return
        in_optimizer = {id(p) for group in optimizer.param_groups for p in group["params"]}
        for rule in self.rules:
            if rule.freeze:
                continue
            missing = [
                n for n, p in model.named_parameters() if rule.matches(n) and id(p) not in in_optimizer
            ]
            if missing:
                raise ValueError(
                    f"FreezeScheduleCallback: {len(missing)} parameter(s) that {rule.pattern!r} unfreezes are not in "
                    f"the optimizer (e.g. {missing[0]!r}); they were frozen before the Trainer built its optimizer. "
                    "Leave them trainable and freeze them with a FreezeRule at step 0 instead."
                )

    def apply(self, model: nn.Module, state: TrainerState) -> None:
        """Set ``requires_grad`` from every rule that is due at ``state``."""
        params = list(model.named_parameters())
        for rule in self.rules:
            if rule.is_due(state):
                for name, param in params:
                    if rule.matches(name):
                        param.requires_grad_(not rule.freeze)

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: nn.Module | None = None,
        optimizer: Any = None,
        **kwargs: Any,
    ) -> None:
        if model is None:
            raise ValueError("FreezeScheduleCallback: the Trainer passed no model to on_train_begin")
        self._validate(model, optimizer)
        self._model = model
        self.apply(model, state)

    def on_epoch_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: Any = None,
        **kwargs: Any,
    ) -> None:
        if model is not None:
            self.apply(model, state)

    def on_step_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: Any = None,
        **kwargs: Any,
    ) -> None:
        if model is not None:
            self.apply(model, state)

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        model: Any = None,
        **kwargs: Any,
    ) -> None:
        if logs is not None and is_training_log(logs) and model is not None:
            trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
            add_to_logs(state, logs, {"freeze/trainable_params": trainable})
