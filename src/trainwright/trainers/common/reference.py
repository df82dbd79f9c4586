"""The reference policy for KL-regularised objectives (DPO, GRPO's KL term).

Three ways to obtain ``log π_ref``, cheapest first:

* **PEFT policy**: the reference *is* the base model, i.e. the policy with its adapter disabled.
  No copy is made, which is why LoRA preference training fits where full copies do not.
* **Explicit ``ref_model``**: used as given, in eval mode, without gradients.
* **Otherwise**: a frozen deep copy of the policy taken at construction time. Unlike loading the
  reference again from ``model.config._name_or_path`` (which fails for a model built in memory from
  a config), a copy works for any ``nn.Module``.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator

import torch
from torch import nn


def is_peft_model(model: nn.Module) -> bool:
    """True for a ``peft.PeftModel`` (checked without importing peft when it is not installed)."""
    return hasattr(model, "disable_adapter") and hasattr(model, "peft_config")


def base_model(model: nn.Module) -> nn.Module:
    """The model under a PEFT adapter (``model`` itself when it has none): where the config and heads live."""
    return model.get_base_model() if is_peft_model(model) else model


def frozen_copy(model: nn.Module) -> nn.Module:
    """A deep copy of ``model`` in eval mode whose parameters never receive gradients."""
    ref = copy.deepcopy(model)
    ref.eval()
    ref.requires_grad_(False)
    return ref


def build_reference_model(
    model: nn.Module, ref_model: nn.Module | None = None, *, needs_reference: bool = True
) -> nn.Module | None:
    """Return the module to keep as reference, or ``None`` when none must be stored.

    ``None`` means: no reference needed (``needs_reference=False``: reference-free losses, or
    precomputed reference log-probs), or the policy is a PEFT model and its adapter-disabled self
    serves as reference (see :func:`reference_forward`).
    """
    if ref_model is not None:
        if ref_model is model:
            raise ValueError(
                "ref_model is the same object as model: the reference would move with the policy. "
                "Pass ref_model=None to use a frozen copy (or the adapter-disabled base for PEFT models)."
            )
        ref_model.eval()
        ref_model.requires_grad_(False)
        return ref_model
    if not needs_reference or is_peft_model(model):
        return None
    return frozen_copy(model)


@contextlib.contextmanager
def reference_forward(model: nn.Module, ref_model: nn.Module | None) -> Iterator[nn.Module]:
    """Yield the module whose forward gives reference logits, under ``torch.inference_mode``.

    Inference mode rather than ``no_grad``: the reference forward needs no version counters or view
    tracking, and every intermediate is freed as soon as it is used. Tensors made in the block are
    inference tensors, which cannot be saved for backward or changed in place outside it: pass those
    kept past the block through :func:`kept`. With ``ref_model=None`` the policy must be a PEFT model:
    it is yielded with its adapter disabled for the duration of the block.
    """
    with torch.inference_mode():
        if ref_model is not None:
            yield ref_model
        elif is_peft_model(model):
            with model.disable_adapter():
                yield model
        else:
            raise ValueError(
                "no reference model: pass ref_model, use a PEFT model, or use a reference-free loss"
            )


def kept(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` usable outside :func:`reference_forward`'s block: a copy if it is an inference tensor."""
    return tensor.clone() if tensor.is_inference() else tensor
