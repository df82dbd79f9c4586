"""Where this checkout's code is, for the server tests' subprocesses (no pygls needed here)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GALLERY = ROOT / "examples" / "gallery"


def server_env() -> dict[str, str]:
    """This checkout's code for a subprocess, whatever is installed in the environment."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT / "plugin")])
    env["HF_HUB_OFFLINE"] = "1"
    return env
