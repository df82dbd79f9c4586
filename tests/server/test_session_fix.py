"""The server's fixes start from the findings the editor already holds for the document's text: the
fixer's first pass applies their edits without linting that text again (``fix_bytes``'s ``first``,
keyed by the text's digest), and what it writes is what a fix after a fresh lint writes. The server
asks for them from a whole lint of the current text (``app.code_action``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from checkout import GALLERY
from trainwright_lint.finding import Finding
from trainwright_lint.fixes import fix_bytes
from trainwright_lint.server import session as session_module
from trainwright_lint.server.session import Session, as_bytes


@pytest.fixture
def document(tmp_path: Path) -> Path:
    """A gallery "before" file with safe fixes, in a project of its own."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    path = tmp_path / "broken_callback_before.py"
    path.write_text((GALLERY / "broken_callback_before.py").read_text(encoding="utf-8"), encoding="utf-8")
    return path


@pytest.fixture
def linted_texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the server's fixer lints (the real re-linter runs; its inputs are recorded)."""
    seen: list[str] = []
    real = session_module.relinter

    def recording(*args: object, **kwargs: object) -> Callable[..., list[Finding]]:
        lint = real(*args, **kwargs)  # type: ignore[arg-type]

        def recorded(code: str, tree: object = None) -> list[Finding]:
            seen.append(code)
            return lint(code, tree)  # type: ignore[arg-type]

        return recorded

    monkeypatch.setattr(session_module, "relinter", recording)
    return seen


def test_fix_all_does_not_lint_the_document_again(document: Path, linted_texts: list[str]) -> None:
    text = document.read_text(encoding="utf-8")
    session = Session()
    findings = session.lint(str(document), text, whole=True)  # as the server's code actions do
    linted_texts.clear()
    assert any(f.fix is not None for f in findings)
    fixed = session.fix_all(str(document), text, findings)
    assert fixed is not None and fixed != text
    assert linted_texts and text not in linted_texts  # only the fixed texts were linted
    fresh = fix_bytes(as_bytes(text), str(document), session._linter(str(document)))  # lints `text` first
    assert fixed == fresh.fixed.decode("utf-8")


def test_fix_one_does_not_lint_the_document_again(document: Path, linted_texts: list[str]) -> None:
    text = document.read_text(encoding="utf-8")
    session = Session()
    findings = session.lint(str(document), text, whole=True)  # as the server's code actions do
    linted_texts.clear()
    finding = next(f for f in findings if f.fix is not None)
    fixed = session.fix_one(str(document), text, finding, findings)
    assert fixed is not None and fixed != text
    assert text not in linted_texts
