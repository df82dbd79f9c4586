"""Text searches that start with a literal word, found with ``str.find`` and checked in place.

Why: the linter reads many whole files for a few words (``self.x(`` calls, ``super(``, class
statements) before it touches a tree. Python's regular-expression engine scans for such a pattern
several times slower than ``str.find``, and slower still on 2-byte text: one non-Latin-1 character
anywhere (an emoji in a docstring; two thirds of TRL's trainer files) makes the whole file 2-byte.
So each search here finds its literal with ``str.find`` and matches only the rest of the pattern,
with ``re.match``, where the literal was found. Matches are the ones ``re.finditer`` would give for
the same regular expression: after a match the search resumes at its end.

Only for a literal that is rare in the text: each occurrence costs a step of Python, so for a word
found thousands of times per file (``self.``) one regular expression is faster.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# What follows "class" in a class statement: its name (and, with bases, then "(", or type parameters
# in brackets first: ``class T[X](Trainer):``, PEP 695, which the scan used to miss).
_CLASS_NAME = re.compile(r"[ \t]+\w")
_CLASS_REST = re.compile(r"[ \t]+\w+[ \t]*(\(|\[)")
_AFTER_TYPE_PARAMETERS = re.compile(r"\s*\(")
TYPE_PARAMETERS_MAX = 2000  # characters scanned for the closing bracket of a class's type parameters


def _bases_follow(text: str, match: re.Match[str]) -> bool:
    """Whether the class statement ``match`` found goes on with bases: "(" at once, or after its
    bracketed type parameters (nested brackets counted, at most ``TYPE_PARAMETERS_MAX`` characters)."""
    if match[1] == "(":
        return True
    depth, at, end = 0, match.end(1) - 1, min(len(text), match.end(1) + TYPE_PARAMETERS_MAX)
    while at < end:
        c = text[at]
        depth += (c == "[") - (c == "]")
        if depth == 0:
            return _AFTER_TYPE_PARAMETERS.match(text, at + 1) is not None
        at += 1
    return False


class LiteralScan:
    """The regular expression ``re.escape(literal) + rest``; ``group(1)`` is the first group of
    ``rest``. ``pattern`` is that expression's text (a cache key, as for ``re.Pattern``)."""

    def __init__(self, literal: str, rest: str = "") -> None:
        self.literal = literal
        self.rest = re.compile(rest)
        self.pattern = re.escape(literal) + rest

    def finditer(self, text: str) -> Iterator[tuple[int, re.Match[str]]]:
        """``(offset of the literal, match of the rest)`` for each match, in order."""
        literal, match = self.literal, self.rest.match
        size = len(literal)
        at = text.find(literal)
        while at != -1:
            found = match(text, at + size)
            if found is None:
                at = text.find(literal, at + 1)
            else:
                yield at, found
                at = text.find(literal, max(found.end(), at + 1))

    def search(self, text: str) -> bool:
        return next(self.finditer(text), None) is not None


def class_statements(text: str, with_bases: bool = False) -> Iterator[int]:
    """Offsets of each "class" that starts a class statement: only indentation (" ", tab, form feed)
    before it on its line, where a line starts after "\\n" or a lone "\\r" (old Mac files, which
    Python accepts)."""
    rest = _CLASS_REST if with_bases else _CLASS_NAME
    lone_cr = "\r" in text  # else the search for one would run back to the start for every "class"
    at = text.find("class")
    while at != -1:
        found = rest.match(text, at + 5)
        if found:
            line_start = text.rfind("\n", 0, at)
            if lone_cr:
                line_start = max(line_start, text.rfind("\r", 0, at))
            if not text[line_start + 1 : at].strip(" \t\f") and (
                not with_bases or _bases_follow(text, found)
            ):
                yield at
        at = text.find("class", at + 5)
