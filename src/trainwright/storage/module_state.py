"""A module's whole state, FSDP2-sharded or not: what a checkpoint file needs to hold.

Why here and not with the trainers' FSDP set-up (:mod:`trainwright.trainers.common.distributed`): the TR-DPO
callback (:mod:`trainwright.callbacks.reference_sync`) saves and restores its reference with these, and
callbacks must not import the trainers. A full (unsharded) state dict gathered from all ranks is what
makes a checkpoint written under FSDP resume under FSDP, DDP or one process alike.
"""

from __future__ import annotations

import torch
from torch import nn


def fsdp_modules(module: nn.Module) -> list[nn.Module]:
    """The FSDP2 units in ``module`` (root first), or ``[]`` when it is not sharded."""
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:  # pragma: no cover - torch without FSDP2
        return []
    return [sub for sub in module.modules() if isinstance(sub, FSDPModule)]


def reshard(module: nn.Module) -> None:
    """Free the gathered parameters of every FSDP2 unit in ``module`` (local, no communication)."""
    for unit in fsdp_modules(module):
        unit.reshard()


def full_state_dict(module: nn.Module) -> dict[str, torch.Tensor]:
    """``module``'s state dict as whole CPU tensors.

    For an FSDP2 module this gathers the shards: it is a collective, so every process must call it (the
    result is complete on rank 0, empty elsewhere).
    """
    if not fsdp_modules(module):
        return {k: v.detach().cpu() for k, v in module.state_dict().items()}
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    reshard(module)
    return get_model_state_dict(module, options=StateDictOptions(full_state_dict=True, cpu_offload=True))


def load_full_state_dict(module: nn.Module, state_dict: dict[str, torch.Tensor]) -> None:
    """Load whole tensors (as :func:`full_state_dict` returns them) into ``module``, sharded or not.

    For an FSDP2 module every process must call it with the same full state dict."""
    if not fsdp_modules(module):
        module.load_state_dict(state_dict)
        return
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    reshard(module)
    set_model_state_dict(module, state_dict, options=StateDictOptions(full_state_dict=True))


__all__ = ["fsdp_modules", "full_state_dict", "load_full_state_dict", "reshard"]
