"""Test-wide settings: offline hub, one torch thread per worker (tiny models run faster that way)."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

try:  # the lint-only test subset must run without torch installed
    import torch
except ImportError:  # pragma: no cover
    torch = None

if torch is not None:
    torch.set_num_threads(1)
