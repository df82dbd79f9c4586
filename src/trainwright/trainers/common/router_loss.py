"""The weight of a Mixture-of-Experts model's load-balancing loss in DPO's and GRPO's objectives.

A MoE model returns its load-balancing (router) loss when called with ``output_router_logits=True``; both
trainers add it to their loss with the config's ``router_aux_loss_coef`` (the model config's
``router_aux_loss_coef`` when the option is ``None``), as TRL does (TRL's ``aux_loss_enabled``).
"""

from __future__ import annotations

from torch import nn

from trainwright.trainers.common.reference import base_model


def router_aux_loss_coef(model: nn.Module, coef: float | None) -> float:
    """The weight of ``model``'s load-balancing loss (0.0: not added).

    ``None`` takes the model config's ``router_aux_loss_coef`` (0.0 for a config without one); a
    non-zero value for a model that returns no router logits is refused.
    """
    config = getattr(base_model(model), "config", None)
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    has_router = text_config is not None and hasattr(text_config, "output_router_logits")
    if coef is None:
        return float(getattr(text_config, "router_aux_loss_coef", 0.0) or 0.0) if has_router else 0.0
    if coef and not has_router:
        raise ValueError(
            f"router_aux_loss_coef={coef}, but {type(base_model(model)).__name__} is not a Mixture-of-Experts model "
            f"that returns router logits, so there is no load-balancing loss to weight; leave it None or 0"
        )
    return float(coef)
