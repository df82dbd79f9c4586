"""TR-DPO: move the reference model towards the policy every few optimizer steps.

Gorbatovski et al. 2024, "Learn Your Reference Model for Real Good Alignment", arXiv:2404.09656:
every ``τ`` steps, ``θ_ref ← α·θ + (1−α)·θ_ref`` (α=1 is a hard reset to the current policy). A
fixed reference lets the policy drift far only at a growing KL cost; updating the reference softly
relaxes that constraint over training.

Why a callback: the decision "is this a sync step?" is timing logic that belongs to the training
loop's events, not to ``compute_loss``. ``on_step_end`` runs once per optimizer step, after the update,
on every process; since data-parallel ranks hold identical policies, every rank's copy of the
reference stays identical too.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments


class ReferenceSyncCallback(TrainerCallback):
    """Every ``sync_steps`` optimizer steps set ``ref ← alpha·policy + (1−alpha)·ref``, parameter by parameter."""

    def __init__(self, ref_model: nn.Module, alpha: float = 0.6, sync_steps: int = 512) -> None:
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {alpha}")
        if sync_steps < 1:
            raise ValueError(f"sync_steps must be >= 1, got {sync_steps}")
        self.ref_model = ref_model
        self.alpha = alpha
        self.sync_steps = sync_steps
        self.num_syncs = 0

    @torch.no_grad()
    def sync(self, model: nn.Module) -> None:
        """Blend ``model``'s parameters into the reference (names must match one to one)."""
        ref_params = dict(self.ref_model.named_parameters())
        policy_params = dict(model.named_parameters())
        if ref_params.keys() != policy_params.keys():
            missing = sorted(ref_params.keys() ^ policy_params.keys())[:5]
            raise ValueError(
                f"reference and policy parameters differ (e.g. {missing}); TR-DPO needs the same architecture"
            )
        for name, ref_param in ref_params.items():
            ref_param.mul_(1.0 - self.alpha).add_(
                policy_params[name].detach().to(ref_param.dtype), alpha=self.alpha
            )
        self.num_syncs += 1

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        model = kwargs.get("model")
        if model is not None and state.global_step % self.sync_steps == 0:
            self.sync(model)
