"""A real LSP client (pytest-lsp's, over pygls) driving ``trainwright server`` in a subprocess, and
the few helpers the server tests share: open/change a document and wait for its diagnostics, apply a
workspace edit the way an editor does (an applier independent of the server's own code)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from checkout import server_env
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient

WAIT_S = 60.0  # generous: the machine running the tests may be busy


class Editor:
    """The client side of one session: the documents it has open and what the server published."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.published: list[types.PublishDiagnosticsParams] = []
        self.registrations: list[types.Registration] = []  # what the server asked to be told about
        self.versions: dict[str, int] = {}

    async def wait_for(self, uri: str, version: int | None, after: int = 0) -> list[types.Diagnostic]:
        """The first diagnostics published for ``uri`` (at ``version``, when given) after the
        ``after``-th publication; fails after ``WAIT_S``."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            for params in self.published[after:]:
                if params.uri == uri and (version is None or params.version == version):
                    return list(params.diagnostics)
            await asyncio.sleep(0.005)
        raise AssertionError(f"no diagnostics for {uri} (version {version}) within {WAIT_S}s")

    async def open(self, path: Path, text: str | None = None) -> list[types.Diagnostic]:
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8") if text is None else text
        self.versions[uri] = 1
        mark = len(self.published)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )
        return await self.wait_for(uri, 1, mark)

    async def replace(self, path: Path, text: str) -> list[types.Diagnostic]:
        """Send the whole new text as one change (what many clients do) and wait for its diagnostics."""
        uri = path.as_uri()
        self.versions[uri] += 1
        mark = len(self.published)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await self.wait_for(uri, self.versions[uri], mark)

    async def actions(self, path: Path, diag: types.Diagnostic) -> list[types.CodeAction]:
        found = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
                range=diag.range,
                context=types.CodeActionContext(diagnostics=[diag]),
            )
        )
        return [a for a in found or [] if isinstance(a, types.CodeAction)]


@asynccontextmanager
async def editor_session(
    cwd: Path, capabilities: types.ClientCapabilities | None = None
) -> AsyncIterator[Editor]:
    """``trainwright server`` started in ``cwd``, initialised (as a client with ``capabilities``, by
    default none), and shut down cleanly at the end."""
    client = LanguageClient(converter_factory=default_converter)
    editor = Editor(client)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        editor.published.append(params)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: types.RegistrationParams) -> None:
        editor.registrations += params.registrations

    await client.start_io(sys.executable, "-m", "trainwright_lint", "server", cwd=str(cwd), env=server_env())
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or types.ClientCapabilities(),
            root_uri=cwd.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=cwd.as_uri(), name=cwd.name)],
        )
    )
    try:
        yield editor
    finally:
        await asyncio.wait_for(client.shutdown_session(), WAIT_S)
        await client.stop()


def _offset(text: str, position: types.Position) -> int:
    """The offset of an LSP position (UTF-16 units, the default encoding) in ``text``."""
    lines = text.splitlines(keepends=True)
    before = sum(len(line) for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for i, char in enumerate(line):
        if units >= position.character:
            return before + i
        units += 2 if ord(char) > 0xFFFF else 1
    return before + len(line)


def apply_edit(text: str, edit: types.WorkspaceEdit, uri: str) -> str:
    """``text`` after the workspace edit's changes to ``uri``, applied from the last to the first as an
    editor applies them (they never overlap)."""
    edits = list((edit.changes or {}).get(uri, []))
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri:
            edits += change.edits
    spans = sorted(
        ((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits), reverse=True
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text
