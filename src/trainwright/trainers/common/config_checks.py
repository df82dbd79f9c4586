"""Checks shared by ``GRPOConfig`` and ``DPOConfig``, run when a config is constructed.

Two kinds of bad input are refused here, before a model is loaded:

* **TRL options trainwright lacks** (``use_vllm``, ``f_divergence_type``, ...): refused by name with the
  reason from :mod:`trainwright.trainers.common.trl_fields`. The check sits in ``__new__`` because the
  dataclass-generated ``__init__`` would otherwise reject them first, with Python's anonymous
  ``unexpected keyword argument``; ``__new__`` receives the same keywords and runs before it.
* **Non-finite numbers**: ``beta=nan`` passes ``beta <= 0`` checks (every comparison with NaN is False)
  and then trains the weights to NaN while the logged loss may read 0.0. Every float field (and every
  entry of a list of floats, e.g. ``reward_weights``) must be finite. A float field given as a string
  (``learning_rate="nan"``, or ``1e-4`` read by YAML as the string ``"1e-4"``) is refused by name: it
  would otherwise end in an anonymous ``TypeError`` from the scheduler. A 0-d tensor is accepted as its
  number, as TRL accepts ``beta=torch.tensor(0.1)``, and stored as a ``float``.

Construction is not the only moment: a config is a mutable object (``args.beta = float("nan")`` after
``DPOConfig()``, or a ``ParameterScheduleCallback`` annealing ``beta`` every step). So the knobs a loss
reads are checked again where it reads them (:func:`finite_knob`), every time.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from typing import Any, ClassVar

from trainwright.trainers.common.trl_fields import TRLField, refuse_unsupported_trl_options

#: float fields where +inf has a meaning (``max_grad_norm=inf``: report the gradient norm, never clip)
INFINITY_ALLOWED = frozenset({"max_grad_norm"})


def as_number(value: Any) -> float | None:
    """``value`` as a float when it is a real number or a one-element 0-d tensor / array, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if getattr(value, "ndim", None) == 0 and hasattr(value, "item"):  # torch / numpy scalars, no import
        item = value.item()
        if isinstance(item, numbers.Real) and not isinstance(item, bool):
            return float(item)
    return None


def _bad_number(value: float, name: str) -> bool:
    if math.isnan(value):
        return True
    return math.isinf(value) and not (name in INFINITY_ALLOWED and value > 0)


def _not_finite(owner: str, name: str, value: Any) -> ValueError:
    return ValueError(
        f"{owner}: {name}={value!r} is not a finite number; NaN or infinity would turn the training into "
        f"NaN (often while the logs still look normal). Give a finite value."
    )


def _is_float_field(spec: dataclasses.Field) -> bool:  # type: ignore[type-arg]
    annotation = spec.type if isinstance(spec.type, str) else getattr(spec.type, "__name__", "")
    return annotation in ("float", "float | None", "Optional[float]")


def check_finite_fields(config: Any) -> None:
    """Raise ``ValueError`` naming the first dataclass field (or list entry) that is NaN or infinite, or a
    float field that holds no number (a string); store 0-d tensors as floats."""
    owner = type(config).__name__
    for spec in dataclasses.fields(config):
        value = getattr(config, spec.name, None)
        number = as_number(value)
        if number is not None:
            if _bad_number(number, spec.name):
                raise _not_finite(owner, spec.name, value)
            if not isinstance(value, numbers.Real):
                setattr(config, spec.name, number)  # a 0-d tensor: its number (TRL accepts one too)
        elif value is not None and _is_float_field(spec):
            raise ValueError(
                f"{owner}: {spec.name}={value!r} is a {type(value).__name__}, not a number; give a float "
                f"(a YAML file reads 1e-4 without a dot or a sign in the exponent as the string '1e-4')"
            )
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                item_number = as_number(item)
                if item_number is not None and _bad_number(item_number, spec.name):
                    raise ValueError(
                        f"{owner}: {spec.name}[{i}]={item!r} is not a finite number; give finite values only"
                    )


def finite_knob(config: Any, name: str, minimum: float | None = None, strict: bool = False) -> float:
    """``config.<name>`` as a float, checked where a loss reads it: finite (a 0-d tensor counts as its
    number) and, when ``minimum`` is given, ``>= minimum`` (``> minimum`` with ``strict``). The error names
    the knob and says it changed since the config was built, since construction checked it."""
    value = getattr(config, name)
    number = as_number(value)
    owner = type(config).__name__
    if number is None or _bad_number(number, name):
        raise ValueError(
            f"{owner}.{name} is {value!r} where the loss reads it (set after the config was built, or by a "
            f"schedule?): it must be a finite number, or the training turns into NaN"
        )
    if minimum is not None and (number <= minimum if strict else number < minimum):
        raise ValueError(
            f"{owner}.{name} is {value!r} where the loss reads it (set after the config was built, or by a "
            f"schedule?): it must be {'>' if strict else '>='} {minimum:g}"
        )
    return number


class TRLCompatibleConfig:
    """Mixin for the trainers' ``TrainingArguments`` subclasses (see the module docstring).

    Subclasses set ``trl_config_name`` to the TRL class they stand in for ("GRPOConfig" / "DPOConfig"),
    ``trl_fields`` to that class's field table (:mod:`trainwright.trainers.common.trl_fields`)
    and call :func:`check_finite_fields` first thing in ``__post_init__``.
    """

    trl_config_name: ClassVar[str]
    trl_fields: ClassVar[Mapping[str, TRLField]]

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        refuse_unsupported_trl_options(cls.trl_config_name, cls.trl_fields, kwargs)
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
