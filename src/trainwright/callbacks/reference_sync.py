"""TR-DPO: the reference policy softly follows the trained policy, and its state survives a resume.

Why a callback: syncing is timing logic tied to the loop's events (after every τ-th optimizer step),
which belongs in ``on_step_end``, not in ``compute_loss``. ``DPOTrainer`` and ``GRPOTrainer`` attach it
from ``sync_ref_model`` (:func:`trainwright.trainers.common.construction.attach_owned_callbacks`); any
``Trainer`` that keeps a reference can attach it too.

Its blended reference is *training state* (it is no longer a copy of the initial policy once a sync
ran), so it is written into every checkpoint and restored on resume; without that, a resumed run would
compute its KL / preference terms against the wrong reference and diverge from the uninterrupted one.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import torch
from torch import nn
from transformers import TrainerControl, TrainerState, TrainingArguments

from trainwright.callbacks.checkpointed import CheckpointedCallback, checkpoint_folder
from trainwright.storage.module_state import full_state_dict, load_full_state_dict, reshard
from trainwright.storage.tensor_files import UNREADABLE, load_tensor_file, refused_global, save_tensor_file


class ReferenceSyncCallback(CheckpointedCallback):
    """Every ``sync_steps`` optimizer steps set ``ref ← alpha·policy + (1−alpha)·ref``, parameter by parameter.

    TR-DPO: Gorbatovski et al. 2024, "Learn Your Reference Model for Real Good Alignment",
    arXiv:2404.09656. α=1 is a hard reset to the current policy. A fixed reference lets the policy drift
    far only at a growing KL cost; updating the reference softly relaxes that constraint over training.

    ``on_step_end`` runs once per optimizer step, after the update, on every process; since
    data-parallel ranks hold identical policies, every rank's reference stays identical too.
    ``on_save`` writes the reference into the checkpoint (:data:`CHECKPOINT_FILE`); the trainers
    restore it on resume (:meth:`load_checkpoint`).
    """

    CHECKPOINT_FILE = "reference_sync.pt"

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
        """Blend ``model``'s parameters into the reference (names must match one to one).

        Under FSDP2 both are sharded the same way, so each process blends its own shards; they are resharded
        first (a unit left gathered after a forward would expose its full tensor instead of its shard).
        """
        reshard(self.ref_model)
        reshard(model)
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

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        folder = checkpoint_folder(args, state)
        state_dict = full_state_dict(self.ref_model)  # under FSDP a collective: every process takes part
        if not args.should_save or not os.path.isdir(folder):
            return
        payload = {"state_dict": state_dict, "num_syncs": self.num_syncs}
        save_tensor_file(payload, os.path.join(folder, self.CHECKPOINT_FILE))

    def load_checkpoint(self, folder: str) -> bool:
        """Restore the blended reference saved in ``folder``; ``False`` (with a warning) when there is none
        or it cannot be used: unreadable, foreign (a pickle naming code), of another model's parameter
        names or shapes, or non-finite (a NaN reference would train the policy to NaN)."""
        path = os.path.join(folder, self.CHECKPOINT_FILE)
        problem = None if os.path.exists(path) else "holds no"
        payload: dict[str, Any] = {}
        if problem is None:
            try:
                payload = load_tensor_file(path)  # never unpickles anything but tensors and plain data
                num_syncs = int(payload["num_syncs"])
                unfit = self.state_problem(payload["state_dict"])
                if unfit is not None:
                    problem = f"has an unusable ({unfit})"
            except UNREADABLE as error:
                foreign = refused_global(error, path)
                problem = (
                    f"has a foreign ({foreign}: not loaded, it could run code)"
                    if foreign
                    else "cannot read its"
                )
        if problem is not None:
            warnings.warn(
                f"{folder} {problem} TR-DPO reference ({self.CHECKPOINT_FILE}, written by trainwright's "
                "ReferenceSyncCallback): the resumed run continues from the reference it was built with, not "
                "the blended one, so it will differ from an uninterrupted run",
                stacklevel=2,
            )
            return False
        load_full_state_dict(self.ref_model, payload["state_dict"])
        self.num_syncs = num_syncs
        return True

    def state_problem(self, state_dict: Any) -> str | None:
        """Why ``state_dict`` cannot be this reference's weights (names, shapes, finite values), or ``None``."""
        if not isinstance(state_dict, dict):
            return f"a {type(state_dict).__name__}, not a state dict"
        expected = {name: tensor.shape for name, tensor in self.ref_model.state_dict().items()}
        if state_dict.keys() != expected.keys():
            differ = sorted(map(str, state_dict.keys() ^ expected.keys()))[:3]
            return f"parameter names differ from the reference model's, e.g. {differ}"
        for name, tensor in state_dict.items():
            if not isinstance(tensor, torch.Tensor) or tensor.shape != expected[name]:
                shape = tuple(tensor.shape) if isinstance(tensor, torch.Tensor) else type(tensor).__name__
                return f"{name} is {shape}, the reference model's is {tuple(expected[name])}"
            if tensor.is_floating_point() and not torch.isfinite(tensor).all():
                return f"{name} holds NaN or infinite values"
        return None


__all__ = ["ReferenceSyncCallback"]
