"""Reference trainers: subclasses of ``transformers.Trainer`` that override public methods only.

``from trainwright.trainers import GRPOConfig, GRPOTrainer`` (or ``DPOConfig, DPOTrainer``) is the
drop-in for ``from trl import ...``; the same names are also exported by ``trainwright`` itself.
They are imported on first access, so ``import trainwright.trainers.grpo.loss`` stays light.
"""

from __future__ import annotations

from trainwright._extras import require_train_extra
from trainwright._lazy import lazy_exports

require_train_extra("trainwright.trainers")

_LAZY_EXPORTS: dict[str, str] = {
    "DPOConfig": "trainwright.trainers.dpo.config",
    "DPOTrainer": "trainwright.trainers.dpo.trainer",
    "GRPOConfig": "trainwright.trainers.grpo.config",
    "GRPOTrainer": "trainwright.trainers.grpo.trainer",
    "RewardError": "trainwright.trainers.grpo.rewards",
}

__all__ = ["DPOConfig", "DPOTrainer", "GRPOConfig", "GRPOTrainer", "RewardError"]

__getattr__ = lazy_exports(__name__, _LAZY_EXPORTS)
