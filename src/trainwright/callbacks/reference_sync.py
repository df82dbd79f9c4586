"""TR-DPO reference sync: moved to :mod:`trainwright.trainers.owned_callbacks` (the trainers' own callbacks).

Kept so that ``trainwright.callbacks.reference_sync.ReferenceSyncCallback`` keeps working.
"""

from __future__ import annotations

from trainwright.trainers.owned_callbacks import ReferenceSyncCallback

__all__ = ["ReferenceSyncCallback"]
