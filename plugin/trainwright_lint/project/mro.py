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
    without duplicates, so the linter still has an order to work with.

    Linear in the total length of the sequences (times their number, the bases + 1): each sequence
    is read through a cursor, and ``in_tail`` counts in how many sequences a key sits behind the
    cursor's head, so "is this head in no tail?" is one lookup instead of a scan of every tail. (The
    scan made a chain of 2,000 single-inheritance classes cubic: each MRO is as long as the chain.)
    """
    if len(bases) == 1 and len(base_mros) == 1 and base_mros[0] and base_mros[0][0] == bases[0]:
        return (own, *base_mros[0])  # single inheritance: C3 of (L[B], [B]) is L[B]
    sequences = [m for m in base_mros if m] + ([bases] if bases else [])
    cursors = [0] * len(sequences)
    in_tail: dict[str, int] = {}
    for seq in sequences:
        for key in seq[1:]:
            in_tail[key] = in_tail.get(key, 0) + 1
    result = [own]
    while True:
        live = [i for i, seq in enumerate(sequences) if cursors[i] < len(seq)]
        if not live:
            return tuple(result)
        heads = (sequences[i][cursors[i]] for i in live)
        head = next((h for h in heads if not in_tail.get(h)), None)
        if head is None:
            return _fallback(own, base_mros)
        result.append(head)
        for i in live:
            seq = sequences[i]
            if seq[cursors[i]] == head:
                cursors[i] += 1
                if cursors[i] < len(seq):
                    in_tail[seq[cursors[i]]] -= 1  # the new head leaves this sequence's tail


def _fallback(own: str, base_mros: Sequence[Sequence[str]]) -> tuple[str, ...]:
    seen = {own}
    out = [own]
    for mro in base_mros:
        for key in mro:
            if key not in seen:
                seen.add(key)
                out.append(key)
    return tuple(out)
