"""``trainwright server`` as a command, without an editor: what it says when pygls is missing, and
that ``trainwright lint`` (the pre-commit hook) never imports the server or pygls."""

from __future__ import annotations

import shutil
from pathlib import Path

from checkout import GALLERY, run_python


def test_without_pygls_the_command_names_the_extra() -> None:
    code = "import sys; sys.modules['pygls'] = None; from trainwright_lint.cli import main; sys.exit(main(['server']))"
    done = run_python(["-c", code], timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        (
            "trainwright server: error: the language server needs pygls (pygls is missing): "
            "pip install 'trainwright[server]'"
        )
    ]


def test_lint_never_imports_the_language_server(tmp_path: Path) -> None:
    """The pre-commit hook runs ``trainwright lint``: pygls is not its business (nor installed there)."""
    shutil.copy(GALLERY / "tokenizer_before.py", tmp_path)
    code = (
        "import sys; from trainwright_lint.cli import main; main(['lint', 'tokenizer_before.py']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol') or 'server' in m))"
    )
    done = run_python(["-c", code], cwd=tmp_path, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[]"
