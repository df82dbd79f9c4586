"""Plain helpers shared by the callback tests (imported as ``cb_support``; pytest puts this folder on sys.path)."""

from __future__ import annotations

from typing import Any

from transformers import Trainer, TrainerCallback

from trainwright.toy import build_tiny_causal_lm


def tiny_model(tokenizer):
    """The 1-layer, hidden-16 Qwen2 every callback test trains."""
    return build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1)


def train_logs(trainer: Trainer) -> list[dict[str, Any]]:
    """The periodic training log lines (those with ``loss``) from ``state.log_history``."""
    return [entry for entry in trainer.state.log_history if "loss" in entry]


class Recorder(TrainerCallback):
    """Calls ``fn(args, state, control, **kwargs)`` at ``event``; a test probe, not a mock of the Trainer."""

    def __init__(self, event: str, fn) -> None:
        setattr(self, event, lambda args, state, control, **kwargs: fn(args, state, control, **kwargs))


class FakeClock:
    """A clock that only moves when the test says so (deterministic time for budget tests)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class AdvanceClock(TrainerCallback):
    """Advance ``clock`` by ``seconds`` at the start of every optimizer step: each step "takes" that long."""

    def __init__(self, clock: FakeClock, seconds: float) -> None:
        self.clock = clock
        self.seconds = seconds

    def on_step_begin(self, args, state, control, **kwargs):
        self.clock.now += self.seconds
