"""libcst helpers the rules' fix transforms (``rules/*_fix.py``) share: finding nodes by the 1-based
line an ``ast`` finding reported, and laying out added parameters and arguments.

Imported only by fix modules, which only ``fixes/`` imports: lint never loads libcst."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

import libcst as cst
from libcst.metadata import PositionProvider


class LineTransformer(cst.CSTTransformer):
    """Base class: ``self.line_of(node)`` is the 1-based line where ``node`` starts."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def line_of(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def def_line(self, node: cst.FunctionDef) -> int:
        """The line of the ``def`` keyword (ast's ``lineno``), decorators excluded."""
        return self.line_of(node.name)


class MethodEdit(Protocol):
    """An edit of one method, addressed as lint reported it: its ``def`` line and its name (read-only,
    as the frozen dataclasses that implement it hold them)."""

    @property
    def line(self) -> int: ...

    @property
    def method(self) -> str: ...


E = TypeVar("E", bound=MethodEdit)


class MethodTransformer(LineTransformer, Generic[E]):
    """Base class of fixes that edit whole methods: ``edit_for(def)`` is the edit for that method, if any."""

    def __init__(self, edits: Sequence[E]) -> None:
        super().__init__()
        self.edits: dict[tuple[int, str], E] = {(e.line, e.method): e for e in edits}

    def edit_for(self, node: cst.FunctionDef) -> E | None:
        return self.edits.get((self.def_line(node), node.name.value))


def is_super_call(node: cst.BaseExpression, method: str) -> bool:
    """``super().method`` / ``super(C, self).method`` as a call's ``func``."""
    return (
        isinstance(node, cst.Attribute)
        and node.attr.value == method
        and isinstance(node.value, cst.Call)
        and isinstance(node.value.func, cst.Name)
        and node.value.func.value == "super"
    )


# Where each list element keeps the whitespace that follows it (before the next comma or the bracket).
_AFTER: dict[type, str] = {
    cst.Param: "whitespace_after_param",
    cst.Arg: "whitespace_after_arg",
    cst.ParamSlash: "whitespace_after",
}


def _plain(ws: cst.BaseParenthesizableWhitespace) -> cst.BaseParenthesizableWhitespace:
    """``ws``'s layout (newline and indentation) without its comment, trailing spaces or blank lines:
    what a new element may copy from an old one."""
    if isinstance(ws, cst.ParenthesizedWhitespace):
        return ws.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
    return ws


def _keep_line_end(sep: cst.Comma, end: cst.BaseParenthesizableWhitespace) -> cst.Comma:
    """``sep`` ending its line the way ``end`` does (a comment on the old last element's line stays
    on that line). Only for one-element-per-line layouts, where both are line breaks."""
    if isinstance(sep.whitespace_after, cst.ParenthesizedWhitespace) and isinstance(
        end, cst.ParenthesizedWhitespace
    ):
        return sep.with_changes(whitespace_after=sep.whitespace_after.with_changes(first_line=end.first_line))
    return sep


def _separator(items: list[Any], opening: cst.BaseParenthesizableWhitespace | None) -> cst.Comma:
    """The comma (and line break plus indentation, if any) that separates the elements of ``items``."""
    if len(items) >= 2 and isinstance(items[-2].comma, cst.Comma):
        sep: cst.Comma = items[-2].comma
        return sep.with_changes(whitespace_after=_plain(sep.whitespace_after))
    if isinstance(opening, cst.ParenthesizedWhitespace):
        return cst.Comma(whitespace_after=_plain(opening))
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def extend_commas(
    items: list[Any], new: list[Any], opening: cst.BaseParenthesizableWhitespace | None = None
) -> list[Any]:
    """``items + new`` (libcst ``Param``/``ParamStar``/``Arg`` lists) laid out like ``items``.

    The separator is the one between the last two old elements (``", "``, or a comma, newline and the
    element indentation in a one-per-line layout); with a single old element it is built from
    ``opening``, the whitespace after the opening bracket. A trailing comma stays trailing (it moves
    to the new last element). Without one, the whitespace before the closing bracket moves from the
    old last element to the new last one, so ``(\n    a,\n    b\n)`` becomes
    ``(\n    a,\n    b,\n    c\n)``. Comments and blank lines are never copied onto new elements:
    a comment ending the old last element's line stays there, and no new line gets trailing spaces."""
    if not new:
        return list(items)
    if not items:
        return [
            n if isinstance(n, cst.ParamStar) else n.with_changes(comma=cst.MaybeSentinel.DEFAULT)
            for n in new
        ]
    last = items[-1]
    sep = _separator(items, opening)
    one_per_line = isinstance(sep.whitespace_after, cst.ParenthesizedWhitespace)
    tail_changes: dict[str, object]
    if isinstance(last.comma, cst.Comma):  # trailing comma: it ends the new last element instead
        end = last.comma.whitespace_after
        head = last.with_changes(comma=_keep_line_end(sep, end) if one_per_line else sep)
        tail_comma = last.comma.with_changes(whitespace_after=_plain(end)) if one_per_line else last.comma
        tail_changes = {"comma": tail_comma}
    else:
        attr = _AFTER.get(type(last))
        closing = getattr(last, attr) if attr else cst.SimpleWhitespace("")
        head_changes: dict[str, object] = {"comma": _keep_line_end(sep, closing) if one_per_line else sep}
        if attr:
            head_changes[attr] = cst.SimpleWhitespace("")
        head = last.with_changes(**head_changes)
        tail_changes = {"comma": cst.MaybeSentinel.DEFAULT}
        new_attr = _AFTER.get(type(new[-1]))
        if new_attr:
            tail_changes[new_attr] = _plain(closing) if one_per_line else closing
    return [
        *items[:-1],
        head,
        *(n.with_changes(comma=sep) for n in new[:-1]),
        new[-1].with_changes(**tail_changes),
    ]
