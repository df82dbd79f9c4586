"""What to do instead: turns catalogue ``Guidance`` (or our fallbacks) into message text.

Reference callbacks are named as strings (``trainwright.callbacks.StepTimerCallback``); the linter
never imports them (that would pull torch into a pre-commit hook).
"""

from __future__ import annotations

import re

from trainwright_lint.analysis import gates as G
from trainwright_lint.analysis import kinds as K
from trainwright_lint.rules.base import ClassContext

CALLBACKS_MODULE = "trainwright.callbacks"

# Events to use for an observing effect, by effect kind (and reference callback).
EFFECT_EVENTS: dict[str, tuple[str, str | None]] = {
    K.LOG: ("on_log", "JSONLMetricsCallback"),
    K.PRINT: ("on_log", None),
    K.TRACKER: ("on_log", "JSONLMetricsCallback"),
    K.FILE: ("on_save", "CheckpointExtrasCallback"),
    K.SAMPLES: ("on_evaluate", "SampleGenerationCallback"),
    K.GC: ("on_step_end", "MemoryCallback"),
    K.CLOCK: ("on_step_begin/on_step_end", "StepTimerCallback"),
    K.PROFILE: ("on_step_begin/on_step_end", "StepTimerCallback"),
    K.SCHEDULE: ("on_step_begin", "ParameterScheduleCallback"),
    K.ACTION: ("on_step_end (set `control.should_evaluate`/`should_save`)", "ControlScheduleCallback"),
    K.RECORD: ("on_log", "JSONLMetricsCallback"),
    K.ATTRIBUTE: ("on_step_end", None),
    K.COUNTER: ("on_step_end", None),
}
_PRIORITY = (K.SAMPLES, K.SCHEDULE, K.ACTION, K.GC, K.CLOCK, K.PROFILE, K.FILE, K.TRACKER, K.RECORD, K.LOG,
             K.PRINT, K.ATTRIBUTE, K.COUNTER)  # fmt: skip

# Method -> the event pair that brackets the same work (TW202).
WRAPPER_EVENTS: dict[str, tuple[str, str | None]] = {
    "training_step": ("on_step_begin -> on_step_end", "StepTimerCallback"),
    "compute_loss": ("on_step_begin -> on_substep_end/on_step_end", "StepTimerCallback"),
    "get_batch_samples": ("on_step_begin", "StepTimerCallback"),
    "evaluate": ("on_step_end (control.should_evaluate) -> on_evaluate", "StepTimerCallback"),
    "evaluation_loop": ("on_step_end (control.should_evaluate) -> on_evaluate", None),
    "prediction_step": ("on_prediction_step", None),
    "predict": ("on_predict", None),
    "log": ("on_log", "JSONLMetricsCallback"),
    "_save_checkpoint": ("on_save", "CheckpointExtrasCallback"),
    "save_model": ("on_save", "CheckpointExtrasCallback"),
    "_save": ("on_save", "CheckpointExtrasCallback"),
    "train": ("on_train_begin -> on_train_end", "StepTimerCallback"),
    "_inner_training_loop": ("on_train_begin -> on_train_end", "StepTimerCallback"),
    "_maybe_log_save_evaluate": ("on_step_end -> on_log/on_evaluate/on_save", "ControlScheduleCallback"),
    "create_optimizer": ("on_train_begin", None),
    "create_scheduler": ("on_train_begin", None),
}

# Fallback advice for private methods the hand-written guidance does not cover yet.
PRIVATE_FALLBACK: dict[str, str] = {
    "_save_checkpoint": "use a TrainerCallback on `on_save` (reference: trainwright.callbacks.CheckpointExtrasCallback)",
    "_save": "use a TrainerCallback on `on_save`, or override the public `save_model`",
    "_maybe_log_save_evaluate": (
        "set `control.should_log/should_evaluate/should_save` in a TrainerCallback's `on_step_end` "
        "(reference: trainwright.callbacks.ControlScheduleCallback), or set `logging_steps`/`eval_steps`/`save_steps`"
    ),
    "_inner_training_loop": "use callbacks for loop events and override `compute_loss`/`training_step` for what is computed",
    "_get_train_sampler": "set `train_sampling_strategy`, or override the public `get_train_dataloader`",
    "_get_eval_sampler": "override the public `get_eval_dataloader`",
    "_prepare_inputs": "use a data collator, or override the public `training_step`/`prediction_step`",
    "_prepare_input": "use a data collator, or override the public `training_step`/`prediction_step`",
    "_load_optimizer_and_scheduler": "pass `optimizers=`/`optimizer_cls_and_kwargs=`, or override `create_optimizer`",
    "_save_optimizer_and_scheduler": "use a TrainerCallback on `on_save`",
    "_set_signature_columns_if_needed": "set `remove_unused_columns=False` and use a data collator",
    "_remove_unused_columns": "set `remove_unused_columns=False` and use a data collator",
    "_evaluate": "override the public `evaluate`, or use `on_evaluate` in a TrainerCallback",
    "_wrap_model": "use the accelerate/FSDP/DeepSpeed configuration arguments",
    "_load_from_checkpoint": "pass `resume_from_checkpoint=` and use `on_train_begin` in a TrainerCallback",
    "_load_best_model": "set `load_best_model_at_end`/`metric_for_best_model`",
    "_run_epoch": "use callbacks (`on_epoch_begin`/`on_step_end`) and override `training_step`",
    "_push_from_checkpoint": "set `push_to_hub`/`hub_strategy`, or use a TrainerCallback on `on_save`/`on_push_begin`",
}

GENERIC_PRIVATE = (
    "override a public method (`compute_loss`, `training_step`, `get_train_dataloader`, `create_optimizer`, `log`, ...) "
    "or use a TrainerCallback event; if neither fits, accept `*args, **kwargs` and pin the transformers range"
)


_EVENT_OR_FLAG = re.compile(r"(?<![`\w.])((?:control\.)?(?:on|should)_[a-z_]+)(?![`\w])")


def quoted_events(text: str) -> str:
    """``on_step_begin -> on_step_end`` as ```on_step_begin` -> `on_step_end```: each event (and
    ``control.should_*`` flag) its own code span, so that a message never puts prose or an arrow
    inside backticks; names already quoted stay as they are."""
    return _EVENT_OR_FLAG.sub(r"`\1`", text)


def reference(callback: str | None) -> str:
    return f" (reference: {CALLBACKS_MODULE}.{callback})" if callback else ""


def alternative(ctx: ClassContext, name: str) -> str:
    """What to do instead of overriding ``name`` (an imperative clause: "override ...", "use ...")."""
    catalog = ctx.catalog
    g = catalog.guidance(name) if catalog is not None else None
    if g is not None and (g.events or g.public_methods or g.arguments):
        parts = []
        if g.public_methods:
            parts.append("override " + " / ".join(f"`{m}`" for m in g.public_methods[:3]))
        if g.events:
            parts.append("use a TrainerCallback on " + " / ".join(f"`{e}`" for e in g.events[:3]))
        if g.arguments:
            plural = "s" if len(g.arguments) > 1 else ""
            parts.append("set the " + " / ".join(f"`{a}`" for a in g.arguments[:3]) + f" argument{plural}")
        text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + ", or " + parts[-1]
        return text + reference(g.callbacks[0] if g.callbacks else None)
    if name in PRIVATE_FALLBACK:
        return PRIVATE_FALLBACK[name]
    alt = getattr(catalog, "alternative", None)
    if callable(alt):
        said: str | None = alt(name)
        if said:
            return said
    return GENERIC_PRIVATE


def effect_reference(kinds: set[str]) -> str | None:
    """The reference callback for observing code of these kinds (a timer's, a tracker's ...)."""
    return EFFECT_EVENTS[next((k for k in _PRIORITY if k in kinds), K.TRACKER)][1]


def event_for_effects(kinds: set[str], gates: frozenset[str]) -> str:
    """Event (and reference callback) for observing code with these kinds, gated on these gates."""
    main = next((k for k in _PRIORITY if k in kinds), K.TRACKER)
    event, callback = EFFECT_EVENTS[main]
    if G.EPOCH in gates and main not in (K.SAMPLES, K.SCHEDULE):
        event = "on_epoch_end"
    elif G.METRIC in gates:
        event = "on_evaluate"
    elif G.TIME in gates and main in (K.ACTION, K.ATTRIBUTE):
        callback = "WallClockBudgetCallback"
    elif gates & {G.STEP, G.ACCUMULATION} and main in (K.LOG, K.RECORD, K.PRINT, K.TRACKER):
        event = "on_step_end or on_log"
    elif gates & {G.STEP, G.ACCUMULATION} and main == K.SAMPLES:  # "every N steps", not "at each evaluation"
        event = "on_step_end"
    return quoted_events(event) + reference(callback)
