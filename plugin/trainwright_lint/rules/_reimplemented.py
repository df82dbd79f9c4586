"""Two shapes of moved code the planner (``rules/_move.py``) reads as shapes it already knows.

- **A re-implemented body stands for the ``super()`` call.** A ``training_step`` copied from a release
  and given the user's code at its head or tail (a temperature decayed after the backward, a cache
  cleared before the forward) calls no ``super()``: the copied statements do the micro-batch's work
  where ``super().training_step()`` would. Code before all of them runs where code before the call runs
  (right before each micro-batch), code after all of them where code after it runs (right after each
  micro-batch, before the optimiser step); ``stand_in`` names the statement that opens that body, and
  the planner splits the moved code there as it splits it at the call. Only when the body is whole:
  the moved code sits before or after it at the top level, never between its statements, the body has
  no ``return`` of its own (the tail would not run on that path), and the moved code defines no local
  the body or the final ``return`` reads.
- **An ``if``/``else`` whose every branch moves, moves whole** (``if self.args.n_gpu > 1: model.module.f(x)
  else: model.f(x)``): ``whole_branches`` replaces the branches by the ``if`` itself, so the callback
  tests the condition where the override did. The test is then moved code like the rest: what it reads
  is bound, recomputed or refuses the move as for any moved statement (``_move._mechanical_move``).
"""

from __future__ import annotations

import ast

from trainwright_lint.analysis.effects import MethodEffects
from trainwright_lint.syntax import is_docstring


def stand_in(effects: MethodEffects, parts: list[int]) -> int | None:
    """The first statement of the re-implemented body ``parts`` sit around, or ``None`` (see the module
    docstring). ``parts`` are top-level statement indices; a method that calls ``super()`` has none."""
    statements = effects.statements
    if effects.delegation is not None or effects.delegations or not parts:
        return None
    if any(statements[i].parent != -1 for i in parts):
        return None
    moved = set(parts)
    tops = [i for i, s in enumerate(statements) if s.parent == -1 and not is_docstring(s.node)]
    end = len(tops)
    while end and tops[end - 1] not in moved and isinstance(statements[tops[end - 1]].node, ast.Return):
        end -= 1  # the final ``return loss.detach()``: it runs after the tail, on what the body computed
    flags = [i in moved for i in tops[:end]]
    if False not in flags:
        return None  # nothing left to stand for the call
    first, last = flags.index(False), end - 1 - flags[::-1].index(False)
    body = tops[first : last + 1]
    if any(i in moved for i in body):
        return None  # moved code between the body's statements: no event fires there
    inside = [j for i in body for j in effects.under(i)]
    within = [j for i in parts for j in effects.under(i)]
    if any(isinstance(statements[j].node, ast.Return) for j in inside + within):
        return None  # a path that returns early would skip the tail, or leave the callback's code midway
    defined = {d for j in within for d in statements[j].defines if not d.startswith("self.")}
    stays = set(range(len(statements))) - set(within)
    if any(statements[j].uses & defined for j in stays):
        return None  # the body (or the return) reads a local the moved code sets
    return body[0]


def whole_branches(effects: MethodEffects, parts: list[int]) -> list[int]:
    """``parts`` with every ``if`` statement that has an ``else`` and whose branches hold moved statements
    only put in their place (an ``elif`` chain whole, innermost first: a parent comes before its children
    in ``effects.statements``)."""
    current = set(parts)
    holders = {holder for i in parts for holder in effects.path(i)[1:]}
    for holder in sorted(holders, reverse=True):
        node, children = effects.statements[holder].node, effects.statements[holder].children
        if isinstance(node, ast.If) and node.orelse and all(c in current for c in children):
            current = (current - set(children)) | {holder}
    return sorted(current)
