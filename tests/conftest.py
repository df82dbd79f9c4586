"""Test-wide settings: offline hub, one torch thread per worker (tiny models run faster that way).

Also what more than one test area shares: the toy ``tokenizer`` (callbacks and trainers), the two-process
launcher, and the lint-only run. Without torch (a venv installed with ``.[lint-test]``, no ``train``
extra; ``.ci/run`` builds one), ``pytest tests`` is the lint-only subset: every module or area that needs
the ``train`` extra is reported as skipped with the missing module as reason, and every other import
error still fails the run.
"""

from __future__ import annotations

import gc
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
    accelerate = _shutil.which("accelerate", path=_os.path.dirname(_sys.executable)) or _shutil.which(
        "accelerate"
    )
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


# --------------------------------------------------------------------------------------------------
# Shared by the callbacks' and the trainers' tests.
# --------------------------------------------------------------------------------------------------
@_pytest.fixture(scope="session")
def tokenizer():
    """The toy byte-level BPE tokenizer (``trainwright.toy``), built once: tests that change a tokenizer
    build their own or deep-copy this one."""
    from trainwright.toy import build_tokenizer  # needs the train extra: only areas that have it ask

    return build_tokenizer()


# --------------------------------------------------------------------------------------------------
# The behaviour oracle's older releases, installed beside the venv under `.oracle/`.
# --------------------------------------------------------------------------------------------------
def _installed_release(*versions: str):
    """The folders of ``versions`` (``releases.ensure``), one path per version; the test is skipped only
    when PyPI is unreachable and a release is not installed yet (any other install failure fails it)."""
    from trainwright.testing.releases import ReleaseUnavailable, ensure

    try:
        folders = [ensure(v) for v in versions]
    except ReleaseUnavailable as exc:
        if not exc.offline:
            raise
        _pytest.skip(
            f"PyPI unreachable, transformers {'/'.join(versions)} not installed under .oracle/: {exc}"
        )
    return folders[0] if len(folders) == 1 else tuple(folders)


@_pytest.fixture(scope="session")
def installed_release():
    return _installed_release


# --------------------------------------------------------------------------------------------------
# The lint-only run: modules that need the train extra are skipped, with the reason, when it is absent.
# --------------------------------------------------------------------------------------------------
TRAIN_EXTRA_MODULES = frozenset({"torch", "transformers", "accelerate", "datasets", "trl", "peft"})


def needs_train_extra(error: BaseException | None) -> str | None:
    """The missing ``train``-extra module behind an import ``error`` (None if it is another failure).

    ``trainwright``'s own guard (``trainwright._extras``) raises an ``ImportError`` naming the extra;
    a direct import raises ``ModuleNotFoundError`` whose ``name`` is the missing module."""
    if torch is not None or not isinstance(error, ImportError):
        return None
    if "needs the 'train' extra" in str(error):
        return str(error)
    root = (error.name or "").partition(".")[0]
    return f"No module named {root!r}" if root in TRAIN_EXTRA_MODULES else None


class _LintOnlyModule(_pytest.Module):
    """A test module that reports "needs the train extra" as a skip, not a collection error."""

    def _getobj(self):
        try:
            return super()._getobj()
        except self.CollectError as error:
            missing = needs_train_extra(error.__cause__)
            if missing is None:
                raise
            _pytest.skip(f"{self.nodeid} needs the train extra: {missing}", allow_module_level=True)


def pytest_collection_modifyitems(config, items) -> None:
    """``@pytest.mark.train("why")``: a test of the lint side that needs torch, transformers or TRL when it
    runs (a training subprocess, a corpus of installed sources), skipped with its reason without torch."""
    if torch is not None:
        return
    for item in items:
        marker = item.get_closest_marker("train")
        if marker is not None:
            why = marker.args[0] if marker.args else "needs torch and transformers"
            item.add_marker(_pytest.mark.skip(reason=f"needs the train extra: {why}"))


def pytest_pycollect_makemodule(module_path, parent):
    if torch is not None:
        return None  # with the train extra, every import error is a failure
    return _LintOnlyModule.from_parent(parent, path=module_path)


def pytest_collection_finish(session) -> None:
    """Every module the tests import is loaded by now and lives as long as the run: out of the collector's
    sight (``gc.freeze``), the ``gc.collect()`` accelerate calls at the end of every ``Trainer.train``
    (``free_memory``) scans only what the tests made since. It was most of a tiny training run's time."""
    gc.freeze()
