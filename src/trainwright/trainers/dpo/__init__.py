"""DPO (Rafailov et al. 2023, arXiv:2305.18290) and its loss family: the trainer, its config and their parts.

``trainer`` is the ``DPOTrainer`` itself; ``config`` its ``DPOConfig``; ``losses`` the loss registry;
``data`` and ``stream`` the preference-data tokenisation; ``preference_logps`` the chosen/rejected
log-prob kernels. ``DPOTrainer``/``DPOConfig`` are imported on first access.
"""

from __future__ import annotations

from trainwright._lazy import lazy_exports

_LAZY_EXPORTS: dict[str, str] = {
    "DPOConfig": "trainwright.trainers.dpo.config",
    "DPOTrainer": "trainwright.trainers.dpo.trainer",
}

__all__ = ["DPOConfig", "DPOTrainer"]

__getattr__ = lazy_exports(__name__, _LAZY_EXPORTS)
