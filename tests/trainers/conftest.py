"""The trainers' tests need the ``train`` extra: without it (the lint-only run) the whole area is skipped."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="the trainers' tests need the train extra")
pytest.importorskip("transformers", reason="the trainers' tests need the train extra")
