"""What the language server keeps between requests, with no LSP in it: settings and project model
per project, and the lint and fixes of one document's in-memory text.

Settings are the CLI's (``configuration.settings_for_paths`` on the document's folder), so an editor
checks against the same range, rules and trainer bases as ``trainwright lint FILE``. Each project
keeps one ``Workspace`` for the life of the server: files holding base classes are read and parsed
once, and an open document's text replaces its file's in the model (``engine.lint_tree`` adds it),
so a change re-lints that document only. The lint is ``driver.relinter`` (the fixer's re-lint:
``# noqa`` honoured, each finding with its fix) and the fixes are ``fixes.fix_bytes``, so a code
action's text is what ``trainwright fix`` writes.
"""

from __future__ import annotations

import ast
import io
import os
import sys
import tokenize
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from trainwright_lint.analysis.workspace import Workspace
from trainwright_lint.configuration import LintConfig, settings_for_paths
from trainwright_lint.driver import relinter
from trainwright_lint.engine import single_file_workspace
from trainwright_lint.finding import Finding, not_linted
from trainwright_lint.fixes import FixError, Linter, fix_bytes
from trainwright_lint.fixes.segment import SegmentError, decode
from trainwright_lint.server.incremental import Memo, lint_document
from trainwright_lint.sourcefile import text_digest

_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


@dataclass
class Project:
    """One project's settings and the model every document of it is linted against."""

    config: LintConfig
    workspace: Workspace | None = None  # built on the first lint, kept until a file is deleted
    memos: dict[str, Memo] = field(default_factory=dict)  # per document: what its next lint reuses


def existing_folder(path: str) -> str:
    """The nearest folder at or above ``path`` that exists: a document deleted while open (or its
    whole folder) still belongs to the project around where it was."""
    current = os.path.dirname(os.path.abspath(path))
    while not os.path.isdir(current) and os.path.dirname(current) != current:
        current = os.path.dirname(current)
    return current


class Session:
    """The projects the editor has open documents in, by folder and by root."""

    def __init__(self) -> None:
        self._by_folder: dict[str, Project] = {}
        self._by_root: dict[str, Project] = {}
        self.models_built = 0  # project models built so far (the server re-freezes its heap after one)

    def project(self, path: str) -> Project:
        """The settings of ``path``'s project (cached per folder); raises ``ValueError`` (a
        ``ConfigError``/``TargetError``) as the CLI would exit 2 on it."""
        folder = existing_folder(path)
        found = self._by_folder.get(folder)
        if found is None:
            config = settings_for_paths([folder])
            found = self._by_root.setdefault(str(config.root), Project(config))
            self._by_folder[folder] = found
        return found

    def forget_settings(self) -> None:
        """A ``pyproject.toml`` (or another settings file) changed: resolve everything again."""
        self._by_folder.clear()
        self._by_root.clear()

    def forget_files(self) -> None:
        """A file was deleted or changed on disk outside the editor, or a document closed: every
        model is rebuilt on the next lint (which model holds a file is not tracked; the next lint of
        each open document puts its text back)."""
        for project in self._by_root.values():
            project.workspace = None
            project.memos.clear()

    def _workspace(self, path: str) -> tuple[Project, Workspace]:
        project = self.project(path)
        if project.workspace is None:
            project.workspace = single_file_workspace(os.path.abspath(path), project.config)
            self.models_built += 1
        return project, project.workspace

    def _linter(self, path: str) -> Linter:
        project, workspace = self._workspace(path)
        return relinter(path, project.config, workspace)

    def lint(self, path: str, text: str, whole: bool = False) -> list[Finding]:
        """The findings of ``text`` as the file at ``path``: a TW000 finding when the text does not
        parse, the settings are wrong, or the lint itself failed (printed to stderr), never an
        exception: an editor must keep a working server whatever the user types. Only the classes
        the edit since the last lint can change are linted again (``incremental``); ``whole`` lints
        every class, for the fixer (a finding's fix must hold this text's nodes)."""
        try:
            project, workspace = self._workspace(path)
        except (ValueError, OSError) as exc:  # a ConfigError or TargetError: the CLI exits 2 on it
            return [not_linted(path, f"not linted: the project's settings: {exc}")]
        try:
            if whole:
                return sorted(relinter(path, project.config, workspace)(text), key=Finding.sort_key)
            memo = project.memos.pop(path, None)
            found, memo = lint_document(path, text, project.config, workspace, memo)
            if memo is not None:
                project.memos[path] = memo
            return found
        except SyntaxError as exc:
            message = f"cannot parse ({exc.__class__.__name__}: {exc.msg})"
            return [not_linted(path, message, exc.lineno, exc.offset)]
        except _PARSE_ERRORS as exc:
            return [not_linted(path, f"cannot parse ({exc.__class__.__name__}: {exc})")]
        except Exception as exc:  # noqa: BLE001 - one document's failure must not stop the server
            traceback.print_exc(file=sys.stderr)
            return [not_linted(path, f"not linted: internal error ({exc.__class__.__name__}: {exc})")]

    def fix_all(self, path: str, text: str, findings: Sequence[Finding], unsafe: bool = False) -> str | None:
        """The text ``trainwright fix`` (``--unsafe-fixes`` with ``unsafe``) would write for ``text``,
        or ``None`` when nothing changes or it cannot be fixed. ``findings`` are ``lint(path, text)``."""
        return self._fixed(path, text, self._linter(path), findings, unsafe)

    def fix_one(self, path: str, text: str, finding: Finding, findings: Sequence[Finding]) -> str | None:
        """``text`` with ``finding``'s fix applied, and the fixes of the findings that fix itself
        creates in the same method (TW301 adds a parameter, then TW302 drops it from the ``super()``
        call on the releases that reject it), but no other finding's: a quick fix does what it says."""
        lint = self._linter(path)
        before = {_key(f) for f in findings}
        own = _key(finding)

        def only_this(code: str, tree: ast.Module | None = None, /) -> list[Finding]:
            return [f for f in lint(code, tree) if _key(f) == own or _created(f, finding, before)]

        return self._fixed(path, text, only_this, [finding], unsafe=True)

    @staticmethod
    def _fixed(path: str, text: str, lint: Linter, first: Sequence[Finding], unsafe: bool) -> str | None:
        try:
            # ``first`` are the findings of ``text``: the fixer trusts them only on that very text.
            known = (text_digest(text), list(first))
            outcome = fix_bytes(as_bytes(text), path, lint, unsafe=unsafe, first=known)
            return decode(outcome.fixed).text if outcome.changed else None
        except (FixError, SegmentError, UnicodeError, SyntaxError):
            return None
        except Exception:  # noqa: BLE001 - a fixer failure costs the action, never the server
            traceback.print_exc(file=sys.stderr)
            return None


def as_bytes(text: str) -> bytes:
    """``text`` as its file would hold it: in the encoding its PEP 263 line declares (the fixer reads
    bytes, and decodes them the way the interpreter does), else UTF-8."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(text.encode("utf-8")).readline)
    return text.encode("utf-8" if encoding == "utf-8-sig" else encoding)


def _key(f: Finding) -> tuple[str, str | None, str | None]:
    return (f.code, f.class_name, f.method)


def _created(f: Finding, fixing: Finding, before: set[tuple[str, str | None, str | None]]) -> bool:
    """Whether ``f`` is a finding a fix of ``fixing`` created: in the same class and method, and of a
    code that method did not have before."""
    return (f.class_name, f.method) == (fixing.class_name, fixing.method) and _key(f) not in before
