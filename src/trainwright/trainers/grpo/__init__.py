"""GRPO (Shao et al. 2024, arXiv:2402.03300) and its variants: the trainer, its config and their parts.

``trainer`` is the ``GRPOTrainer`` itself; ``config`` its ``GRPOConfig`` (``trl_fields``: what it does with each
TRL field); the other modules are the steps a round runs (``generation``, ``rollout``, ``rewards``, ``advantages``,
``round_data``, ``generation_rounds``), the update (``loss``, one registry entry per loss type in ``loss_types``,
``entropy``, ``metrics``) and the callbacks the trainer attaches to itself (``callbacks``).
``GRPOTrainer``/``GRPOConfig`` are imported on first access, so importing one part
(``trainwright.trainers.grpo.loss``) does not build the trainer.
"""

from __future__ import annotations

from trainwright._lazy import lazy_exports

_LAZY_EXPORTS: dict[str, str] = {
    "GRPOConfig": "trainwright.trainers.grpo.config",
    "GRPOTrainer": "trainwright.trainers.grpo.trainer",
    "RewardError": "trainwright.trainers.grpo.rewards",
}

__all__ = ["GRPOConfig", "GRPOTrainer", "RewardError"]

__getattr__ = lazy_exports(__name__, _LAZY_EXPORTS)
