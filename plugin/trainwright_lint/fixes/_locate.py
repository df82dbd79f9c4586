"""Finding libcst nodes by the 1-based line an ``ast`` finding reported."""

from __future__ import annotations

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


def is_super_call(node: cst.BaseExpression, method: str) -> bool:
    """``super().method`` / ``super(C, self).method`` as a call's ``func``."""
    return (
        isinstance(node, cst.Attribute)
        and node.attr.value == method
        and isinstance(node.value, cst.Call)
        and isinstance(node.value.func, cst.Name)
        and node.value.func.value == "super"
    )


def extend_commas(items: list, new: list, opening: cst.BaseParenthesizableWhitespace | None = None) -> list:
    """``items + new`` (libcst ``Param``/``Arg`` lists) laid out like ``items``.

    Without explicit commas libcst writes ``", "`` itself. With a trailing comma (one item per line)
    the separators are copied: the old last item and all but the last new item take the separator
    between the last two old items (newline + item indentation), the new last item takes the trailing
    comma (newline + closing-bracket indentation). With a single old item the separator is built from
    ``opening``, the whitespace after the opening bracket."""
    if not new:
        return list(items)
    last = items[-1].comma if items else cst.MaybeSentinel.DEFAULT
    if not isinstance(last, cst.Comma):
        return [*items, *(n.with_changes(comma=cst.MaybeSentinel.DEFAULT) for n in new)]
    if len(items) >= 2 and isinstance(items[-2].comma, cst.Comma):
        sep = items[-2].comma
    elif isinstance(opening, cst.ParenthesizedWhitespace):
        sep = cst.Comma(whitespace_after=opening)
    else:
        sep = last
    out = [*items[:-1], items[-1].with_changes(comma=sep)]
    out += [n.with_changes(comma=sep) for n in new[:-1]]
    out.append(new[-1].with_changes(comma=last))
    return out
