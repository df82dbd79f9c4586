"""C3 linearisation: the method resolution order Python itself computes.

Why exactly C3: ``super().m()`` in a mixin means "the next class after the mixin in the MRO of the
object's class", which for ``class X(LoggingMixin, GRPOTrainer)`` is TRL's ``GRPOTrainer``, not
transformers' ``Trainer``; only the real linearisation gets that right for every diamond.
"""

from __future__ import annotations

from collections.abc import Sequence


def c3_merge(own: str, base_mros: Sequence[Sequence[str]], bases: Sequence[str]) -> tuple[str, ...]:
    """``own`` followed by the C3 merge of its bases' MROs and the base list. An inconsistent
    hierarchy (Python would raise ``TypeError``) falls back to a depth-first, left-to-right order
    without duplicates, so the linter still has an order to work with."""
    sequences = [list(m) for m in base_mros if m] + ([list(bases)] if bases else [])
    result = [own]
    while True:
        sequences = [s for s in sequences if s]
        if not sequences:
            return tuple(result)
        for seq in sequences:
            head = seq[0]
            if not any(head in s[1:] for s in sequences):
                break
        else:
            return _fallback(own, base_mros)
        result.append(head)
        for s in sequences:
            if s[0] == head:
                del s[0]


def _fallback(own: str, base_mros: Sequence[Sequence[str]]) -> tuple[str, ...]:
    seen = {own}
    out = [own]
    for mro in base_mros:
        for key in mro:
            if key not in seen:
                seen.add(key)
                out.append(key)
    return tuple(out)
