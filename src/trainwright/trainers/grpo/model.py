"""What ``GRPOConfig`` changes in the model itself: a float32 LM head (the MoE router loss's weight, which
both trainers read, is :mod:`trainwright.trainers.common.router_loss`).

* ``cast_lm_head_to_fp32`` (ScaleRL, Khatri et al. 2025, arXiv:2510.13786): the LM head's weights
  become float32 and its input is upcast by a forward pre-hook, so that the logits (and the
  importance ratios computed from them) are not rounded to bf16 in a bf16 model. When the head is
  tied to the input embeddings, the shared weight is float32 too, and a forward hook casts the
  embedding output back to the model's dtype so the rest of the network runs as before.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from trainwright.trainers.common.reference import base_model


def cast_lm_head_to_fp32(model: nn.Module) -> None:
    """Run ``model``'s output embeddings in float32 (see the module docstring); in place."""
    base = base_model(model)
    head = base.get_output_embeddings() if hasattr(base, "get_output_embeddings") else None
    if head is None or not hasattr(head, "weight"):
        raise ValueError(
            f"cast_lm_head_to_fp32=True, but {type(base).__name__} has no output embeddings (LM head) to cast"
        )
    if hasattr(head, "base_layer"):  # a PEFT tuner layer wraps the head
        raise ValueError(
            "cast_lm_head_to_fp32=True is not supported when the LM head carries a PEFT adapter (lm_head in "
            "target_modules): remove lm_head from the adapter's target modules, or set cast_lm_head_to_fp32=False"
        )
    embeddings = base.get_input_embeddings() if hasattr(base, "get_input_embeddings") else None
    original = head.weight.dtype
    tied = embeddings is not None and getattr(embeddings, "weight", None) is head.weight
    head.float()
    head.register_forward_pre_hook(_upcast_inputs)
    if tied and original != torch.float32:
        embeddings.register_forward_hook(_cast_output_to(original))


def _upcast_inputs(module: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)


class _cast_output_to:
    def __init__(self, dtype: torch.dtype) -> None:
        self.dtype = dtype

    def __call__(self, module: nn.Module, args: tuple[Any, ...], output: torch.Tensor) -> torch.Tensor:
        return output.to(self.dtype)
