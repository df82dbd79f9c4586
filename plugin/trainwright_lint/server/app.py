"""The pygls wiring: which LSP messages the server answers and what each one does.

A document is linted when it is opened, changed or saved (``session``); only that document, since the
project model already holds every other file. A save may change what other open documents inherit, so
it re-lints them too; a settings file saved or any watched file deleted or changed outside the editor
drops the cached settings or models, and every open document is linted again. A closed document's
diagnostics are cleared. Findings are kept per document version, so code actions and hovers do not
lint again.
"""

from __future__ import annotations

import gc
import os

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import ServerTextRange, TextDocument

from trainwright_lint import __version__
from trainwright_lint.finding import Finding
from trainwright_lint.server.actions import FIX_ALL_KIND, MOVE_KIND, Request, code_actions, findings_in
from trainwright_lint.server.convert import diagnostic, fix_kind, lsp_lines, server_range
from trainwright_lint.server.hover import hover_text
from trainwright_lint.server.session import Session

SETTINGS_FILES = frozenset({"pyproject.toml", "setup.cfg", "setup.py", "requirements.txt"})


class TrainwrightServer(LanguageServer):
    """A pygls server holding the session and the last findings of each open document."""

    def __init__(self) -> None:
        super().__init__("trainwright", __version__)
        self.session = Session()
        # uri -> (version, text, findings), of the last incremental lint and of the last whole one
        self.found: dict[str, tuple[int | None, str, list[Finding]]] = {}
        self.whole: dict[str, tuple[int | None, str, list[Finding]]] = {}
        self.frozen_at = 0  # ``session.models_built`` when the heap was last frozen

    def path_of(self, doc: TextDocument) -> str:
        """The file a document stands for (an unsaved one: a name in the working folder)."""
        return doc.path or os.path.join(os.getcwd(), os.path.basename(doc.uri) or "untitled.py")

    def findings(self, doc: TextDocument, whole: bool = False) -> list[Finding]:
        """The findings of the document's current text, linted now unless known for this version;
        ``whole``: from a lint of every class, whose findings' fixes the fixer can apply."""
        memo = self.whole if whole else self.found
        known = memo.get(doc.uri)
        if known is not None and known[0] == doc.version and known[1] == doc.source:
            return known[2]
        found = self.session.lint(self.path_of(doc), doc.source, whole=whole)
        memo[doc.uri] = (doc.version, doc.source, found)
        if self.session.models_built != self.frozen_at:
            self.frozen_at = self.session.models_built
            freeze_heap()
        return found

    def publish(self, uri: str) -> None:
        """Lint the document again and send its diagnostics (what was kept for it may be stale:
        the settings or another file may have changed, not only its text)."""
        doc = self.workspace.get_text_document(uri)
        self.found.pop(uri, None)
        self.whole.pop(uri, None)
        lines = lsp_lines(doc.source)
        diagnostics = [diagnostic(doc, f, lines) for f in self.findings(doc)]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=doc.version)
        )

    def publish_open(self, but: str | None = None) -> None:
        for uri in list(self.workspace.text_documents):
            if uri != but and is_python(self.workspace.get_text_document(uri)):
                self.publish(uri)


def freeze_heap() -> None:
    """After a project model is built: collect once, then move everything alive (the model, the
    catalogue, the modules) out of the collector's sight. Why: each change parses the document again
    (a 2,000-line module: a few hundred thousand objects), and the collections that allocation sets
    off walked the whole long-lived heap again and again: a fifth of a change's CPU at the median,
    half of it at p95. A frozen object is still freed when its count drops (the old model, once
    replaced); what was frozen before is thawed first, so a cycle left in an old model is collected
    here rather than kept for the life of the server."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def is_python(doc: TextDocument) -> bool:
    return doc.language_id == "python" or doc.uri.endswith((".py", ".pyi"))


server = TrainwrightServer()


@server.feature(types.INITIALIZED)
def initialized(ls: TrainwrightServer, params: types.InitializedParams) -> None:
    """Ask the client to report files changed outside the editor (a base class edited by ``git
    checkout``, a file deleted, the settings), where it lets a server register for them."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace is not None else None
    if watched is None or not watched.dynamic_registration:
        return
    patterns = ["**/*.py", *(f"**/{name}" for name in sorted(SETTINGS_FILES - {"setup.py"}))]
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=p) for p in patterns]
    )
    registration = types.Registration(
        id="trainwright-watched-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options,
    )
    ls.client_register_capability(types.RegistrationParams(registrations=[registration]))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: TrainwrightServer, params: types.DidOpenTextDocumentParams) -> None:
    if is_python(ls.workspace.get_text_document(params.text_document.uri)):
        ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: TrainwrightServer, params: types.DidChangeTextDocumentParams) -> None:
    if is_python(ls.workspace.get_text_document(params.text_document.uri)):
        ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: TrainwrightServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if os.path.basename(to_fs_path(uri) or "") in SETTINGS_FILES:
        ls.session.forget_settings()
        ls.publish_open()
        return
    if is_python(ls.workspace.get_text_document(uri)):
        ls.publish(uri)
        ls.publish_open(but=uri)  # what the others inherit from this file may have changed


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: TrainwrightServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.found.pop(uri, None)
    ls.whole.pop(uri, None)
    ls.session.forget_files()  # the model goes back to the file on disk (or to no file)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def watched_files(ls: TrainwrightServer, params: types.DidChangeWatchedFilesParams) -> None:
    files_changed(ls, [c.uri for c in params.changes])


@server.feature(types.WORKSPACE_DID_DELETE_FILES)
def deleted_files(ls: TrainwrightServer, params: types.DeleteFilesParams) -> None:
    files_changed(ls, [f.uri for f in params.files])


def files_changed(ls: TrainwrightServer, uris: list[str]) -> None:
    """Files changed, created or deleted outside the editor's buffers: drop what depended on them,
    then lint the open documents again. An open document's own events are left out: the editor's
    text is what is linted (a file deleted while open keeps being linted from it)."""
    open_now = set(ls.workspace.text_documents)
    paths = [p for p in (to_fs_path(uri) for uri in uris if uri not in open_now) if p is not None]
    if not paths:
        return
    if any(os.path.basename(p) in SETTINGS_FILES for p in paths):
        ls.session.forget_settings()
    ls.session.forget_files()
    ls.publish_open()


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND, MOVE_KIND], resolve_provider=False
    ),
)
def code_action(ls: TrainwrightServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    if not is_python(doc):
        return []
    only = [str(k.value if hasattr(k, "value") else k) for k in params.context.only or []] or None
    request = Request(doc, ls.path_of(doc), ls.findings(doc), params.range, only)
    if only is not None or any(fix_kind(f) for f in findings_in(doc, request.findings, params.range)):
        # A fix is computed: from a whole lint, whose findings hold this text's nodes. Editors ask
        # for code actions whenever the cursor moves; most requests need no fix and no whole lint.
        request.findings = ls.findings(doc, whole=True)
    return code_actions(ls.session, request)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: TrainwrightServer, params: types.HoverParams) -> types.Hover | None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    if not is_python(doc):
        return None
    at = doc.position_from_client_units(params.position)
    under = [f for f in ls.findings(doc) if server_range(f).overlaps(ServerTextRange(at, at))]
    if not under:
        return None
    content = types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_text(under))
    return types.Hover(contents=content, range=doc.range_to_client_units(server_range(under[0])))


def serve() -> None:
    """Run the server on stdin/stdout until the client asks it to exit."""
    server.start_io()
