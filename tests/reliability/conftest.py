"""A session-wide zygote for the kill tests (pre-imported once; every training process is a fork of it)."""

from __future__ import annotations

import sys

import pytest

if sys.platform == "win32":  # pragma: no cover - fork, FIFOs and SIGKILL are POSIX
    pytest.skip("the kill tests need fork, FIFOs and SIGKILL", allow_module_level=True)

from kill_harness import Zygote


@pytest.fixture(scope="session")
def zygote():
    pytest.importorskip("torch", reason="the kill tests train: they need the train extra")
    process = Zygote()
    yield process
    process.close()
