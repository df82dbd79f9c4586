"""A finding's message as a short headline and the lines under it, for the default text output.

Every rule writes its message as one sentence in the same shape: what is wrong, then ``; `` and what
to do, with asides in trailing parentheses (where it holds in the target range, the reference
callback, a detail). The JSON, SARIF and GitHub formats and ``--output-format concise`` keep that
sentence whole, for tools; the default output shows it as ruff does::

    memory_before.py:13:9: TW201 `training_step` runs gc/cache clearing gated on the global step (lines 13–15)
      help: move it to a TrainerCallback on `on_step_end`
      note: on every release of the target range, 4.44.0–4.45.2

The split reads the sentence's own punctuation outside code spans (backticks) and brackets, so it
needs nothing from the rules but that shape, and never loses a word: headline, ``help`` and ``note``
lines together are the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADLINE_WIDTH = 80  # what a headline is kept to (a longer one gives up its trailing aside)
_OPEN = "([{"
_SPLIT_OR_NEST = re.compile(r"[`()\[\]{}]|; ")  # a clause break, or what opens or closes a span


@dataclass(frozen=True)
class Parts:
    """A message taken apart: ``headline`` + ``help`` (what to do) + ``notes`` (asides)."""

    headline: str
    help: tuple[str, ...]
    notes: tuple[str, ...]


def _trailing_aside(text: str) -> tuple[str, str] | None:
    """``("text before", "aside")`` when ``text`` ends in `` (aside)`` at top level, else None."""
    if not text.endswith(")"):
        return None
    depth, code = 0, False
    for i in range(len(text) - 1, -1, -1):
        ch = text[i]
        if ch == "`":
            code = not code
        elif not code and ch == ")":
            depth += 1
        elif not code and ch == "(":
            depth -= 1
            if depth == 0:
                before = text[:i]
                if not before.endswith(" ") or not before.strip():
                    return None  # a call's parentheses (`f(x)`), not an aside
                return before.rstrip(), text[i + 1 : -1]
    return None


def _clauses(text: str) -> list[str]:
    """``text`` split at its ``"; "`` outside code spans and brackets. Only the characters that change
    where that is are visited (a per-character walk cost a millisecond per 20 findings)."""
    parts, start = [], 0
    depth, code = 0, False
    for found in _SPLIT_OR_NEST.finditer(text):
        mark = found.group()
        if mark == "`":
            code = not code
        elif mark == "; ":
            if depth == 0 and not code:
                parts.append(text[start : found.start()])
                start = found.end()
        elif not code and mark in _OPEN:
            depth += 1
        elif not code and depth:
            depth -= 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def split_message(message: str, fix_note: str = "") -> Parts:
    """The headline, help and notes of ``message`` (see the module docstring); ``fix_note`` (why a
    fixable finding has no fix) is the last note."""
    notes: list[str] = []
    rest = message.strip()
    while (aside := _trailing_aside(rest)) is not None:
        rest, note = aside
        notes.insert(0, note)
    clauses = _clauses(rest) or [rest]
    headline, helps = clauses[0], clauses[1:]
    while len(headline) > HEADLINE_WIDTH and (aside := _trailing_aside(headline)) is not None:
        headline, note = aside
        notes.insert(0, note)
    if fix_note:
        notes.append(fix_note)
    return Parts(headline, tuple(helps), tuple(notes))
