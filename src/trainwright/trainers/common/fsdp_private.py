"""The one module that reads or sets private torch FSDP2 and accelerate state, and the check that it still can.

Why confined: two things have no public API on the pinned releases (torch 2.13, accelerate 1.15):

* FSDP2 has a setter for ``reshard_after_forward`` and no getter. Generation keeps a sharded policy gathered
  and must put each unit's setting back afterwards, so it reads the setting from the unit's FSDP state
  (``FSDPModule._get_fsdp_state()``, ``FSDPState._fsdp_param_groups`` / ``_auto_reshard_after_forward``,
  ``FSDPParamGroup.post_forward_mesh_info``).
* accelerate selects FSDP on GPU processes only; on CPU processes (gloo) the trainers set the state accelerate
  would have set on GPUs (``AcceleratorState.fsdp_plugin``, ``distributed_type`` on it and on ``PartialState``).

Everything else in :mod:`trainwright.trainers.common.distributed` goes through public APIs. :func:`missing_internals`
lists what these two need and is missing on the installed releases; the functions here raise a named
``RuntimeError`` built from it instead of an ``AttributeError`` deep in a step, and a test asserts the list is
empty, so a release that changes the internals fails that test loudly, naming the attribute.
"""

from __future__ import annotations

import inspect
from typing import Any

from torch import nn


def missing_internals() -> list[str]:
    """The private names this module relies on that the installed torch / accelerate lack (``[]``: all there)."""
    missing: list[str] = []
    try:
        from torch.distributed.fsdp import FSDPModule
        from torch.distributed.fsdp._fully_shard._fsdp_param_group import FSDPParamGroup
        from torch.distributed.fsdp._fully_shard._fsdp_state import FSDPState
    except ImportError as error:
        return [f"torch FSDP2 modules ({error})"]
    if not hasattr(FSDPModule, "_get_fsdp_state"):
        missing.append("torch FSDPModule._get_fsdp_state")
    state = FSDPState()
    missing += [f"torch FSDPState.{name}" for name in ("_fsdp_param_groups", "_auto_reshard_after_forward")
                if not hasattr(state, name)]  # fmt: skip
    if "self.post_forward_mesh_info" not in inspect.getsource(FSDPParamGroup.__init__):
        missing.append("torch FSDPParamGroup.post_forward_mesh_info")
    from accelerate.state import AcceleratorState, PartialState

    for cls, name in ((AcceleratorState, "fsdp_plugin"), (AcceleratorState, "distributed_type"),
                      (PartialState, "distributed_type")):  # fmt: skip
        if name not in inspect.getsource(cls):
            missing.append(f"accelerate {cls.__name__}.{name}")
    return missing


def _require(what: str) -> None:
    missing = missing_internals()
    if missing:
        raise RuntimeError(
            f"{what} relies on private torch/accelerate state that the installed releases no longer have "
            f"({', '.join(missing)}); trainwright needs an update for them (see trainwright.trainers.common.fsdp_private)"
        )


def reshards_after_forward(unit: nn.Module, is_root: bool) -> bool:
    """Whether the FSDP2 ``unit`` reshards after forward (FSDP2 has the setter, not this getter).

    The value is whether the unit's parameter groups have a post-forward mesh (None: stay gathered after
    forward). A root left on "auto" (accelerate does that) resolves to False at its first forward, which may
    not have happened yet: report what it will be."""
    try:
        state = unit._get_fsdp_state()  # type: ignore[operator]
        if is_root and state._auto_reshard_after_forward:
            return False
        return any(group.post_forward_mesh_info is not None for group in state._fsdp_param_groups)
    except AttributeError:
        _require("keeping an FSDP2 policy gathered for generation")
        raise


def force_fsdp_state(accelerator: Any, partial_state: Any, plugin: Any, distributed_type: Any) -> None:
    """Set on CPU processes the FSDP state accelerate sets on GPUs (accelerate/state.py, the branch that sets
    ``DistributedType.FSDP``). ``AcceleratorState`` copies ``PartialState``'s ``distributed_type`` each time an
    ``Accelerator`` is created, so both are set."""
    _require("FSDP2 on CPU processes")
    if accelerator.state.mixed_precision != "no":
        plugin.set_mixed_precision(accelerator.state.mixed_precision)
    accelerator.state.fsdp_plugin = plugin
    accelerator.state.distributed_type = distributed_type
    partial_state.distributed_type = distributed_type
