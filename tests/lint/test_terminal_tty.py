"""``trainwright hooks`` / ``explain`` on a real terminal (a pty): colour there and only there, never
with ``NO_COLOR``, and the layout follows the terminal's own width."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest
from lint_helpers import read_pty
from trainwright_lint.terminal import visible

MAIN = "import sys; from trainwright_lint.cli import main; sys.exit(main(sys.argv[1:]))"
COMMANDS = [["hooks"], ["hooks", "--events"], ["explain", "compute_loss"], ["explain", "on_save"]]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
    return {**env, "TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8", **extra}


def on_a_pty(argv: list[str], columns: int, **extra: str) -> str:
    """stdout of the CLI on a pseudo-terminal ``columns`` wide (read while it runs: the output is
    larger than the pty's buffer)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, *argv], stdout=follower, stderr=subprocess.DEVNULL, env=_env(**extra)
    )
    os.close(follower)
    out = read_pty(leader)
    assert proc.wait(timeout=60) == 0
    return out.decode("utf-8").replace("\r\n", "\n")


def piped(argv: list[str], **extra: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", MAIN, *argv], capture_output=True, text=True, env=_env(**extra), check=True
    )
    return result.stdout


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_colour_and_width_on_a_terminal(argv: list[str]) -> None:
    out = on_a_pty(argv, columns=72)
    assert "\x1b[" in out  # a terminal, NO_COLOR unset: coloured
    lines = visible(out).splitlines()
    assert max(len(line) for line in lines) <= 72  # the pty's width, not 80
    assert max(len(line) for line in lines) > 60  # and it is used


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_no_color_and_pipes_get_plain_text(argv: list[str]) -> None:
    plain = on_a_pty(argv, columns=72, NO_COLOR="1")
    assert "\x1b" not in plain
    assert plain == visible(on_a_pty(argv, columns=72))  # colour changes nothing but the codes
    out = piped(argv)
    assert "\x1b" not in out and max(len(line) for line in out.splitlines()) <= 80  # a pipe: 80 columns
    assert "\x1b" not in piped(argv, FORCE_COLOR="1", NO_COLOR="1")  # NO_COLOR wins


def test_force_color_colours_a_pipe() -> None:
    out = piped(["hooks"], FORCE_COLOR="1")
    assert "\x1b[1m" in out and visible(out) == piped(["hooks"])
