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

import ast
import re
from bisect import bisect_right
from collections.abc import Sequence

from trainwright.catalog.event_proofs import load_proofs

# Paths that start in another transformers module (``trainer_jit_checkpoint``: the SIGTERM checkpoint) run
# only when an argument turns them on (``enable_jit_checkpoint``): they are reported, not required
# (``MethodProof.paths`` marks them).
_EVENT = re.compile(r"\bon_[a-z_]+\b")
_RECEIVER = re.compile(r"(\w+)$")
STEP_EVENTS = frozenset({"on_step_begin", "on_step_end", "on_substep_end", "on_pre_optimizer_step",
                         "on_optimizer_step", "on_log"})  # fmt: skip
EVALUATION_EQUIVALENTS = ("on_prediction_step",)
# ``evaluation_loop`` runs for ``predict()`` too, where ``on_predict`` fires in place of ``on_evaluate``.
PREDICTION_EQUIVALENTS = {"on_evaluate": "on_predict"}


class Proof:
    """The verdict: ``events`` the callback implements (the suggested ones, plus the evaluation
    equivalent when a path needs it), or ``missing``: a path on which none of them fires
    (``"save_model (called directly) at 5.24.0"``). A plain slotted class, not a dataclass: this module
    is imported by every lint, and a frozen dataclass costs a millisecond to define."""

    __slots__ = ("events", "missing", "proven")

    def __init__(self, proven: bool, events: tuple[str, ...] = (), missing: str = "") -> None:
        self.proven, self.events, self.missing = proven, events, missing

    def __repr__(self) -> str:
        return f"Proof(proven={self.proven!r}, events={self.events!r}, missing={self.missing!r})"


def events_in(text: str) -> tuple[str, ...]:
    """The event names a message names (``on_step_begin -> on_step_end`` -> both)."""
    return tuple(dict.fromkeys(_EVENT.findall(text)))


def prove(method: str, suggested: Sequence[str], releases: Sequence[str], called_directly: bool) -> Proof:
    """Whether the ``suggested`` events cover every path to ``method`` on every release of ``releases``.

    ``called_directly``: the project calls the method itself (not through ``super()``), a path on which
    no event fires unless the method fires it itself. A method the table does not know (defined by TRL
    or the project) has no proven path: no proof."""
    wanted = set(suggested)
    if not wanted or not releases:
        return Proof(False, missing="no event to move to")
    used: list[str] = list(suggested)
    tables = load_proofs()
    for version, index in tables.across(tuple(releases)):
        facts = tables.method(index, method)
        if facts is None or not facts.paths:
            return Proof(False, missing=f"`{method}` has no known call path at {version}")
        if called_directly and not wanted & facts.inside:
            return Proof(False, missing=f"the project calls `{method}` directly, where no event fires")
        for opt_in, near in facts.paths:
            if opt_in or wanted & (facts.inside | near):
                continue
            if wanted & STEP_EVENTS and set(EVALUATION_EQUIVALENTS) & (facts.inside | near):
                used.extend(e for e in EVALUATION_EQUIVALENTS if e not in used)
                continue
            stand_ins = {PREDICTION_EQUIVALENTS[e] for e in wanted if e in PREDICTION_EQUIVALENTS}
            if stand_ins & (facts.inside | near):
                used.extend(e for e in sorted(stand_ins) if e not in used)
                continue
            return Proof(False, missing=f"a path where none of them fires at {version}")
    return Proof(True, events=tuple(used))


def called_on_a_name(source: str, method: str) -> bool:
    """``<name>.method(`` occurs in ``source`` (``self.m(``, ``trainer.m(``; not ``super().m(``): the cheap
    test before ``calls_directly`` walks anything. A literal search, each hit's preceding character
    checked as ``\\w`` would (``str.isalnum`` or ``_``): a regex that starts with ``\\w`` has no literal
    prefix to skip to and tries every position of the file (5 ms on a 200 kB file, per method asked)."""
    needle = f".{method}("
    at = source.find(needle)
    while at != -1:
        if at > 0 and (source[at - 1].isalnum() or source[at - 1] == "_"):
            return True
        at = source.find(needle, at + 1)
    return False


def calls_directly(
    source: str,
    starts: Sequence[int],
    tree: ast.Module,
    cls: ast.ClassDef,
    method: str,
    events: Sequence[str],
) -> bool:
    """The file calls ``method`` of this trainer itself: ``self.method(...)`` inside the class, or
    ``<x>trainer<y>.method(...)`` anywhere (``trainer.save_model()`` in a script), not through
    ``super()``. A call followed, in the same function, by the event fired by hand
    (``self.callback_handler.on_save(...)`` in a loop copy) keeps the event on that path.

    Read from the text (the calls) and the top-level statements' line spans: no tree walk, so a large
    file costs one regex scan. ``starts``: the offsets where the source's lines start."""
    own = [
        (n.lineno, n.end_lineno or n.lineno)
        for n in cls.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    spans = own + [(n.lineno, n.end_lineno or n.lineno) for n in tree.body if not isinstance(n, ast.ClassDef)]
    fired = re.compile(r"callback_handler\.(" + "|".join(map(re.escape, events)) + r")\(") if events else None
    for match in re.finditer(rf"\.{re.escape(method)}\(", source):  # the receiver is read backwards:
        head = _RECEIVER.search(source, max(0, match.start() - 80), match.start())  # no \w+ scan of the file
        if head is None:
            continue
        receiver, line = head.group(1), bisect_right(starts, match.start())
        ours = receiver == "self" and any(a <= line <= b for a, b in own)
        if not (ours or "trainer" in receiver.lower()):
            continue
        end = next((b for a, b in spans if a <= line <= b), line)
        stop = starts[end] if end < len(starts) else len(source)
        if fired is None or not fired.search(source, match.end(), stop):
            return True
    return False
