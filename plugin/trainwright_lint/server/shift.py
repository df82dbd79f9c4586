"""A finding moved by a line delta: what the server reports for a class whose text and hierarchy are
unchanged but that now sits ``delta`` lines lower (or higher) in the document.

Why not lint it again: adding a line near the top of a 2,000-line trainer module moves every class
below it, and re-linting them all cost more than the rest of the change together (issue 35: 209 ms at
the median, against 103 ms for a change that moves nothing). A class's findings are a function of its
text, its hierarchy's and the module's (``incremental``); where those are the same and the whole
hierarchy moved by the same ``delta``, the findings are the old ones with every line number moved.

Every position a finding holds is moved: ``line``/``end_line``, ``noqa_lines``, the ``moved``
statements, the fix's ``line`` (the only absolute position of an edit: ``edits.Edit``; the fixer moves
it the same way, ``fixes/segment.py``), and the line numbers its message names, in the two forms the
rules write them: TW201/TW202's ``(lines 6–9, 12)`` and TW301's ``<this file>:<line>`` call site.
A position outside the moved classes (the module's code, another class) is not the finding's to
move: ``shifted`` then returns ``None`` and the class is linted again, never guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from trainwright_lint.finding import Finding

Spans = Sequence[tuple[int, int]]

_LINE_LIST = re.compile(r"\(lines? (\d+(?:(?:–|, )\d+)*)\)")  # ``observing.line_list``: "(lines 6–9, 12)"
_NUMBER = re.compile(r"\d+")


def _inside(line: int, spans: Spans) -> bool:
    return any(first <= line <= last for first, last in spans)


class _Unmovable(Exception):
    """A position of the finding lies outside the classes that moved."""


def _move(line: int, delta: int, spans: Spans) -> int:
    if not _inside(line, spans):
        raise _Unmovable
    return line + delta


def _message(message: str, delta: int, spans: Spans, here: str) -> str:
    def numbers(match: re.Match[str]) -> str:
        return _NUMBER.sub(lambda n: str(_move(int(n.group(0)), delta, spans)), match.group(0))

    message = _LINE_LIST.sub(numbers, message)
    if here and f"{here}:" in message:
        site = re.compile(rf"(?<![\w./-]){re.escape(here)}:(\d+)\b")
        message = site.sub(lambda m: f"{here}:{_move(int(m.group(1)), delta, spans)}", message)
    return message


def shifted(f: Finding, delta: int, spans: Spans, here: str) -> Finding | None:
    """``f`` moved ``delta`` lines, or ``None`` when one of its positions is outside ``spans`` (the
    old first and last lines of the classes that moved by ``delta``). ``here``: the document's path
    as messages name it (``ProjectModel.relpath``). The ``node`` is dropped: it belongs to the old tree."""
    try:
        fix = f.fix
        if fix is not None:
            line = getattr(fix, "line", None)
            if not isinstance(line, int):
                return None
            fix = replace(fix, line=_move(line, delta, spans))
        noqa = f.noqa_lines
        if noqa != (0, 0):
            noqa = (_move(noqa[0], delta, spans), _move(noqa[1], delta, spans))
        return replace(
            f,
            line=_move(f.line, delta, spans),
            end_line=_move(f.end_line, delta, spans),
            message=_message(f.message, delta, spans, here),
            noqa_lines=noqa,
            moved=tuple((_move(a, delta, spans), _move(b, delta, spans)) for a, b in f.moved),
            fix=fix,
            node=None,
        )
    except _Unmovable:
        return None
