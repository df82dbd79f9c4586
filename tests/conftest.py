"""Test-wide settings: offline hub, one torch thread per worker (tiny models run faster that way)."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The linter caches facts about releases newer than the catalogue in the user cache folder: tests get a
# folder of their own, so a `trainwright catalog add` run earlier on this machine cannot change what they see.
if "TRAINWRIGHT_TESTS_KEEP_CACHE" not in os.environ:
    import tempfile

    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tw-test-cache-")

try:  # the lint-only test subset must run without torch installed
    import torch
except ImportError:  # pragma: no cover
    torch = None

if torch is not None:
    torch.set_num_threads(1)


# --------------------------------------------------------------------------------------------------
# Two real CPU processes under `accelerate launch`, for the trainers' distributed tests.
# --------------------------------------------------------------------------------------------------
import os as _os
import shutil as _shutil
import signal as _signal
import socket as _socket
import subprocess as _subprocess
import sys as _sys

import pytest as _pytest


def _free_port() -> int:
    with _socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _launch_two_processes(
    script: str, *script_args: str, timeout: float = 120, config_file: str | None = None
) -> _subprocess.CompletedProcess:
    """Run ``script`` in 2 CPU processes (gloo) with ``accelerate launch``; one retry on a fresh port.

    ``config_file``: an accelerate config (e.g. ``examples/accelerate/fsdp2_cpu.yaml``) used instead of the
    ``--multi_gpu`` flags; it must describe 2 processes.

    accelerate 1.15's ``launch --cpu --num_processes 2`` starts a single process unless an MPI hostfile
    is set up, so this uses the torchrun launcher behind ``--multi_gpu`` with ``ACCELERATE_USE_CPU=1``;
    the scripts assert that they see 2 processes. The launch runs in its own process group so that a
    timed-out run is killed whole (workers included) instead of lingering, and it is retried once with
    a new port: a port picked free can be taken by another test's processes before torchrun binds it.
    """
    accelerate = _shutil.which("accelerate", path=_os.path.dirname(_sys.executable)) or _shutil.which("accelerate")
    if accelerate is None:
        _pytest.skip("accelerate CLI not installed")
    env = {
        **_os.environ,
        "OMP_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "TQDM_DISABLE": "1",
        "ACCELERATE_USE_CPU": "1",
    }
    failures = []
    for _attempt in range(2):
        how = (
            ["--config_file", config_file]
            if config_file
            else ["--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
                  "--dynamo_backend", "no"]
        )  # fmt: skip
        cmd = [accelerate, "launch", *how, "--main_process_port", str(_free_port()), script, *script_args]
        proc = _subprocess.Popen(
            cmd, stdout=_subprocess.PIPE, stderr=_subprocess.PIPE, text=True, env=env, start_new_session=True
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except _subprocess.TimeoutExpired:
            _os.killpg(proc.pid, _signal.SIGKILL)
            stdout, stderr = proc.communicate()
            failures.append(f"timed out after {timeout}s:\n{stderr[-2000:]}")
            continue
        result = _subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
        if result.returncode == 0:
            return result
        failures.append(f"exit {result.returncode}:\n{stderr[-2000:]}")
    raise AssertionError("two-process run failed twice:\n" + "\n---\n".join(failures))


@_pytest.fixture(scope="session")  # a plain function: module-scoped fixtures may launch once per module
def launch_two_processes():
    return _launch_two_processes
