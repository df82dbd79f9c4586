"""Add values to a Trainer log line so that they reach ``state.log_history`` and later callbacks.

Why this exists: ``Trainer.log`` appends a *copy* of ``logs`` to ``state.log_history`` before it calls
``on_log``, so a callback that only does ``logs[key] = value`` changes what later callbacks see but
not the history saved in ``trainer_state.json``. :func:`add_to_logs` updates both. Reporting
integrations (W&B, TensorBoard, ...) read ``logs`` in their own ``on_log``; they only see the added
values if the callback runs before them — see :func:`trainwright.callbacks.attach`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from transformers import TrainerState


def is_training_log(logs: Mapping[str, Any]) -> bool:
    """True for the periodic training log line (it has ``loss``); False for eval lines and the final summary."""
    return "loss" in logs


def add_to_logs(state: TrainerState, logs: dict[str, Any], values: Mapping[str, Any]) -> None:
    """Add ``values`` to ``logs`` and to the ``state.log_history`` entry written for the same log call."""
    if not values:
        return
    entry = state.log_history[-1] if state.log_history else None
    if entry is not None and entry.get("step") == state.global_step and all(key in entry for key in logs):
        entry.update(values)
    logs.update(values)


def is_finite_number(value: Any) -> bool:
    """True for an int/float (or 0-d tensor converted to float) that is neither NaN nor infinite."""
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False
