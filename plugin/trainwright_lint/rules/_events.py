"""Helpers for the callback rules: which ``on_*`` methods are events, and the closest real event."""

from __future__ import annotations

from trainwright_lint.analysis.moves import Proof, called_on_a_name, calls_directly, events_in, prove
from trainwright_lint.rules.base import ClassContext

# Hand-picked replacements for events people expect but transformers never had.
NEAR_MISSES: dict[str, str] = {
    "on_batch_begin": "on_step_begin",
    "on_batch_end": "on_step_end",
    "on_train_batch_begin": "on_step_begin",
    "on_train_batch_end": "on_step_end",
    "on_evaluate_begin": "on_step_end (check `control.should_evaluate`)",
    "on_evaluation_begin": "on_step_end (check `control.should_evaluate`)",
    "on_evaluate_end": "on_evaluate",
    "on_validation_end": "on_evaluate",
    "on_validation_begin": "on_step_end (check `control.should_evaluate`)",
    "on_save_begin": "on_step_end (check `control.should_save`)",
    "on_checkpoint": "on_save",
    "on_prediction_begin": "on_prediction_step",
    "on_predict_begin": "on_prediction_step",
    "on_backward_end": "on_pre_optimizer_step",
    "on_after_backward": "on_pre_optimizer_step",
    "on_before_optimizer_step": "on_pre_optimizer_step",
    "on_loss": "on_log (logs['loss'])",
    "on_init_begin": "on_init_end",
    "on_fit_start": "on_train_begin",
    "on_fit_end": "on_train_end",
    "on_train_start": "on_train_begin",
    "on_epoch_start": "on_epoch_begin",
    "on_step_start": "on_step_begin",
}


def is_event_name(ctx: ClassContext, name: str) -> bool:
    """An event at the target release or at any catalogued one."""
    if ctx.view is not None and name in ctx.view.events:
        return True
    return ctx.catalog is not None and ctx.catalog.event_history(name) is not None


def closest_event(ctx: ClassContext, name: str) -> str | None:
    if name in NEAR_MISSES:
        return NEAR_MISSES[name]
    import difflib  # here: only a misspelt event needs it, and every lint run imports this module

    events = list(ctx.view.events) if ctx.view is not None else []
    match = difflib.get_close_matches(name, events, n=1, cutoff=0.6)
    return match[0] if match else None


def proven_move(ctx: ClassContext, method: str, events_text: str) -> Proof:
    """Whether moving ``method``'s statements to the events ``events_text`` names keeps them running
    wherever the method runs (``analysis.moves``): on every call path of every release of the target
    range, and where this file calls the method itself."""
    releases = ctx.releases or ((ctx.target,) if ctx.target else ())
    events = events_in(events_text)
    # a name right before ``.m(`` (``self.m(``, ``trainer.m(``), not ``super().m(``: only then walk the tree
    direct = called_on_a_name(ctx.unit.source, method) and calls_directly(
        ctx.unit.source, ctx.unit.line_starts, ctx.unit.tree, ctx.node, method, events
    )
    return prove(method, events, releases, direct)
