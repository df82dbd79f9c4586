"""The fast ``# noqa`` scans (on the text's folded UTF-8 bytes) answer as the case-insensitive ``str``
patterns do: every text the exact test accepts, the folded pre-scan lets through."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trainwright_lint import noqa

_NEWLINES = re.compile(r"\r\n|\r|\n")

# Pieces that sit on the edges: case, the KELVIN SIGN (which re.IGNORECASE equates with "k"), Unicode
# spaces (``\s`` in a str pattern), line breaks, non-ASCII letters before and after.
PIECES = [
    "# noqa",
    "noqa",
    "NoQa",
    ":",
    " ",
    "\u00a0",
    "\u2028",
    "\x1c",
    "\x85",
    "\t",
    "\n",
    "\r",
    "TW",
    "tW",
    "101",
    "# flake8",
    "# FLAKE8",
    "# fla\u212ae8",
    "=",
    "é",
    "→",
    "😀",
    "x = 1",
]


def exact_lists_codes(source: str) -> bool:
    return noqa._MAYBE_LISTS_TW.search(source) is not None


def exact_skipped(source: str) -> bool:
    return noqa.file_is_skipped(_NEWLINES.split(source))  # the line-by-line reference


texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_folded_scans_agree_with_the_str_patterns(source: str) -> None:
    assert noqa.may_list_codes(source) is exact_lists_codes(source)
    assert noqa.file_is_skipped(_NEWLINES.split(source), source) is exact_skipped(source)


@pytest.mark.parametrize(
    ("source", "lists", "skipped"),
    [
        ("x = 1  # NOQA:tw101\n", True, False),
        ("x = 1  # noqa\u00a0: TW101\n", True, False),  # a Unicode space before the colon
        ("x = 1  # noqa: E501\n", False, False),
        ("# fla\u212ae8: noqa\nx = 1\n", False, True),  # KELVIN SIGN for the k
        ("# FLAKE8= NOQA\n", False, True),
        ("s = '→'  # flake8: noqa extra\n", False, False),
        ("", False, False),
    ],
)
def test_edge_cases(source: str, lists: bool, skipped: bool) -> None:
    assert noqa.may_list_codes(source) is lists is exact_lists_codes(source)
    assert noqa.file_is_skipped(_NEWLINES.split(source), source) is skipped is exact_skipped(source)


def test_folded_text_is_recomputed_for_another_text() -> None:
    """The one-text cache answers by identity: an equal but different text, or a new one, is folded anew."""
    first = "a = 1  # noqa: TW101\n"
    assert noqa.may_list_codes(first)
    assert not noqa.may_list_codes("a = 1\n")
    again = first[:-1] + "\n"  # equal to ``first``, another object
    assert again is not first and noqa.may_list_codes(again)
