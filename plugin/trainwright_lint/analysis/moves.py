"""Whether moving code out of an override into a callback event is a *proven* move (issue 33, (a)).

A TW2xx finding proposes "move these statements to ``on_X``". That keeps behaviour only when ``on_X``
fires wherever the method runs: on every call path from a public entry point (``train``, ``evaluate``,
``save_model``, ``push_to_hub``, ...) in every release of the target range, and wherever the project
itself calls the method (``trainer.save_model()`` in a script: no event fires around that call).
``trainwright.catalog.events`` holds the paths and the events around each hop, derived from
transformers' source; this module reads them and says yes or no, and why.

On a path that runs the method during evaluation or prediction (``compute_loss`` from
``prediction_step``), the step events never fire; ``on_prediction_step`` (per batch) fires there, and a
callback written for the move implements it as well (``EVALUATION_EQUIVALENTS``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from trainwright.catalog.events import CallPath, ReleaseEvents, load_events

# Paths that start in another transformers module (``trainer_jit_checkpoint``: the SIGTERM checkpoint) run
# only when an argument turns them on (``enable_jit_checkpoint``): they are reported, not required.
_OPT_IN = re.compile(r"^\w+\.")
_EVENT = re.compile(r"\bon_[a-z_]+\b")
STEP_EVENTS = frozenset({"on_step_begin", "on_step_end", "on_substep_end", "on_pre_optimizer_step",
                         "on_optimizer_step", "on_log"})  # fmt: skip
EVALUATION_EQUIVALENTS = ("on_prediction_step",)


@dataclass(frozen=True)
class Proof:
    """The verdict: ``events`` the callback implements (the suggested ones, plus the evaluation
    equivalent when a path needs it), or ``missing``: a path on which none of them fires."""

    proven: bool
    events: tuple[str, ...] = ()
    missing: str = ""  # "save_model (called directly) at 5.24.0"


def events_in(text: str) -> tuple[str, ...]:
    """The event names a message names (``on_step_begin -> on_step_end`` -> both)."""
    return tuple(dict.fromkeys(_EVENT.findall(text)))


def _covers(table: ReleaseEvents, method: str, path: CallPath, wanted: set[str]) -> bool:
    if wanted & set(table.inside(method)):
        return True
    before, after = path.near()
    near = set(before) | set(after) | (set(path.hops[-1].around) if path.hops else set())
    return bool(wanted & near)


@cache
def _tables(releases: tuple[str, ...]) -> tuple[ReleaseEvents, ...]:
    return load_events().across(releases)


def prove(method: str, suggested: Sequence[str], releases: Sequence[str], called_directly: bool) -> Proof:
    """Whether the ``suggested`` events cover every path to ``method`` on every release of ``releases``.

    ``called_directly``: the project calls the method itself (not through ``super()``), a path on which
    no event fires unless the method fires it itself. A method the table does not know (defined by TRL
    or the project) has no proven path: no proof."""
    wanted = set(suggested)
    if not wanted or not releases:
        return Proof(False, missing="no event to move to")
    used: list[str] = list(suggested)
    for table in _tables(tuple(releases)):
        if not table.knows(method) or not table.paths(method):
            return Proof(False, missing=f"`{method}` has no known call path at {table.version}")
        if called_directly and not wanted & set(table.inside(method)):
            return Proof(False, missing=f"the project calls `{method}` directly, where no event fires")
        for path in table.paths(method):
            if _OPT_IN.match(path.entry) or _covers(table, method, path, wanted):
                continue
            if wanted & STEP_EVENTS and _covers(table, method, path, set(EVALUATION_EQUIVALENTS)):
                used.extend(e for e in EVALUATION_EQUIVALENTS if e not in used)
                continue
            return Proof(False, missing=f"{path.text(method)} at {table.version}")
    return Proof(True, events=tuple(used))


def calls_directly(text: str, method: str, events: Sequence[str]) -> bool:
    """The file calls ``method`` on an object (``trainer.save_model()``, ``self.save_model()``), not
    through ``super()``, and does not fire one of ``events`` itself right after (a loop copy that calls
    ``self._save_checkpoint(...)`` then ``self.callback_handler.on_save(...)`` keeps the event there)."""
    if f".{method}(" not in text:
        return False
    fired = re.compile(r"callback_handler\.(" + "|".join(map(re.escape, events)) + r")\(") if events else None
    for match in re.finditer(rf"(?<!super\(\))\.{re.escape(method)}\(", text):
        if fired is None or not fired.search(text, match.end(), match.end() + 400):
            return True
    return False
