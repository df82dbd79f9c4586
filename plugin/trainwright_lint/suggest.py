"""``trainwright fix --suggest``: the preview of the move a TW2xx finding's unsafe fix writes.

There is one writer of callbacks: the move fix (``rules/_move.py`` plans it, ``rules/_move_cst.py``
writes it, ``trainwright fix --unsafe-fixes`` applies it). ``--suggest`` applies that one move alone to
a copy of the file's text (``driver.preview_moves``) and prints what it changes: the callback class as
the fixed file holds it, the statements it removes and the registration it adds. Nothing is written.

A hand-written translator used to print its own callbacks here; of the five it printed on the gallery,
three trained differently from the override (issue 32). So a finding is previewed only when its move is
one the oracle can hold equal, and otherwise says in one line why there is no mechanical move: the rule
writes no move (TW203: its ``control.should_*`` callbacks are not oracle-checked), or the planner
refused one (``rules/_move.py``: the code reads what no event receives, or an event would run it at
another moment, e.g. both halves of a timer around ``prediction_step`` back to back, or a print before
``evaluate`` on every step).

This module decides and renders; the driver reads the file and applies the move.
"""

from __future__ import annotations

from collections.abc import Callable

from trainwright_lint.finding import Finding
from trainwright_lint.rules import RULES, suggested
from trainwright_lint.rules._move import MoveToCallback
from trainwright_lint.rules.base import NO_MOVE

# The rules whose findings ``--suggest`` previews (``Rule.suggestion``), for the CLI and the server.
SUGGESTED_CODES = suggested()


def withheld(finding: Finding) -> str | None:
    """Why ``finding`` (of a rule ``--suggest`` previews) gets no preview, or None: its move is shown.

    Read from the finding's rule and edit, never from its message text. The planner
    (``rules/_move.py``) already refuses every move that would run the code at another moment than the
    override did, so a move it wrote is shown as it is."""
    rule = RULES.get(finding.code)
    if rule is not None and rule.fix_module is None:
        return f"{finding.code} writes no move: no callback for it is checked by the behaviour oracle"
    if not isinstance(finding.fix, MoveToCallback):
        return finding.fix_note or NO_MOVE
    return None


def header(finding: Finding, shown_path: Callable[[str], str]) -> str:
    """``path:line:col: CODE message``, the finding as ``lint --output-format concise`` prints it."""
    return f"{shown_path(finding.path)}:{finding.line}:{finding.column}: {finding.code} {finding.message}\n"


def preview(finding: Finding, diff: str, shown_path: Callable[[str], str]) -> str:
    """The finding, what its move does (the fix's own title) and the diff of that move alone."""
    move: MoveToCallback = finding.fix
    if not diff.endswith("\n"):
        diff += "\n\\ No newline at end of file\n"
    return f"{header(finding, shown_path)}  help: {move.describe()}\n{diff}\n"


def no_move(finding: Finding, reason: str, shown_path: Callable[[str], str]) -> str:
    return f"{header(finding, shown_path)}  no mechanical move: {reason}\n\n"
