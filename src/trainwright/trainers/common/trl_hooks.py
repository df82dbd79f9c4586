"""A subclass that overrides a TRL trainer method our trainers never call: a named warning at construction.

Why: a TRL script ported by changing its import keeps its subclass, and an override of, say, TRL's private
``_generate_and_score_completions`` then runs on our trainer without ever being called, silently: the
import-swap promise breaks for exactly the code the linter exists to catch. The names come from the TRL
catalogue (every method TRL's ``GRPOTrainer`` / ``DPOTrainer`` had in a covered release); a name our trainer
has too is overridden for real and is fine. The catalogue is read only when a subclass defines a name our
trainer lacks, so constructing a plain trainer costs nothing.
"""

from __future__ import annotations

import warnings

from trainwright.catalog.loader import load_catalog

_GENERATION = (
    "pass generation_backend= (a trainwright GenerationBackend) to change how completions are produced, "
    "and reward_funcs= to change how they are scored"
)
#: the public way to do what an override of each TRL method did; other names get the porting guide
PUBLIC_HOOKS = {
    "_generate_and_score_completions": _GENERATION,
    "_generate": _GENERATION,
    "_generate_single_turn": _GENERATION,
    "_tool_call_loop": _GENERATION,
    "_calculate_rewards": "pass reward_funcs= (functions or reward models; log_extra / log_metric add columns)",
    "_compute_loss": "override compute_loss(model, inputs, return_outputs, num_items_in_batch)",
    "compute_liger_loss": "override compute_loss(model, inputs, return_outputs, num_items_in_batch)",
    "dpo_loss": "choose loss_type= (and loss_weights=), or override compute_loss",
    "get_batch_loss_metrics": "override compute_loss, or add metrics with a callback's on_log",
    "concatenated_forward": "override compute_loss",
}
_GUIDE = "see 'Porting a TRL script' in trainwright's docs/trainers.md for the public equivalent"


class UnusedTRLOverrideWarning(UserWarning):
    """A subclass overrides a TRL trainer method that trainwright's trainer never calls."""


def unused_trl_overrides(cls: type, base: type, trl_class: str) -> list[str]:
    """Methods defined by ``cls`` (outside trainwright, below ``base``) that TRL's ``trl_class`` has and
    ``base`` lacks: overrides that would never be called."""
    defined: set[str] = set()
    for klass in cls.__mro__:
        if klass is base:
            break
        if klass.__module__.split(".")[0] == "trainwright":
            continue
        defined.update(name for name, value in vars(klass).items() if _is_method(value))
    candidates = {name for name in defined if not name.startswith("__") and not hasattr(base, name)}
    if not candidates:
        return []
    return sorted(candidates & set(load_catalog("trl").method_names(trl_class)))


def _is_method(value: object) -> bool:
    return callable(value) or isinstance(value, (staticmethod, classmethod, property))


def warn_unused_trl_overrides(cls: type, base: type, trl_class: str) -> None:
    """One :class:`UnusedTRLOverrideWarning` per override that would never be called, naming what to use."""
    for name in unused_trl_overrides(cls, base, trl_class):
        warnings.warn(
            f"{cls.__name__}.{name} overrides a method of TRL's {trl_class} that trainwright's {base.__name__} "
            f"never calls, so this override has no effect: {PUBLIC_HOOKS.get(name, _GUIDE)}",
            UnusedTRLOverrideWarning,
            stacklevel=4,
        )
