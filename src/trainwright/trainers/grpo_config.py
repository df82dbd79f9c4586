"""Former module path of ``GRPOConfig`` (now :mod:`trainwright.trainers.grpo.config`), kept so that code that
imported it from here (the TRL-peer test shim among them) keeps working."""

from __future__ import annotations

from trainwright.trainers.grpo.config import GRPOConfig

__all__ = ["GRPOConfig"]
