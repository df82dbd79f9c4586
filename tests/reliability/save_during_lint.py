"""Run the ``trainwright`` CLI with a save landing while it works (a deterministic stand-in for an
editor saving during a slow run): ``python save_during_lint.py PHASE TARGET NEW_TEXT_FILE -- ARGS...``.

``PHASE`` ``lint``: right after ``TARGET``'s lint task returns (its findings computed from the text
read then), the file is overwritten with the content of ``NEW_TEXT_FILE``, as an editor would save it.
``PHASE`` ``fix``: the same save right after the fixer computed the fixed text, before it is written.
Once per run (``NEW_TEXT_FILE.saved`` marks it done: ``lint --fix`` lints again after fixing). Worker
processes are forked from this one, so ``-j 2`` runs the hook too. Nothing else is changed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from trainwright_lint import driver, runner
from trainwright_lint.cli import main


def _save_once(path: str) -> None:
    target, new_text = sys.argv[2], sys.argv[3]
    done = new_text + ".saved"
    if os.path.realpath(path) != os.path.realpath(target) or os.path.exists(done):
        return
    with open(new_text, "rb") as fh:
        new = fh.read()
    with open(target, "wb") as fh:  # an editor's plain save
        fh.write(new)
    open(done, "wb").close()


def _then_save(task: Callable[..., Any], which: int) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        value = task(*args, **kwargs)
        _save_once(args[which])
        return value

    return wrapped


if __name__ == "__main__":
    if sys.argv[1] == "lint":
        runner._lint = _then_save(runner._lint, 1)  # type: ignore[assignment]
    else:
        driver.fix_bytes = _then_save(driver.fix_bytes, 1)  # type: ignore[assignment]
    sys.exit(main(sys.argv[5:]))
