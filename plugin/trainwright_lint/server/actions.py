"""Code actions: per finding its fix (safe ones preferred quick fixes, unsafe ones titled so and never
preferred), a ``# noqa`` comment, and for TW2xx the callback move (the finding's unsafe move fix, the
one ``trainwright fix --suggest`` previews, as a refactoring); per document "fix all", the text
``trainwright fix`` writes.

Every edit comes from ``session`` (the CLI's fixer run on the document's text), turned into one
whole-line replacement (``convert.replacing_edit``); nothing here knows a rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lsprotocol import types
from pygls.workspace import TextDocument

from trainwright_lint.finding import Finding
from trainwright_lint.output.json_format import noqa_row
from trainwright_lint.server.convert import (
    diagnostic,
    fix_kind,
    lsp_lines,
    replacing_edit,
    server_range,
    unit_counter,
)
from trainwright_lint.server.session import Session
from trainwright_lint.suggest import SUGGESTED_CODES, withheld

FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.trainwright"
MOVE_KIND = f"{types.CodeActionKind.RefactorMove.value}.trainwright"
# A flake8 noqa comment that lists codes, to add a code to a comment already there.
_NOQA_CODES = re.compile(r"#\s*noqa:\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*)", re.IGNORECASE)


@dataclass
class Request:
    """One ``textDocument/codeAction`` request with what answering it needs."""

    doc: TextDocument
    path: str
    findings: Sequence[Finding]  # the document's findings for its current text
    wanted: types.Range  # the range the client asks about
    only: Sequence[str] | None  # the kinds the client asks for (None: all)


def findings_in(doc: TextDocument, findings: Sequence[Finding], wanted: types.Range) -> list[Finding]:
    """The findings whose span meets the client's range."""
    asked = doc.range_from_client_units(wanted)
    return [f for f in findings if server_range(f).overlaps(asked)]


def wants(request: Request, kind: str) -> bool:
    return request.only is None or any(kind == k or kind.startswith(f"{k}.") for k in request.only)


def code_actions(session: Session, request: Request) -> list[types.CodeAction]:
    """The actions for the findings in the requested range, then "fix all" when the document has a
    safe fix (asked for by kind, as an editor's fix-on-save does, or offered next to a finding)."""
    doc = request.doc
    here = [f for f in findings_in(doc, request.findings, request.wanted) if f.code != "TW000"]
    actions: list[types.CodeAction] = []
    if wants(request, types.CodeActionKind.QuickFix.value):
        for f in here:
            if f.code not in SUGGESTED_CODES:  # a TW2xx fix is the callback move, offered below
                actions += fix_action(session, request, f)
            actions.append(noqa_action(doc, f))
    if wants(request, MOVE_KIND):
        for f in here:
            actions += callback_action(session, request, f)
    safe = [f for f in request.findings if fix_kind(f) == "safe"]
    offered = request.only is not None or any(fix_kind(f) is not None for f in here)
    if safe and offered and wants(request, FIX_ALL_KIND):
        fixed = session.fix_all(request.path, doc.source, request.findings)
        if fixed is not None:
            lines = lsp_lines(doc.source)
            actions.append(
                types.CodeAction(
                    title=f"trainwright: fix all safe findings ({len(safe)})",
                    kind=FIX_ALL_KIND,
                    diagnostics=[diagnostic(doc, f, lines) for f in safe],
                    edit=document_edit(doc, fixed),
                )
            )
    return actions


def fix_action(session: Session, request: Request, f: Finding) -> list[types.CodeAction]:
    """``f``'s fix as a quick fix (none when it has no fix, or the fixer refuses the text)."""
    kind = fix_kind(f)
    if kind is None:
        return []
    fixed = session.fix_one(request.path, request.doc.source, f, request.findings)
    if fixed is None:
        return []
    unsafe = " (unsafe: changes behaviour, review it)" if kind == "unsafe" else ""
    return [
        types.CodeAction(
            title=f"Fix {f.code}: {f.fix.describe()}{unsafe}",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic(request.doc, f)],
            is_preferred=kind == "safe",
            edit=document_edit(request.doc, fixed),
        )
    ]


def callback_action(session: Session, request: Request, f: Finding) -> list[types.CodeAction]:
    """A TW2xx finding's callback move: its unsafe move fix applied alone to the document, exactly the
    diff ``trainwright fix --suggest`` previews. A refactoring to review, never a quick fix; not offered
    where ``--suggest`` withholds the move (``suggest.withheld``)."""
    if f.code not in SUGGESTED_CODES or f.fix is None or withheld(f) is not None:
        return []
    fixed = session.fix_one(request.path, request.doc.source, f, request.findings)
    if fixed is None:
        return []
    return [
        types.CodeAction(
            title=f"Move {f.code} to a TrainerCallback: {f.fix.describe()} (callback move: review it)",
            kind=MOVE_KIND,
            diagnostics=[diagnostic(request.doc, f)],
            edit=document_edit(request.doc, fixed),
        )
    ]


def noqa_action(doc: TextDocument, f: Finding) -> types.CodeAction:
    """Add ``f``'s code to a ``# noqa:`` comment on the line that silences it (a new comment, or the
    code appended to the one there)."""
    row = noqa_row(f) - 1
    line = doc.lines[row] if row < len(doc.lines) else ""
    content = line.rstrip("\r\n")
    found = _NOQA_CODES.search(content)
    if found is not None:
        at = found.end("codes")
        start, new_text = at, f", {f.code}"
    else:
        start = len(content)
        new_text = f"{'  ' if content.strip() else ''}# noqa: {f.code}"
    units = unit_counter(doc)
    where = types.Position(line=row, character=units(content[:start]))
    return types.CodeAction(
        title=f"Ignore {f.code} on this line (# noqa: {f.code})",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic(doc, f)],
        edit=types.WorkspaceEdit(
            changes={doc.uri: [types.TextEdit(range=types.Range(start=where, end=where), new_text=new_text)]}
        ),
    )


def document_edit(doc: TextDocument, new: str) -> types.WorkspaceEdit:
    """The workspace edit that turns the document's text into ``new`` (``changes``: every client
    applies it, where ``documentChanges`` is a capability)."""
    return types.WorkspaceEdit(changes={doc.uri: [replacing_edit(doc.source, new, unit_counter(doc))]})
