"""The reference run of a callback that runs on no release: each event given only what it declares.

Why: TW402's fix adds ``**kwargs`` to an event handler that lacks it (``on_log(self, args, state,
control, logs=None)``). Every transformers release of the catalogue passes that event more keywords
(``model``, ``optimizer``, ``train_dataloader``, ...), so the original raises ``TypeError`` at its first
call on every release, and there is no "last release where it ran" to judge the fixed program
against (``oracle_matrix.judge``). What its author wrote it to do is still plain: receive the
arguments it names. This module writes that program: the original, byte for byte, with a footer
that hands each event handler of the module's own callbacks only the keyword arguments it declares.
The fixed program must train exactly as that one does on the same release; anything else the fix
changed shows as a difference. Only classes defined at the module's top level are reached: a callback
class defined inside a function still refuses the keyword, and ``oracle_matrix`` then says the reference
cannot reach it rather than calling the fix different.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The first line of the original's error when one of its event handlers lacks ``**kwargs``.
EVENT_KEYWORD = re.compile(r"\.(on_\w+)\(\) got an unexpected keyword argument")

SUFFIX = "_declared_reference"

FOOTER = """

# trainwright's behaviour oracle: each event handler given only the keyword arguments it declares
import trainwright.testing.declared as _trainwright_declared

_trainwright_declared.declared_only(globals())
"""

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def needs_reference(error: str) -> bool:
    """Whether ``error`` (a record's first error line) is an event handler refusing a keyword."""
    return EVENT_KEYWORD.search(error) is not None


def write_reference(original: Path, folder: Path) -> Path:
    """The reference copy of ``original``, written into ``folder`` (the original's own folder for a
    module of a project, so that its relative imports still work; never a file the user gave)."""
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / f"{original.stem}{SUFFIX}.py"
    dest.write_text(original.read_text(encoding="utf-8") + FOOTER, encoding="utf-8")
    return dest


def declared_only(namespace: dict[str, Any]) -> None:
    """Give every event handler (``on_*``) of the callbacks defined in ``namespace`` (a module's
    globals) that takes no ``**kwargs`` only the keyword arguments it declares."""
    transformers = sys.modules.get("transformers")
    base = getattr(transformers, "TrainerCallback", None)
    if base is None:  # the module defines no transformers callback: nothing to hand arguments to
        return
    for value in list(namespace.values()):
        if not (isinstance(value, type) and issubclass(value, base)):
            continue
        if value.__module__ != namespace.get("__name__"):
            continue
        for name, handler in list(vars(value).items()):
            if name.startswith("on_") and inspect.isfunction(handler) and not _takes_any(handler):
                setattr(value, name, _given_declared(handler))


def _takes_any(handler: Callable[..., Any]) -> bool:
    kinds = {p.kind for p in inspect.signature(handler).parameters.values()}
    return inspect.Parameter.VAR_KEYWORD in kinds


def _given_declared(handler: Callable[..., Any]) -> Callable[..., Any]:
    names = {n for n, p in inspect.signature(handler).parameters.items() if p.kind in _NAMED}

    @functools.wraps(handler)
    def given(self: Any, *args: Any, **kwargs: Any) -> Any:
        return handler(self, *args, **{k: v for k, v in kwargs.items() if k in names})

    return given
