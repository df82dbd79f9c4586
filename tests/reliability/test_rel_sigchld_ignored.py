"""A host that ignores ``SIGCHLD``: lint and fix still work, and the per-file time limit still holds.

The audit: with ``SIGCHLD`` set to ``SIG_IGN`` (inherited across ``exec`` from some daemons and CI runners)
``trainwright lint`` and ``fix`` printed "internal error", exited 2 and wrote nothing: the kernel reaps the
children itself, and the supervisor's ``waitpid`` failed with ``ChildProcessError``. Every process here is
started the way such a host starts it, ``SIGCHLD`` ignored before ``exec``, and checks that it is.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGCHLD"), reason="POSIX signals")

FIXTURES = Path(__file__).resolve().parents[1] / "lint" / "fixtures" / "fix"
BEFORE = (FIXTURES / "tw301_compute_loss.before.py").read_bytes()
AFTER = (FIXTURES / "tw301_compute_loss.after.py").read_bytes()
TRAINWRIGHT = [sys.executable, "-m", "trainwright_lint"]
CHECK_IGNORED = "import signal; assert signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN, 'not ignored'"


def ignore_sigchld() -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)


def run_ignoring_sigchld(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, preexec_fn=ignore_sigchld, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_setting_reaches_the_child(tmp_path: Path) -> None:
    """The control: the way these tests start processes really leaves SIGCHLD ignored in them."""
    done = run_ignoring_sigchld([sys.executable, "-c", CHECK_IGNORED], tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_lint_and_fix_work_when_sigchld_is_ignored(tmp_path: Path, jobs: str) -> None:
    """``-j 1``: the supervised child; ``-j 2`` over 30 files: the worker pool."""
    files = [tmp_path / f"trainer_{i}.py" for i in range(30 if jobs == "2" else 1)]
    for path in files:
        path.write_bytes(BEFORE)
    options = ["--transformers-version", "5.24.0", "-j", jobs, "."]
    lint = run_ignoring_sigchld([*TRAINWRIGHT, "lint", *options], tmp_path)
    assert lint.returncode == 1, lint.stderr
    assert lint.stdout.count("TW301") == len(files)
    assert "internal error" not in lint.stdout + lint.stderr
    fix = run_ignoring_sigchld([*TRAINWRIGHT, "fix", *options], tmp_path)
    assert fix.returncode == 0, fix.stderr
    assert f"fixed {len(files)} finding" in fix.stderr
    assert all(path.read_bytes() == AFTER for path in files)


SUPERVISED = textwrap.dedent(
    f"""
    {CHECK_IGNORED}
    import sys
    sys.path.insert(0, {str(Path(__file__).resolve().parents[1] / "lint")!r})
    from test_supervisor import _work, describe  # the supervisor tests' scenario, run in this setting
    from trainwright_lint import supervisor

    for key, value in supervisor.run(_work, timeout=0.5, describe_timeout=describe).items():
        print(key, "=", value)
    """
)


def test_time_limit_and_a_dying_child_with_sigchld_ignored(tmp_path: Path) -> None:
    """The supervisor's kill and restart paths: a hung key is killed at its deadline, a key that kills its
    process is reported (its exit status is gone: the kernel reaped it), and the rest is done."""
    done = run_ignoring_sigchld([sys.executable, "-c", SUPERVISED], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" = ", 1) for line in done.stdout.splitlines())
    assert lines["slow.py"] == "took longer than 0.5s"
    assert lines["dies.py"] == (
        "internal error (the worker process died: ended; its exit status is unknown because this process "
        "ignores SIGCHLD)"
    )
    assert all(lines[key].startswith("done in ") for key in ("a.py", "b.py", "c.py"))


def test_flake8_with_the_plugin_works_when_sigchld_is_ignored(tmp_path: Path) -> None:
    """flake8's own process pool (``-j 2`` over several files) with the plugin loaded."""
    for i in range(4):
        (tmp_path / f"trainer_{i}.py").write_bytes(BEFORE)
    done = run_ignoring_sigchld([sys.executable, "-m", "flake8", "--select", "TW", "-j", "2", "."], tmp_path)
    assert done.stdout.count("TW301") == 4, done.stdout + done.stderr
