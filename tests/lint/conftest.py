"""Fixtures for the linter tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from lint_helpers import FIXTURES


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
