"""trainwright: customise ``transformers.Trainer`` the right way.

The package is importable without torch or transformers: the catalogue (``trainwright.catalog``) is pure
data and is what the linter and the decision CLI read. The trainers and callbacks need the ``train``
extra and are loaded lazily on first attribute access, so that ``import trainwright`` stays cheap and a
missing extra produces one clear ``ImportError`` instead of a traceback from deep inside an import chain.
"""

from __future__ import annotations

from trainwright._lazy import lazy_exports

__version__ = "0.1.0"

# public name -> module that defines it (imported on first access)
_LAZY_EXPORTS: dict[str, str] = {
    "DPOConfig": "trainwright.trainers.dpo.config",
    "DPOTrainer": "trainwright.trainers.dpo.trainer",
    "GRPOConfig": "trainwright.trainers.grpo.config",
    "GRPOTrainer": "trainwright.trainers.grpo.trainer",
}

__all__ = ["DPOConfig", "DPOTrainer", "GRPOConfig", "GRPOTrainer", "__version__"]

__getattr__ = lazy_exports(__name__, _LAZY_EXPORTS)
