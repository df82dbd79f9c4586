"""Token entropies in the GRPO loss: the high-entropy token mask and the entropy-bonus controller.

* ``top_entropy_quantile`` ρ ("Beyond the 80/20 Rule", Wang et al. 2025, arXiv:2506.01939): only the
  tokens whose entropy reaches the (1 − ρ) quantile of the micro-batch's active tokens (pooled over all
  processes) enter the policy loss; the forks of a reasoning path are where RL learns.
  :func:`high_entropy_mask` is the rule; ``GRPOTrainer.get_high_entropy_mask`` pools the processes.
* ``entropy_coef`` c: the loss subtracts ``c · H̄`` (:mod:`.loss`). With ``use_adaptive_entropy``
  (Skywork-OR1, He et al. 2025, arXiv:2505.22312) :class:`EntropyController` moves c after every
  optimizer step: ``c ← min(c + δ, c_max)`` while the step's entropy ``H`` (token-weighted over the
  whole accumulation window and all processes) is at or below ``entropy_target``, else
  ``c ← max(c − δ, c_min)``; the bonus only applies while the last measured ``H ≤ entropy_target``
  (none before the first measurement). Every micro-batch of a window sees the same c.

Why a callback: the controller updates once per optimizer step, which is ``on_step_end``'s job, not
``compute_loss``'s; and its state is training state, so it is written into every checkpoint and
restored on resume (:class:`.callbacks.EntropyControlCallback`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch


def high_entropy_mask(
    entropies: torch.Tensor, mask: torch.Tensor, pooled: torch.Tensor, quantile: float
) -> torch.Tensor:
    """Bool (B, T): active tokens whose entropy is at least the ``quantile`` of ``pooled``.

    ``pooled`` holds the entropies of the active tokens of every process (1-D). No active token
    anywhere gives an all-False mask.
    """
    if pooled.numel() == 0:
        return torch.zeros_like(entropies, dtype=torch.bool)
    threshold = torch.quantile(pooled.float(), quantile)
    return (entropies >= threshold) & mask.bool()


class EntropyController:
    """The entropy-bonus coefficient: constant, or adapted once per optimizer step (module docstring)."""

    def __init__(
        self,
        coef: float,
        *,
        adaptive: bool = False,
        target: float = 0.2,
        delta: float = 0.005,
        coef_min: float = 0.0,
        coef_max: float = 1.0,
    ) -> None:
        self.coef = float(coef)
        self.adaptive = adaptive
        self.target = target
        self.delta = delta
        self.coef_min = coef_min
        self.coef_max = coef_max
        self.last_entropy = math.inf  # no measurement yet: the adaptive bonus waits for one
        self._window: torch.Tensor | None = None  # [Σ H·M, Σ M] of this accumulation window

    def applied_coef(self) -> float:
        """The coefficient every micro-batch of the current window uses."""
        if self.adaptive and self.last_entropy > self.target:
            return 0.0
        return self.coef

    def record(self, entropy_sum: torch.Tensor, token_count: torch.Tensor) -> None:
        """Add one training micro-batch's ``Σ H·M'`` and ``Σ M'`` to the window (adaptive mode only)."""
        if not self.adaptive:
            return
        stats = torch.stack([entropy_sum.detach().float(), token_count.detach().float()])
        self._window = stats if self._window is None else self._window + stats

    def end_step(self, reduce_sum: Callable[[torch.Tensor], torch.Tensor]) -> None:
        """After an optimizer step: pool the window over processes (``reduce_sum``) and move ``coef``."""
        if not self.adaptive or self._window is None:
            return
        total, count = reduce_sum(self._window).tolist()
        self._window = None
        self.last_entropy = total / max(count, 1.0)
        if self.last_entropy <= self.target:
            self.coef = min(self.coef + self.delta, self.coef_max)
        else:
            self.coef = max(self.coef - self.delta, self.coef_min)

    def state_dict(self) -> dict[str, float]:
        return {"entropy_coef": self.coef, "last_world_entropy": self.last_entropy}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.coef = float(state["entropy_coef"])
        self.last_entropy = float(state["last_world_entropy"])
