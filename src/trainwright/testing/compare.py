"""Field-by-field comparison of two oracle records.

Numbers are equal within a relative tolerance (``1e-5`` by default: the same computation reordered by a
fix differs in the last bits, a changed loss scaling by a factor); everything else must be equal.
Each difference names the phase and the field, and shows both values, so a report says what changed
in training, not only that something did.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from trainwright.testing.records import Phase, Record

#: The fields of a phase, in the order they are compared and reported.
PHASE_FIELDS = ("error", "steps", "log_history", "controls", "events", "lines", "param_norms", "params_hash")

#: What two *releases* may differ in for the same program (``config.json`` names the release, 5.x logs
#: the learning rate before the scheduler step, 4.x dispatches fewer events, kernels differ in the
#: last bits; a name one release lacks is stood in for there only): compared across releases, only
#: failures, per-step loss and gradient norm, and the user's printed lines must match. ``compare(a, b, ignore=ACROSS_RELEASES)``.
ACROSS_RELEASES = ("log_history", "controls", "events", "param_norms", "params_hash", "files", "stand_ins")


#: A move's named difference, in the words ``trainwright fix`` writes into the moved callback's docstring:
#: (No move is written with it since 2026-12-06: the linter refuses code before the evaluation loop, whose
#: model is then in ``eval()``; ``tests/oracle/refused/``. Kept for programs written with the old move.)
#: code an override ran before the evaluation loop runs at ``on_evaluate``/``on_predict``, after it (no event
#: fires before it). The model is the same (evaluation does not train); only the ``on_log`` of its output
#: changes place among the evaluation's events. ``compare(..., named=(AFTER_EVALUATION,))`` accepts that and
#: nothing else: every other event, the history, the lines and the files must still be equal.
AFTER_EVALUATION = "runs after the evaluation loop, not before it"
#: A move's named difference: moved code that calls ``trainer.log(...)`` logs from inside the event its
#: callback handles, so that ``on_log`` is dispatched while the event still is, and a callback added after
#: the moved one sees the ``on_log`` first. The history and every other record stay as they were.
#: ``compare(..., named=(NESTED_LOG,))`` accepts exactly that order (``logs_after_their_event``).
NESTED_LOG = "logs from inside its event: callbacks added after it see that `on_log` before the event"
_NAMED = (AFTER_EVALUATION, NESTED_LOG)
_EVALUATION_ENDS = ("on_evaluate@", "on_predict@")
_WITHIN_EVALUATION = ("on_log@", "on_prediction_step@")


def named_differences(fixed_text: str) -> tuple[str, ...]:
    """The named differences a fixed program's moved code declares (in its callback's docstring)."""
    return tuple(n for n in _NAMED if n in fixed_text)


def logs_within_evaluations(events: Sequence[str]) -> tuple[str, ...]:
    """``events`` with the ``on_log`` events of each evaluation gathered after it (sorted), so that a log
    the move ran after the loop instead of before it compares equal. An evaluation is a run of
    ``on_log``/``on_prediction_step`` events ending in ``on_evaluate``/``on_predict``, with the ``on_log``
    events right after that end (a log the moved code makes inside its event)."""
    out: list[str] = []
    i = 0
    while i < len(events):
        j = i
        while j < len(events) and events[j].startswith(_WITHIN_EVALUATION):
            j += 1
        if j == len(events) or not events[j].startswith(_EVALUATION_ENDS):
            out.extend(events[i : j + 1])
            i = j + 1
            continue
        k = j + 1
        while k < len(events) and events[k].startswith("on_log@"):
            k += 1
        window = [*events[i:j], *events[j + 1 : k]]
        out += [e for e in window if not e.startswith("on_log@")] + [events[j]]
        out += sorted(e for e in window if e.startswith("on_log@"))
        i = k
    return tuple(out)


def logs_after_their_event(original: Sequence[str], moved: Sequence[str]) -> tuple[str, ...]:
    """``moved`` with each run of ``on_log`` that a ``NESTED_LOG`` move dispatched inside an event put back
    after that event, where ``original`` has it: a run of logs directly before an event of the same step
    in ``moved`` that ``original`` has as that event followed by the same logs. Everything else is left
    as it is, for the comparison to report."""
    out: list[str] = []
    i = j = 0
    while j < len(moved):
        k = j
        while k < len(moved) and moved[k].startswith("on_log@"):
            k += 1
        run = list(moved[j:k])
        if (
            run
            and k < len(moved)
            and i < len(original)
            and original[i] != moved[j]
            and original[i] == moved[k]
            and moved[k].partition("@")[2] == run[0].partition("@")[2]
            and list(original[i + 1 : i + 1 + len(run)]) == run
        ):
            out += [moved[k], *run]
            i, j = i + 1 + len(run), k + 1
            continue
        out.append(moved[j])
        i, j = i + 1, j + 1
    return tuple(out)


@dataclass(frozen=True)
class Difference:
    """One place where two records differ: ``where`` (``ga2/train.steps[1].loss``), and both values."""

    where: str
    a: Any
    b: Any

    def __str__(self) -> str:
        return f"{self.where}: {_short(self.a)} != {_short(self.b)}"


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _close(a: Any, b: Any, rel: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel, abs_tol=rel * 1e-3)
    return False


def diff_values(where: str, a: Any, b: Any, rel: float) -> list[Difference]:
    """Differences between two JSON-like values (dicts by key, lists by position, numbers within ``rel``)."""
    if _close(a, b, rel):
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[Difference] = []
        for key in sorted(set(a) | set(b), key=str):
            if key not in a or key not in b:
                out.append(Difference(f"{where}.{key}", a.get(key, "<missing>"), b.get(key, "<missing>")))
            else:
                out += diff_values(f"{where}.{key}", a[key], b[key], rel)
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diff_values(f"{where}[{i}]", x, y, rel)
        if len(a) != len(b):
            longer = a if len(a) > len(b) else b
            out.append(Difference(f"{where}.length", len(a), len(b)))
            out.append(
                Difference(f"{where}[{min(len(a), len(b))}:] only in one", "", longer[min(len(a), len(b)) :])
            )
        return out
    if hasattr(a, "__dataclass_fields__") and type(a) is type(b):
        return diff_values(where, vars(a), vars(b), rel)
    return [] if a == b else [Difference(where, a, b)]


def _phase_diff(
    a: Phase, b: Phase, rel: float, ignore: Iterable[str], named: Sequence[str]
) -> list[Difference]:  # fmt: skip
    out: list[Difference] = []
    for name in PHASE_FIELDS:
        if name in ignore:
            continue
        x, y = getattr(a, name), getattr(b, name)
        if name == "events" and AFTER_EVALUATION in named:
            x, y = logs_within_evaluations(x), logs_within_evaluations(y)
        if name == "events" and NESTED_LOG in named:
            y = logs_after_their_event(x, y)
        out += diff_values(f"{a.name}.{name}", x, y, rel)
    return out


def compare(
    a: Record, b: Record, *, rel: float = 1e-5, ignore: Sequence[str] = (), named: Sequence[str] = ()
) -> list[Difference]:
    """Where ``b`` trained differently from ``a``; empty when they are oracle-equal.

    ``ignore`` names fields left out (``"lines"``, ``"files"``, ``"events"`` ...), for a comparison
    that knowingly accepts a difference, which the caller must then state. ``named`` are differences
    the fixed program itself declares (``named_differences``): each relaxes exactly what it names."""
    out: list[Difference] = []
    if a.error != b.error:
        out.append(Difference("setup.error", a.error, b.error))
    for name in ("stand_ins", "arguments"):  # a name the release lacks is used by one side only
        if name not in ignore and getattr(a, name) != getattr(b, name):
            out.append(Difference(f"setup.{name}", getattr(a, name), getattr(b, name)))
    names = [p.name for p in a.phases] + [p.name for p in b.phases if a.phase(p.name) is None]
    for name in names:
        pa, pb = a.phase(name), b.phase(name)
        if pa is None or pb is None:
            out.append(Difference(f"{name}", "ran" if pa else "<missing>", "ran" if pb else "<missing>"))
            continue
        out += _phase_diff(pa, pb, rel, ignore, named)
    if "files" not in ignore:
        out += diff_values("files", a.files, b.files, 0.0)
    return out
