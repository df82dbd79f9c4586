"""Why a program cannot run on the toy model, in a few named kinds (for the oracle matrix's tally).

Why: a matrix that says "57 not runnable" tells nobody what to do; one that says "9 need a package
that is not installed, 6 need constructor arguments only the project has" says which are the toy
run's limits and which are the project's. The kind is read from the first line of the original's
error, as the oracle recorded it; nothing is guessed beyond it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

CALL_SITE = "a call-site fix in the repository's own script (the oracle builds the Trainer)"
STAND_IN = "a call-site rename with no stand-in"

_MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
# a module of the libraries themselves that this release does not have (``transformers.deepspeed``)
_LIBRARY_MODULE = re.compile(r"ModuleNotFoundError: No module named '(transformers|trl|accelerate|peft)\.")
_REMOVED = re.compile(
    r"ImportError: cannot import name '(\w+)' from '(transformers|trl|accelerate|peft)[\w.]*'"
)

#: (kind, pattern on the error's first line), the first that matches wins.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (  # ``trainwright.testing.standins``: a package absent here, imported, stood in for, then used
        "uses a package that is not installed (its stand-in was touched)",
        re.compile(r"OracleStandInUsed: uses `[^`]+`, and [\w.]+ is not installed"),
    ),
    (  # ``trainwright.testing.standins``: imported, stood in for, then used by the run
        "uses a name its transformers/TRL release lacks (its stand-in was touched)",
        re.compile(r"OracleStandInUsed: uses `"),
    ),
    (
        "the fixed and original programs import different names the release lacks",
        re.compile(r"^the fixed program also imports|^the fix drops the import of"),
    ),
    (
        "a field of the project's own arguments with no literal default",
        re.compile(r"NotRunnable: reads .* of the project's `"),
    ),
    (  # the dev split's `trl` repository is TRL 1.16's own code (Requires-Dist transformers>=4.56.2):
        # its configs and lazy modules read what 4.46 lacks, whatever TRL the release folder holds
        "TRL 1.16.0's own code (the `trl` repository), which needs transformers>=4.56.2",
        re.compile(r"'_BaseConfig' has no attribute|Failed to import trl\.|_VALID_DICT_FIELDS"),
    ),
    ("a name its transformers/TRL release does not have", _LIBRARY_MODULE),
    ("a package that is not installed", _MISSING),
    (  # a library probed a package stood in for while the program's module imported (``standins``)
        "a package that is not installed",
        re.compile(r"ValueError: [\w.]+\.__spec__ is None"),
    ),
    ("a name its transformers/TRL release does not have", _REMOVED),
    (
        "constructor arguments only the project can give",
        re.compile(r"NotRunnable: .* requires |__init__\(\) missing \d+ required"),
    ),
    (  # the toy model's config: the project's own model reads fields of its own config
        "a model of its own (a field its config has and the toy model's does not)",
        re.compile(r"AttributeError: 'Qwen2Config' object has no attribute"),
    ),
    (
        "its own fields of TrainingArguments",
        re.compile(r"AttributeError: '\w*(Arguments|Config)' object has no attribute"),
    ),
    ("a Trainer keyword this release does not take", re.compile(r"got an unexpected keyword argument")),
    (
        "a `datasets.Dataset` (the toy data is a list)",
        re.compile(r"must be a `Dataset`|'list' object has no attribute '(map|column_names|select)'"),
    ),
    (  # TRL's AsyncGRPO/AsyncDistillation: ``model: str``, completions from a vLLM server
        "a model name it loads itself (not a model object), generating through a vLLM server",
        re.compile(r"stat: path should be string, bytes, os.PathLike or integer, not \w+For\w+"),
    ),
    (
        "a model it loads itself (a name, or generation settings)",
        re.compile(r"not Qwen2\w+|object has no attribute 'generation_config'"),
    ),
    ("settings of its own the toy run does not meet", re.compile(r"must be divisible by")),
    (
        "data in the project's own format",
        re.compile(
            r"KeyError: '(prompt|chosen|rejected|completion|text|messages|images?|label|output_ids)'"
            r"|dataset with|local variable 'output_ids'"
        ),
    ),
    ("a relative import outside a package", re.compile(r"attempted relative import")),
    ("data it downloads when imported (offline here)", re.compile(r"Offline mode: run this script without")),
    (  # nn_pruning's `mask_init: InitDirective = InitDirective()`: Python 3.11 refuses it
        "its own code, which Python 3.11 refuses (a mutable dataclass default)",
        re.compile(r"mutable default .* is not allowed: use default_factory"),
    ),
    (  # open-unlearning's RMU steers `model.layers.7`: the toy model has one layer
        "a layer of its own model the toy model lacks",
        re.compile(r"No module matched with"),
    ),
)


def _own(name: str, tree: Path | None) -> bool:
    """Whether the project under ``tree`` holds a module or package ``name`` (its top-level part)."""
    top = name.split(".")[0]
    if tree is None or not tree.is_dir():
        return False
    return any(p.stem == top for p in tree.rglob(f"{top}*") if p.is_dir() or p.suffix == ".py")


def kind(reason: str, tree: Path | None = None) -> str:
    """The named kind of ``reason`` (the first line of an error, or ``CALL_SITE``), else ``other``;
    a missing module is the project's own when ``tree`` (its root) holds it."""
    if reason == CALL_SITE:
        return "a call-site fix in the project's own script"
    if reason.startswith(STAND_IN):
        return STAND_IN + " (a value only the project has)"
    line = reason.removeprefix("original and fixed fail alike: ")
    for name, pattern in KINDS:
        match = pattern.search(line)
        if match is None:
            continue
        if pattern is _MISSING:
            module = match.group(1).split(".")[0]
            return (
                f"its own module `{module}`, not importable" if _own(module, tree) else f"{name} (`{module}`)"
            )
        return name
    return "other"


_LOOK_UP = re.compile(r" because of the following error \(look up to see its traceback\):?")


def error_line(exc: BaseException, normalise: Callable[[str], str] = str) -> str:
    """The one line the oracle records for ``exc`` (``Type: first line``), and the exception it was
    raised from. Why: a lazy module's ``RuntimeError: Failed to import models.modeling_base because of
    the following error (look up to see its traceback)`` says why only in its cause
    (``ModuleNotFoundError: No module named 'transformers.deepspeed'``), and :func:`kind` reads this
    line alone. ``normalise`` (the child's, which hides paths and numbers) is applied to each message."""

    def first(e: BaseException) -> str:
        text = normalise(str(e)) if str(e).strip() else ""
        return text.splitlines()[0] if text.strip() else ""

    line = f"{type(exc).__name__}: {first(exc)}"
    if exc.__cause__ is not None:
        line = _LOOK_UP.sub("", line) + f" <- {type(exc.__cause__).__name__}: {first(exc.__cause__)}"
    return line
