"""Cheap textual gate: skip files that cannot define a Trainer subclass or a callback.

Why: parsing is the linter's whole cost, and almost no file of a typical code base subclasses
``Trainer`` (transformers itself: 27 of 2,912 files even mention the word). A file is parsed only if
it has a ``class X(...)`` statement with bases *and* mentions one of the keywords below, an extra
base name from the configuration, or (CLI) the name of a Trainer subclass found elsewhere in the
project. Aliases still pass: ``from transformers import Trainer as T`` contains the word ``Trainer``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

KEYWORDS: tuple[str, ...] = ("Trainer", "Callback")

# A line starts after "\n" or a lone "\r" (old Mac files, which Python accepts); indentation may hold "\f".
_CLASS_WITH_BASES = re.compile(r"(?:^|\r)[ \t\f]*class[ \t]+\w+[ \t]*\(", re.MULTILINE)


def has_class_with_bases(text: str) -> bool:
    return "class" in text and _CLASS_WITH_BASES.search(text) is not None


def mentions(text: str, names: Iterable[str]) -> bool:
    return any(name in text for name in names)


def gate_words(extra_names: Iterable[str] = ()) -> tuple[str, ...]:
    """Keywords plus the last component of each extra base name (``mylib.Base`` -> ``Base``)."""
    words = list(KEYWORDS)
    for name in extra_names:
        last = name.rsplit(".", 1)[-1].strip()
        if last and last not in words:
            words.append(last)
    return tuple(words)


def might_define_target(text: str, words: Iterable[str] = KEYWORDS) -> bool:
    """True when ``text`` may define a Trainer subclass, a mixin base of one, or a callback."""
    return mentions(text, words) and has_class_with_bases(text)


def names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    """A regex matching any of ``names`` as a whole word (for the CLI's cross-file expansion)."""
    names = sorted({n for n in names if n})
    if not names:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b")
