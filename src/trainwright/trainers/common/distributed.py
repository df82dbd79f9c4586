"""FSDP2 for the reference trainers: the policy, the reference model, generation and checkpoints.

The policy is sharded by accelerate's FSDP plugin, through ``Trainer``'s own FSDP code path (``accelerate
launch --config_file examples/accelerate/fsdp2.yaml``, or ``fsdp=True, fsdp_config={"version": 2}``).
What the trainers add, and why:

* **CPU runs** (:func:`enable_fsdp_on_cpu`). accelerate 1.15 keeps FSDP only for accelerator back-ends:
  ``AcceleratorState.__init__`` (``accelerate/state.py``, the ``elif self.distributed_type in
  [DistributedType.MULTI_GPU, ...]`` branch that sets ``DistributedType.FSDP``) does not list ``MULTI_CPU``,
  so on CPU the FSDP plugin is dropped *silently* and the run trains as gloo DDP. FSDP2's ``fully_shard``
  itself works on CPU with gloo (torch 2.13), so when FSDP is asked for and the processes are CPU processes,
  the trainers set up accelerate's state as it is on GPUs (``distributed_type=FSDP`` with the plugin); from
  there on every step is accelerate's and the Trainer's FSDP2 code, unchanged. This is what lets the FSDP
  tests run on CPU-only CI.
* **Reference model** (:func:`prepare_reference`): sharded like the policy (same plugin, same wrapping
  policy, one FSDP unit per decoder layer), but resharded after every forward (it never runs a backward, so
  keeping a unit gathered only costs memory). Per rank it then holds ``1/world`` of its weights plus one
  gathered layer at a time, and TR-DPO can blend policy and reference shard by shard (both are sharded the
  same way). ``TRAINWRIGHT_FSDP_REFERENCE=replicate`` keeps a whole copy on each rank instead (no
  all-gather per reference forward; costs the full reference's memory on every rank; not with TR-DPO).
* **Generation** (:func:`gathered_for_generation`): a sharded policy all-gathers a unit's parameters in each
  unit's forward, so a ``generate`` call of ``N`` new tokens all-gathers every layer ``N`` times. It is
  correct as it is: torch marks ``fully_shard``-ed modules ``_is_fsdp_managed_module``, transformers then
  turns ``synced_gpus`` on, and a process whose completions are done keeps running dummy forwards until the
  slowest process is done too. But it is slow (measured on 2 CPU processes, 4 layers: 161 all-gathers and
  1.7 s for 32 tokens, against 5 all-gathers and 0.6 s gathered once). So by default the parameters are
  gathered once (the prefill forward, which every process runs, with ``reshard_after_forward=False`` on
  every unit) and kept whole for the rest of the call, then the shards are restored: decoding runs on local
  full weights with no collective, and each process stops when its own completions are done. Memory: the
  full policy on each rank during generation, as with TRL's ``ds3_gather_for_generation=True``;
  ``TRAINWRIGHT_FSDP_GENERATION=sharded`` generates on the shards instead (for a policy that only fits
  sharded).
* **Checkpoints** (:func:`~trainwright.storage.module_state.full_state_dict`,
  :func:`~trainwright.storage.module_state.load_full_state_dict`): the TR-DPO reference is saved as a
  full (unsharded) state dict gathered from all ranks, so a checkpoint written under FSDP resumes under FSDP,
  DDP or one process alike; the Trainer saves the policy and optimizer with accelerate's FSDP helpers.

Combinations that cannot work raise a ``ValueError`` naming the setting and the fix (:func:`check_distributed_support`).
Private torch FSDP2 / accelerate state is used only where no public API exists, and only in
:mod:`trainwright.trainers.common.fsdp_private` (reading a unit's ``reshard_after_forward``; FSDP state on CPU
processes), whose test fails by name when a release changes it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from torch import nn

from trainwright.storage.module_state import fsdp_modules
from trainwright.trainers.common.fsdp_private import force_fsdp_state, reshards_after_forward

REFERENCE_ENV = "TRAINWRIGHT_FSDP_REFERENCE"
REFERENCE_CHOICES = ("shard", "replicate")
GENERATION_ENV = "TRAINWRIGHT_FSDP_GENERATION"
GENERATION_CHOICES = ("gather", "sharded")


def fsdp_requested(args: Any) -> bool:
    """Whether this run asks for FSDP: ``TrainingArguments(fsdp=...)`` or ``accelerate launch`` with an FSDP config
    (which exports ``ACCELERATE_USE_FSDP=true``)."""
    return getattr(args, "fsdp_plugin_args", None) is not None or _env_flag("ACCELERATE_USE_FSDP")


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "false").lower() in ("1", "true", "yes")


def _fsdp_plugin(args: Any) -> Any:
    """The plugin the Trainer's ``Accelerator`` would build: from ``args.fsdp_plugin_args``, else from the
    ``FSDP_*`` variables that ``accelerate launch`` exports."""
    from accelerate.utils import FullyShardedDataParallelPlugin

    plugin_args = getattr(args, "fsdp_plugin_args", None)
    return (
        FullyShardedDataParallelPlugin(**plugin_args)
        if plugin_args is not None
        else FullyShardedDataParallelPlugin()
    )


def _fsdp_version(args: Any) -> int:
    """The FSDP version the plugin would get (accelerate's default, without ``FSDP_VERSION``, is 1)."""
    plugin_args = getattr(args, "fsdp_plugin_args", None)
    if plugin_args is not None and plugin_args.get("fsdp_version") is not None:
        return int(plugin_args["fsdp_version"])
    return int(os.environ.get("FSDP_VERSION", "1"))


def check_launch(args: Any) -> None:
    """Refuse a multi-process launch that accelerate set up as one process per rank.

    On a machine without GPUs, ``accelerate launch --multi_gpu`` / an FSDP config starts ``WORLD_SIZE``
    processes through torchrun, but unless the processes are told to use the CPU, accelerate finds no
    accelerator and sets each one up as a *single-process* run: every rank would train alone on the whole
    dataset and write the same output folder.
    """
    from accelerate import PartialState

    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    processes = PartialState().num_processes
    if world > 1 and processes == 1:
        raise ValueError(
            f"this process was launched as one of WORLD_SIZE={world} processes, but accelerate set it up as a "
            f"single-process run (no GPU was found and the CPU was not asked for), so each process would train "
            f"alone: on a machine without GPUs set ACCELERATE_USE_CPU=1 in the environment of `accelerate launch` "
            f"(or use_cpu=True in the config)"
        )


def refuse_deepspeed_on_cpu(args: Any) -> None:
    """Refuse a DeepSpeed config on CPU processes, which would otherwise train as plain DDP without a word.

    DeepSpeed itself runs ZeRO-2 and ZeRO-3 on CPU (its CPU accelerator, gloo), but accelerate 1.15 only
    selects it ``and not cpu`` (``AcceleratorState.__init__``, accelerate/state.py), transformers skips its
    DeepSpeed set-up when ``use_cpu`` / ``ACCELERATE_USE_CPU`` is set (``TrainingArguments._setup_devices``),
    and without the CPU flag a machine without GPUs gets one single-process run per rank.
    """
    if not (getattr(args, "deepspeed", None) or _env_flag("ACCELERATE_USE_DEEPSPEED")):
        return
    from accelerate import PartialState
    from accelerate.utils import DistributedType

    if PartialState().distributed_type == DistributedType.MULTI_CPU:
        raise ValueError(
            "a DeepSpeed config was given (deepspeed=... or an accelerate DeepSpeed config), but these are CPU "
            "processes, where accelerate does not run DeepSpeed and the run would silently train as DDP: use "
            "FSDP2 on CPU (accelerate launch --config_file examples/accelerate/fsdp2_cpu.yaml with "
            "ACCELERATE_USE_CPU=1), or run the DeepSpeed config on GPUs"
        )


def enable_fsdp_on_cpu(args: Any) -> bool:
    """Let accelerate's FSDP2 path run on CPU processes (gloo) when FSDP is asked for; see the module docstring.

    Must run after ``args`` is built (its ``__post_init__`` initialises accelerate's ``PartialState``) and
    before ``Trainer.__init__`` creates its ``Accelerator``, which then reuses this state. Returns whether it
    changed anything (``False`` on GPUs, where accelerate enables FSDP itself, and when FSDP is not asked for).
    """
    if not fsdp_requested(args):
        return False
    from accelerate import Accelerator, PartialState
    from accelerate.utils import DistributedType

    state = PartialState()
    if state.distributed_type != DistributedType.MULTI_CPU:
        return False
    version = _fsdp_version(args)
    if version != 2:  # (accelerate's FSDP1 plugin cannot even be built without an accelerator device)
        raise ValueError(
            f"FSDP on CPU processes is supported with FSDP2 only, got fsdp_version={version}: set "
            f"fsdp_version: 2 in the accelerate config (or fsdp_config={{'version': 2}})"
        )
    plugin = _fsdp_plugin(args)
    accelerator = Accelerator(cpu=True, mixed_precision=args.mixed_precision, fsdp_plugin=plugin)
    if accelerator.state.distributed_type == DistributedType.FSDP:  # already set up by an earlier trainer
        return False
    force_fsdp_state(accelerator, state, plugin, DistributedType.FSDP)  # the state accelerate builds on GPUs
    return True


def is_fsdp(trainer: Any) -> bool:
    """Whether the trainer's policy is (or will be, at ``train``) sharded with FSDP2."""
    if not getattr(trainer, "is_fsdp_enabled", False):
        return False
    return getattr(trainer.accelerator.state.fsdp_plugin, "fsdp_version", 1) == 2


def _choice(name: str, choices: tuple[str, ...]) -> str:
    mode = os.environ.get(name, "").strip().lower() or choices[0]
    if mode not in choices:
        raise ValueError(f"{name}={mode!r}: use one of {', '.join(choices)}")
    return mode


def reference_mode() -> str:
    """``TRAINWRIGHT_FSDP_REFERENCE``: "shard" (default) or "replicate"."""
    return _choice(REFERENCE_ENV, REFERENCE_CHOICES)


def generation_mode() -> str:
    """``TRAINWRIGHT_FSDP_GENERATION``: "gather" (default) or "sharded"."""
    return _choice(GENERATION_ENV, GENERATION_CHOICES)


def _zero_stage(trainer: Any) -> int | None:
    if not getattr(trainer, "is_deepspeed_enabled", False):
        return None
    return getattr(trainer.accelerator.state.deepspeed_plugin, "zero_stage", None)


def check_distributed_support(trainer: Any) -> None:
    """Refuse the combinations that cannot run sharded (FSDP, DeepSpeed ZeRO-3), naming the setting and the fix."""
    args = trainer.args
    if getattr(trainer, "is_fsdp_enabled", False) and not is_fsdp(trainer):
        raise ValueError(
            "the reference trainers support FSDP2 only (accelerate's fsdp_version: 1 is deprecated in "
            "transformers 5): set fsdp_version: 2 in the accelerate config (or fsdp_config={'version': 2})"
        )
    zero3 = _zero_stage(trainer) == 3
    if not (is_fsdp(trainer) or zero3):
        return
    sharding = "FSDP" if is_fsdp(trainer) else "DeepSpeed ZeRO-3"
    if getattr(args, "dynamic_sampling", False):
        raise ValueError(
            f"dynamic_sampling=True does not work with {sharding}: each process refills its own zero-variance "
            f"groups, so the processes call generate a different number of times, while generating on a sharded "
            f"policy is a collective operation (all processes must take part); turn dynamic_sampling off or "
            f"train with DDP"
        )
    if getattr(args, "sync_ref_model", False) and zero3:
        raise ValueError(
            "sync_ref_model (TR-DPO) with DeepSpeed ZeRO-3: the policy's parameters are partitioned across the "
            "processes, so the reference cannot be blended from them; use FSDP2 (fsdp_version: 2, where the "
            "reference is sharded like the policy) or ZeRO stage 2"
        )
    if getattr(args, "sync_ref_model", False) and is_fsdp(trainer) and reference_mode() == "replicate":
        raise ValueError(
            f"sync_ref_model (TR-DPO) with {REFERENCE_ENV}=replicate: TR-DPO blends the policy into the reference "
            f"parameter by parameter, and under FSDP the policy's parameters are shards; unset {REFERENCE_ENV} (the "
            f"reference is then sharded like the policy)"
        )


def prepare_reference(trainer: Any, ref_model: nn.Module | None) -> nn.Module | None:
    """The reference model placed for this run: on the device, and sharded like the policy under FSDP2."""
    if ref_model is None:
        return None
    ref_model.to(trainer.args.device)
    if not is_fsdp(trainer) or reference_mode() == "replicate":
        return ref_model
    from accelerate.utils import fsdp2_prepare_model

    sharded = fsdp2_prepare_model(trainer.accelerator, ref_model)
    # accelerate keeps the root and the tail (final norm + LM head) gathered after forward, to spare the
    # backward an all-gather; the reference has no backward, so that would only hold memory.
    sharded.set_reshard_after_forward(True, recurse=True)
    sharded.eval()
    sharded.requires_grad_(False)
    return sharded


@contextlib.contextmanager
def gathered_for_generation(model: nn.Module) -> Iterator[bool]:
    """Keep an FSDP2-sharded ``model`` gathered for the duration of a ``generate`` call (see the module
    docstring); yields whether it did. A no-op for an unsharded model, and with
    ``TRAINWRIGHT_FSDP_GENERATION=sharded``.

    The first forward inside the block (the prefill, which every process runs) all-gathers each unit once;
    the later decoding steps run on local full weights, with no collective, so processes may stop at
    different lengths (pass ``synced_gpus=False`` to ``generate``). On exit every unit gets its
    ``reshard_after_forward`` setting back and is resharded.
    """
    units = fsdp_modules(model)
    if not units or generation_mode() == "sharded":
        yield False
        return
    settings = [reshards_after_forward(unit, is_root=unit is model) for unit in units]
    for unit in units:
        unit.set_reshard_after_forward(False, recurse=False)
    try:
        yield True
    finally:
        for unit, setting in zip(units, settings):
            unit.set_reshard_after_forward(setting, recurse=False)
            unit.reshard()


__all__ = [
    "GENERATION_ENV",
    "REFERENCE_ENV",
    "check_distributed_support",
    "check_launch",
    "enable_fsdp_on_cpu",
    "fsdp_requested",
    "gathered_for_generation",
    "generation_mode",
    "is_fsdp",
    "prepare_reference",
    "reference_mode",
    "refuse_deepspeed_on_cpu",
]
