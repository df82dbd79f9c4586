"""Checkpoint/resume of callback state that does not depend on ``restore_callback_states_from_checkpoint``.

How transformers persists callback state: every callback that inherits ``ExportableState`` has its
``state()`` written into ``trainer_state.json`` (``stateful_callbacks``, keyed by class name) at each
checkpoint. On resume the loaded ``TrainerState`` carries that dict. Transformers itself only
re-applies it when ``TrainingArguments.restore_callback_states_from_checkpoint=True`` (default
``False``), and then it *re-creates* the callback with ``type(cb)(**args)`` and appends it at the end
of the callback list — which loses non-JSON constructor arguments (callables, tokenizers) and the
callback's position (e.g. before the reporting integrations).

:class:`RestorableState` restores the attributes in place, on the user's own instance, in
``on_train_begin`` (which runs after the checkpoint's ``TrainerState`` is loaded). It works with the
flag off, and is harmless with it on. It also registers the callback in ``stateful_callbacks`` when
the checkpoint was written without it (otherwise transformers raises ``KeyError`` at the next save).
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from transformers import TrainerState
from transformers.trainer_callback import ExportableState

logger = logging.getLogger(__name__)


class RestorableState(ExportableState):
    """Mixin: export ``_state_attributes`` at each checkpoint and restore them in place on resume."""

    #: names of the attributes that make up the callback's state (JSON-serialisable values)
    _state_attributes: ClassVar[tuple[str, ...]] = ()

    def _state_args(self) -> dict[str, Any]:
        """JSON-serialisable constructor arguments (used by transformers' own re-creation path)."""
        return {}

    def state(self) -> dict[str, Any]:
        return {
            "args": self._state_args(),
            "attributes": {name: getattr(self, name) for name in self._state_attributes},
        }

    def restore_state(self, state: TrainerState) -> bool:
        """Copy this class's saved attributes from ``state.stateful_callbacks``; True if something was restored."""
        if state.stateful_callbacks is None:
            state.stateful_callbacks = {}  # type: ignore[assignment]  # see below
        # Typed ``list[TrainerCallback] | None``; TrainerState.__post_init__ makes it a dict by class name.
        stored: dict[str, Any] = state.stateful_callbacks  # type: ignore[assignment]
        saved = stored.get(type(self).__name__)
        if saved is None:
            # Resuming from a checkpoint written without this callback: transformers 5.24's
            # _save_checkpoint indexes stateful_callbacks[class name] and would raise KeyError at the
            # next save, so register an entry for it now.
            stored[type(self).__name__] = self.state()
            return False
        if isinstance(saved, list):
            matches = [entry for entry in saved if entry.get("args", {}) == self._state_args()]
            if len(matches) != 1:
                logger.warning(
                    "%s: the checkpoint holds %d saved states for this class and %d match this instance's "
                    "arguments; not restoring. Give each instance distinct arguments.",
                    type(self).__name__,
                    len(saved),
                    len(matches),
                )
                return False
            saved = matches[0]
        attributes = saved.get("attributes", {})
        for name in self._state_attributes:
            if name in attributes:
                setattr(self, name, attributes[name])
        return True
