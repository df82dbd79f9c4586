"""Register callbacks so that what they add to ``logs`` reaches the reporting integrations.

Why: ``Trainer.__init__`` builds its callback list as ``[DefaultFlowCallback, <report_to
integrations>, <your callbacks>, PrinterCallback/ProgressCallback]`` and ``on_log`` runs them in that
order, so W&B / TensorBoard / MLflow have already sent a log line when a callback passed with
``Trainer(callbacks=[...])`` adds a value to it. :func:`attach` inserts the callbacks right after
``DefaultFlowCallback``, before the integrations. It only reorders the public
``trainer.callback_handler.callbacks`` list; no Trainer method is overridden.
"""

from __future__ import annotations

from transformers import DefaultFlowCallback, Trainer, TrainerCallback


def attach(trainer: Trainer, *callbacks: TrainerCallback) -> None:
    """Insert ``callbacks`` (in order) right after ``DefaultFlowCallback``, moving them if already present."""
    for callback in callbacks:
        if isinstance(callback, type):
            raise TypeError(f"attach() needs callback instances, got the class {callback.__name__}")
        if not isinstance(callback, TrainerCallback):
            raise TypeError(f"attach() needs TrainerCallback instances, got {type(callback).__name__}")
    handler_callbacks = trainer.callback_handler.callbacks
    for callback in callbacks:
        if any(existing is callback for existing in handler_callbacks):
            handler_callbacks.remove(callback)
    flow_positions = [i for i, cb in enumerate(handler_callbacks) if isinstance(cb, DefaultFlowCallback)]
    index = flow_positions[-1] + 1 if flow_positions else 0
    handler_callbacks[index:index] = list(callbacks)
