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

from trainwright_lint.textscan import class_statements

KEYWORDS: tuple[str, ...] = ("Trainer", "Callback")


def has_class_with_bases(text: str) -> bool:
    return next(class_statements(text, with_bases=True), None) is not None


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


# A call that may construct a library class whose arguments changed across releases (TW304):
# ``Trainer(...)``, ``Seq2SeqTrainingArguments(...)``, ``GRPOConfig(...)``, ``DPOTrainerFedProx(...)``,
# ``super().__init__(...)`` (through an attribute, so ``def __init__(`` lines are not candidates).
# Found with ``str.find`` for each word, then the rest of the name and the ``(`` matched in place: six
# times faster than one regular expression over the file, which the engine cannot start with a literal
# scan. A class bound to a name without these words (``from a import PTrainer as P``) is found by
# TW304 from the file's bindings instead.
CONSTRUCTED_WORDS = ("Trainer", "Arguments", "Config")
_REST_OF_CALL = re.compile(r"\w*\s*\(")
_INIT_CALL = re.compile(r"\s*\(")
# (word, what must follow it) for each kind of candidate call.
_CALL_SHAPES = (*((word, _REST_OF_CALL) for word in CONSTRUCTED_WORDS), (".__init__", _INIT_CALL))


def construction_offsets(text: str) -> list[int]:
    """Offsets in ``text`` of each candidate call (sorted): where TW304 looks in a file it lints."""
    out = []
    for word, rest in _CALL_SHAPES:
        out += _calls_after(text, word, rest)
    return sorted(out)


def constructs_library_class(text: str) -> bool:
    """Whether a file without a target class is worth linting for TW304 (a training script). A
    ``...Config(`` call counts only in a file that mentions TRL: its configs are the only ones TW304
    checks, and model configs (``LlamaConfig(...)``) are everywhere in transformers-based code."""
    if any(_calls_after(text, word, _REST_OF_CALL, first_only=True) for word in ("Trainer", "Arguments")):
        return True
    return "trl" in text and bool(_calls_after(text, "Config", _REST_OF_CALL, first_only=True))


def _calls_after(text: str, word: str, rest: re.Pattern[str], first_only: bool = False) -> list[int]:
    out = []
    at = text.find(word)
    while at != -1:
        if rest.match(text, at + len(word)):
            out.append(at)
            if first_only:
                break
        at = text.find(word, at + len(word))
    return out


def worth_linting(text: str, words: Iterable[str] = KEYWORDS) -> bool:
    """The front ends' gate: the file may define a target class, or constructs a Trainer-like class
    (a training script with no class of its own still has ``Trainer(tokenizer=...)`` calls)."""
    if might_define_target(text, words):
        return True
    return constructs_library_class(text)
