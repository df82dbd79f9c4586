"""Findings and texts as LSP objects: a finding's span as a range in the client's position units, a
finding as a diagnostic, and a new document text as the smallest whole-line edit that produces it.

Findings count columns in characters (code points); LSP counts them in the negotiated encoding
(UTF-16 unless the client offers another), so every range goes through the document's position
codec. Lines are split as LSP splits them (``\\n``, ``\\r\\n``, ``\\r``), not as ``str.splitlines``
does (which also breaks at form feeds and separators).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from lsprotocol import types
from pygls.workspace import ServerTextPosition, ServerTextRange, TextDocument

from trainwright_lint.finding import Finding
from trainwright_lint.fixes import rule_of
from trainwright_lint.output.rule_meta import rule_url, severity

SOURCE = "trainwright"
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "note": types.DiagnosticSeverity.Information,
}
_LINE_END = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def lsp_lines(text: str) -> list[str]:
    """``text``'s lines with their endings, split where an LSP client splits them."""
    return [line for line in _LINE_END.split(text) if line]


def server_range(f: Finding) -> ServerTextRange:
    """The finding's span (1-based lines, 1-based character columns, end exclusive), 0-based."""
    return ServerTextRange(
        ServerTextPosition(f.line - 1, max(f.column - 1, 0)),
        ServerTextPosition(f.end_line - 1, max(f.end_column - 1, 0)),
    )


def unit_counter(doc: TextDocument) -> Callable[[str], int]:
    """How many of the client's position units a string takes (the encoding negotiated at start-up:
    UTF-16 unless the client offers another). pygls counts character by character; an ASCII line,
    nearly every line of Python, is its length."""
    encoding = doc.position_codec.encoding
    if encoding == types.PositionEncodingKind.Utf32:
        return len
    codec, width = ("utf-8", 1) if encoding == types.PositionEncodingKind.Utf8 else ("utf-16-le", 2)
    return lambda s: len(s) if s.isascii() else len(s.encode(codec, "surrogatepass")) // width


def client_position(
    lines: Sequence[str], units: Callable[[str], int], line: int, character: int
) -> types.Position:
    """A 0-based (line, character in code points) position in the client's units."""
    if line >= len(lines):
        return types.Position(line=len(lines), character=0)
    return types.Position(line=line, character=units(lines[line][:character]))


def finding_range(doc: TextDocument, f: Finding, lines: Sequence[str] | None = None) -> types.Range:
    """The finding's span in the client's units. ``lines``: the document's ``lsp_lines``, when the
    caller converts many findings (``TextDocument.lines`` splits the whole text on every call)."""
    lines = lsp_lines(doc.source) if lines is None else lines
    units = unit_counter(doc)
    span = server_range(f)
    return types.Range(
        start=client_position(lines, units, span.start.line, span.start.character),
        end=client_position(lines, units, span.end.line, span.end.character),
    )


def fix_kind(f: Finding) -> str | None:
    """``"safe"``, ``"unsafe"`` or ``None``: whether ``f`` carries a fix the fixer applies, and which."""
    if rule_of(f.fix) is None:
        return None
    return "unsafe" if f.fix.unsafe else "safe"


def diagnostic(doc: TextDocument, f: Finding, lines: Sequence[str] | None = None) -> types.Diagnostic:
    """The LSP diagnostic of ``f``: code with its rule page, severity as the CLI's JSON states it, the
    reason a fix is withheld when it is, and in ``data`` which fix a code action offers."""
    note = f"\n{f.fix_note}" if f.fix is None and f.fix_note else ""
    return types.Diagnostic(
        range=finding_range(doc, f, lines),
        message=f.message + note,
        severity=_SEVERITY.get(severity(f.code), types.DiagnosticSeverity.Warning),
        code=f.code,
        code_description=types.CodeDescription(href=rule_url(f.code)),
        source=SOURCE,
        data={"fix": fix_kind(f)},
    )


def replacing_edit(old: str, new: str, units: Callable[[str], int]) -> types.TextEdit:
    """One edit turning ``old`` into ``new``: the lines between their common first and last lines
    replaced (an editor keeps the cursor and folds outside it). ``units`` counts a string in the
    client's position units."""
    if old == new:
        nowhere = types.Position(line=0, character=0)
        return types.TextEdit(range=types.Range(start=nowhere, end=nowhere), new_text="")
    a, b = lsp_lines(old), lsp_lines(new)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    stop = len(a) - end
    if end == 0 and a and not a[-1].endswith(("\n", "\r")):
        # The old text's last line has no line ending: the range ends at its last character.
        end_position = types.Position(line=len(a) - 1, character=units(a[-1]))
    else:
        end_position = types.Position(line=stop, character=0)
    return types.TextEdit(
        range=types.Range(start=types.Position(line=start, character=0), end=end_position),
        new_text="".join(b[start : len(b) - end]),
    )
