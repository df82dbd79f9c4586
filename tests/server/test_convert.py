"""Positions and edits in the client's units: a finding after a non-ASCII character, and the one
whole-line edit that turns a text into another (applied by the tests' own applier)."""

from __future__ import annotations

import pytest

pytest.importorskip("pygls")

from lsp_support import apply_edit
from lsprotocol import types
from pygls.workspace import TextDocument
from trainwright_lint.finding import Finding
from trainwright_lint.server.convert import finding_range, replacing_edit, unit_counter


def test_columns_count_utf16_units_after_astral_characters() -> None:
    doc = TextDocument("file:///x.py", "s = '😀é'; t = self.tokenizer\n")
    column = "s = '😀é'; t = ".__len__() + 1  # findings count code points, 1-based
    f = Finding("TW303", "removed-api", "m", "x.py", 1, column, 1, column + len("self.tokenizer"))
    got = finding_range(doc, f)
    assert (got.start.line, got.start.character) == (0, column - 1 + 1)  # the emoji takes two units
    assert got.end.character - got.start.character == len("self.tokenizer")
    assert unit_counter(doc)("😀é") == 3


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("a\nb", "a\nb\n"),
        ("a", "a\nb"),
        ("a\r\nb\r\n", "a\r\nx\r\ny\r\nb\r\n"),
        ("a\nb\n", "b\n"),
        ("same\n", "same\n"),
    ],
)
def test_one_edit_turns_the_old_text_into_the_new(old: str, new: str) -> None:
    edit = replacing_edit(old, new, len)
    assert apply_edit(old, types.WorkspaceEdit(changes={"u": [edit]}), "u") == new
