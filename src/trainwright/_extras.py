"""Guard for the optional ``train`` extra.

Why a guard: without it, ``from trainwright import DPOTrainer`` on a lint-only install fails with
``ModuleNotFoundError: No module named 'torch'`` from some nested import, which does not tell the
user what to install. Every module that needs torch/transformers calls :func:`require_train_extra`
before importing them.
"""

from __future__ import annotations

import importlib.util

TRAIN_EXTRA_HINT = 'pip install "trainwright[train]"'
_TRAIN_MODULES = ("torch", "transformers", "accelerate", "datasets")


def require_train_extra(feature: str) -> None:
    """Raise an ``ImportError`` naming the install command if a ``train`` dependency is missing."""
    missing = [name for name in _TRAIN_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(
            f"{feature} needs the 'train' extra (missing: {', '.join(missing)}). "
            f"Install it with: {TRAIN_EXTRA_HINT}"
        )
