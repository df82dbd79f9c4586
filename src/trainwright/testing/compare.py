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
#: last bits): compared across releases, only failures, per-step loss and gradient norm, and the
#: user's printed lines must match. ``compare(a, b, ignore=ACROSS_RELEASES)``.
ACROSS_RELEASES = ("log_history", "controls", "events", "param_norms", "params_hash", "files")


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


def _phase_diff(a: Phase, b: Phase, rel: float, ignore: Iterable[str]) -> list[Difference]:
    out: list[Difference] = []
    for name in PHASE_FIELDS:
        if name in ignore:
            continue
        out += diff_values(f"{a.name}.{name}", getattr(a, name), getattr(b, name), rel)
    return out


def compare(a: Record, b: Record, *, rel: float = 1e-5, ignore: Sequence[str] = ()) -> list[Difference]:
    """Where ``b`` trained differently from ``a``; empty when they are oracle-equal.

    ``ignore`` names fields left out (``"lines"``, ``"files"``, ``"events"`` ...), for a comparison
    that knowingly accepts a difference, which the caller must then state."""
    out: list[Difference] = []
    if a.error != b.error:
        out.append(Difference("setup.error", a.error, b.error))
    names = [p.name for p in a.phases] + [p.name for p in b.phases if a.phase(p.name) is None]
    for name in names:
        pa, pb = a.phase(name), b.phase(name)
        if pa is None or pb is None:
            out.append(Difference(f"{name}", "ran" if pa else "<missing>", "ran" if pb else "<missing>"))
            continue
        out += _phase_diff(pa, pb, rel, ignore)
    if "files" not in ignore:
        out += diff_values("files", a.files, b.files, 0.0)
    return out
