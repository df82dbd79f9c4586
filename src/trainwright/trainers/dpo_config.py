"""Former module path of ``DPOConfig`` (now :mod:`trainwright.trainers.dpo.config`), kept so that code that
imported it from here (the TRL-peer test shim among them) keeps working."""

from __future__ import annotations

from trainwright.trainers.dpo.config import DPOConfig

__all__ = ["DPOConfig"]
