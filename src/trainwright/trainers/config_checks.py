"""Checks shared by ``GRPOConfig`` and ``DPOConfig``, run when a config is constructed.

Two kinds of bad input are refused here, before a model is loaded:

* **TRL options trainwright lacks** (``use_vllm``, ``f_divergence_type``, ...): refused by name with the
  reason from :mod:`trainwright.trainers.trl_fields`. The check sits in ``__new__`` because the
  dataclass-generated ``__init__`` would otherwise reject them first, with Python's anonymous
  ``unexpected keyword argument``; ``__new__`` receives the same keywords and runs before it.
* **Non-finite numbers**: ``beta=nan`` passes ``beta <= 0`` checks (every comparison with NaN is False)
  and then trains the weights to NaN while the logged loss may read 0.0. Every float field (and every
  entry of a list of floats, e.g. ``reward_weights``) must be finite.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, ClassVar

from trainwright.trainers.trl_fields import refuse_unsupported_trl_options

#: float fields where +inf has a meaning (``max_grad_norm=inf``: report the gradient norm, never clip)
INFINITY_ALLOWED = frozenset({"max_grad_norm"})


def _bad_number(value: Any, name: str) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    value = float(value)
    if math.isnan(value):
        return True
    return math.isinf(value) and not (name in INFINITY_ALLOWED and value > 0)


def check_finite_fields(config: Any) -> None:
    """Raise ``ValueError`` naming the first dataclass field (or list entry) that is NaN or infinite."""
    for spec in dataclasses.fields(config):
        value = getattr(config, spec.name, None)
        if _bad_number(value, spec.name):
            raise ValueError(
                f"{type(config).__name__}: {spec.name}={value!r} is not a finite number; NaN or infinity would "
                f"turn the training into NaN (often while the logs still look normal). Give a finite value."
            )
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if _bad_number(item, spec.name):
                    raise ValueError(
                        f"{type(config).__name__}: {spec.name}[{i}]={item!r} is not a finite number; "
                        f"give finite values only"
                    )


class TRLCompatibleConfig:
    """Mixin for the trainers' ``TrainingArguments`` subclasses (see the module docstring).

    Subclasses set ``trl_config_name`` to the TRL class they stand in for ("GRPOConfig" / "DPOConfig")
    and call :func:`check_finite_fields` first thing in ``__post_init__``.
    """

    trl_config_name: ClassVar[str]

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        refuse_unsupported_trl_options(cls.trl_config_name, kwargs)
        return super().__new__(cls)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    """Raise ``ValueError`` naming ``name`` when ``value`` is not one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not supported; choose one of {', '.join(choices)}")


def check_sync_settings(alpha: float, sync_steps: int) -> None:
    """TR-DPO's ``ref_model_mixup_alpha`` in (0, 1] and ``ref_model_sync_steps`` >= 1."""
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"ref_model_mixup_alpha must be in (0, 1], got {alpha}")
    if sync_steps < 1:
        raise ValueError(f"ref_model_sync_steps must be >= 1, got {sync_steps}")
