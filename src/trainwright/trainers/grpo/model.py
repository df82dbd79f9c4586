"""What ``GRPOConfig`` changes in the models themselves: a float32 LM head and the MoE router loss.

* ``cast_lm_head_to_fp32`` (ScaleRL, Khatri et al. 2025, arXiv:2510.13786): the LM head's weights
  become float32 and its input is upcast by a forward pre-hook, so that the logits (and the
  importance ratios computed from them) are not rounded to bf16 in a bf16 model. When the head is
  tied to the input embeddings, the shared weight is float32 too, and a forward hook casts the
  embedding output back to the model's dtype so the rest of the network runs as before.
* ``router_aux_loss_coef``: a Mixture-of-Experts model returns its load-balancing loss when called with
  ``output_router_logits=True``; GRPO adds it to the loss with this weight (the model config's
  ``router_aux_loss_coef`` when the option is ``None``), as TRL does.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from trainwright.trainers.common.reference import is_peft_model


def _base(model: nn.Module) -> nn.Module:
    return model.get_base_model() if is_peft_model(model) else model


def cast_lm_head_to_fp32(model: nn.Module) -> None:
    """Run ``model``'s output embeddings in float32 (see the module docstring); in place."""
    base = _base(model)
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


def router_aux_loss_coef(model: nn.Module, coef: float | None) -> float:
    """The weight of ``model``'s load-balancing loss (0.0: not added).

    ``None`` takes the model config's ``router_aux_loss_coef`` (0.0 for a config without one); a
    non-zero value for a model that returns no router logits is refused.
    """
    config = getattr(_base(model), "config", None)
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    has_router = text_config is not None and hasattr(text_config, "output_router_logits")
    if coef is None:
        return float(getattr(text_config, "router_aux_loss_coef", 0.0) or 0.0) if has_router else 0.0
    if coef and not has_router:
        raise ValueError(
            f"router_aux_loss_coef={coef}, but {type(_base(model)).__name__} is not a Mixture-of-Experts model "
            f"that returns router logits, so there is no load-balancing loss to weight; leave it None or 0"
        )
    return float(coef)
