"""Reference callbacks: the timing and conditional logic that does not belong in Trainer subclasses.

Each callback replaces a kind of ``Trainer`` override (see ``docs/callbacks.md``). Callbacks that add
values to the logs should be registered with :func:`attach` so that the reporting integrations see them.
"""

from __future__ import annotations

from trainwright._extras import require_train_extra

require_train_extra("trainwright.callbacks")

from trainwright.callbacks.checkpoint_extras import CheckpointExtrasCallback
from trainwright.callbacks.checkpoint_guard import (
    CheckpointGuardCallback,
    CheckpointGuardWarning,
    newest_complete_checkpoint,
)
from trainwright.callbacks.completions_log import CompletionsLogCallback
from trainwright.callbacks.control_schedule import ControlScheduleCallback, Schedule
from trainwright.callbacks.freeze_schedule import FreezeRule, FreezeScheduleCallback
from trainwright.callbacks.jsonl_metrics import JSONLMetricsCallback
from trainwright.callbacks.loss_guard import LossGuardCallback
from trainwright.callbacks.memory import MemoryCallback
from trainwright.callbacks.ordering import attach
from trainwright.callbacks.parameter_schedule import ParameterScheduleCallback
from trainwright.callbacks.reference_sync import ReferenceSyncCallback
from trainwright.callbacks.sample_generation import SampleGenerationCallback
from trainwright.callbacks.step_timer import StepTimerCallback
from trainwright.callbacks.wall_clock_budget import WallClockBudgetCallback

__all__ = [
    "CheckpointExtrasCallback",
    "CheckpointGuardCallback",
    "CheckpointGuardWarning",
    "CompletionsLogCallback",
    "ControlScheduleCallback",
    "FreezeRule",
    "FreezeScheduleCallback",
    "JSONLMetricsCallback",
    "LossGuardCallback",
    "MemoryCallback",
    "ParameterScheduleCallback",
    "ReferenceSyncCallback",
    "SampleGenerationCallback",
    "Schedule",
    "StepTimerCallback",
    "WallClockBudgetCallback",
    "attach",
    "newest_complete_checkpoint",
]
