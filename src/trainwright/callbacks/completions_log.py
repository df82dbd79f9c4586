"""GRPO completions table: moved to :mod:`trainwright.trainers.owned_callbacks` (the trainers' own callbacks).

Kept so that ``trainwright.callbacks.completions_log.CompletionsLogCallback`` keeps working.
"""

from __future__ import annotations

from trainwright.trainers.owned_callbacks import CompletionsLogCallback

__all__ = ["CompletionsLogCallback"]
