"""Build a user's Trainer subclass from what the oracle supplies (child side).

Why: a project's Trainer subclass often has its own ``__init__``: it may take fewer of the Trainer's
keywords (``data_collator`` built inside), a ``TrainingArguments`` subclass of its own (TRL's
``DPOConfig``), or arguments only the project can give (``reward_funcs``, ``prox_mu``). The oracle
passes what the signature accepts, builds ``args`` as the class the signature names, and, when a
required argument is left that the toy run cannot give, stops with an error that names it (the case
is then "not runnable", with that reason), rather than a ``TypeError`` deep in the class.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from typing import Any


class NotRunnable(RuntimeError):
    """The program cannot be trained on the toy model; the message says why."""


def _parameters(cls: type) -> dict[str, inspect.Parameter] | None:
    """``cls.__init__``'s named parameters, or ``None`` when it takes ``**kwargs`` (anything goes)."""
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return dict(params)


def fit(cls: type, kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(accepted, dropped)``: the oracle's keyword arguments ``cls`` takes, and those it does not.
    ``NotRunnable`` when ``cls`` requires an argument the oracle does not supply."""
    params = _parameters(cls)
    if params is None:
        return dict(kwargs), {}
    accepted = {k: v for k, v in kwargs.items() if k in params}
    missing = [
        name
        for name, p in params.items()
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        and name not in accepted
    ]
    if missing:
        raise NotRunnable(
            f"{cls.__name__}.__init__ requires {', '.join(missing)}, which the toy run cannot supply"
        )
    return accepted, {k: v for k, v in kwargs.items() if k not in accepted}


def _annotated(init: Any, base: type) -> type | None:
    """The ``base`` subclass ``init`` annotates ``args`` with, if exactly one."""
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # noqa: BLE001 - an annotation naming what is not importable: look further up
        return None
    annotation = hints.get("args")
    options = typing.get_args(annotation) or (annotation,)
    own = [o for o in options if isinstance(o, type) and issubclass(o, base) and o is not base]
    return own[0] if len(own) == 1 else None


def arguments_class(cls: type, base: type) -> type:
    """The ``TrainingArguments`` subclass the nearest ``__init__`` in ``cls``'s MRO annotates ``args``
    with (TRL's configs), else ``base``. Why the MRO: a project's ``__init__(self, *args, **kwargs)``
    over ``DPOTrainer`` annotates nothing, yet ``DPOTrainer`` reads ``DPOConfig``'s fields."""
    for owner in getattr(cls, "__mro__", (cls,)):
        init = vars(owner).get("__init__")
        found = _annotated(init, base) if init is not None else None
        if found is not None:
            return found
    return base


def build_arguments(arguments: type, values: dict[str, Any]) -> Any:
    """``arguments(**values)``, leaving out the fields the class does not have."""
    fields = {f.name for f in dataclasses.fields(arguments)} if dataclasses.is_dataclass(arguments) else None
    return arguments(**{k: v for k, v in values.items() if fields is None or k in fields})
