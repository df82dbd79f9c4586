"""Where this checkout's code is, for the server tests' subprocesses (no pygls needed here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GALLERY = ROOT / "examples" / "gallery"


def server_env() -> dict[str, str]:
    """This checkout's code for a subprocess, whatever is installed in the environment."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT / "plugin")])
    env["HF_HUB_OFFLINE"] = "1"
    return env


def run_python(
    args: list[str], cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with this checkout's code, its output captured (the caller checks the status)."""
    return subprocess.run(
        [sys.executable, *args],
        check=False,
        cwd=cwd,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
