"""``trainwright fix --suggest``: the preview of the move a TW2xx finding's unsafe fix writes.

There is one writer of callbacks: the move fix (``rules/_move.py`` plans it, ``rules/_move_cst.py``
writes it, ``trainwright fix --unsafe-fixes`` applies it). ``--suggest`` applies that one move alone to
a copy of the file's text (``driver.preview_moves``) and prints what it changes: the callback class as
the fixed file holds it, the statements it removes and the registration it adds. Nothing is written.

A hand-written translator used to print its own callbacks here; of the five it printed on the gallery,
three trained differently from the override (issue 32). So a finding is previewed only when its move is
one the oracle can hold equal, and otherwise says in one line why there is no mechanical move:

* the rule writes no move (TW203: its ``control.should_*`` callbacks are not oracle-checked);
* the finding carries no move (``fix_note`` says why, when the fixer knows);
* the move would put code from before and after the ``super()`` call into one event: no event begins
  the method (``prediction_step``), so a timer there would measure nothing;
* the move runs code from before the ``super()`` call at a step event, where the method runs only when a
  control flag is set (``evaluate`` at ``control.should_evaluate``): it would run on every step.

This module decides and renders; the driver reads the file and applies the move.
"""

from __future__ import annotations

from collections.abc import Callable

from trainwright_lint.analysis.moves import STEP_EVENTS
from trainwright_lint.finding import Finding
from trainwright_lint.rules import RULES, suggested
from trainwright_lint.rules._move import MoveToCallback

# The rules whose findings ``--suggest`` previews (``Rule.suggestion``), for the CLI and the server.
SUGGESTED_CODES = suggested()

# Methods the training loop calls only when ``_maybe_log_save_evaluate`` finds a control flag set: a
# step event fires on every step, so code run before them cannot move there unguarded.
RUNS_ONLY_WHEN = {
    "evaluate": "should_evaluate",
    "_evaluate": "should_evaluate",
    "_save_checkpoint": "should_save",
}


def _sides(move: MoveToCallback) -> tuple[bool, bool]:
    """Whether the moved statements sit before and after the ``super()`` call."""
    before = any(last < move.split_offset for _, last in move.spans)
    after = any(first > move.split_offset for first, _ in move.spans)
    return before, after


def withheld(finding: Finding) -> str | None:
    """Why ``finding`` (of a rule ``--suggest`` previews) gets no preview, or None: its move is shown.

    Everything is read from the finding's edit (its events, spans and ``super()`` line), never from its
    message text."""
    rule = RULES.get(finding.code)
    if rule is not None and rule.fix_module is None:
        return f"{finding.code} writes no move: no callback for it is checked by the behaviour oracle"
    move = finding.fix
    if not isinstance(move, MoveToCallback):
        return finding.fix_note or "the moved code reads what no callback event receives"
    before, after = _sides(move)
    method = move.method
    if before and after and not move.span and move.before_event == move.after_event:
        return (
            f"no event begins `{method}`: code before and after `super().{method}()` would run back "
            f"to back in `{move.before_event}`, and a timer there would measure nothing"
        )
    flag = RUNS_ONLY_WHEN.get(method)
    if before and flag is not None and move.before_event in STEP_EVENTS:
        return (
            f"`{move.before_event}` fires on every step, `{method}` only when `control.{flag}` is set; "
            "the move does not check it"
        )
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
