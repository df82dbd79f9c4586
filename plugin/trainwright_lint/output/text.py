"""Text output, in ruff's two shapes.

``full`` (the default) is for people: each finding is a short headline in flake8's
``path:line:column: CODE message`` form, then indented ``help:`` lines (what to do) and ``note:``
lines (where in the target range it holds, the reference callback, why there is no fix), wrapped to
the terminal's width (:mod:`trainwright_lint.terminal`: ``COLUMNS``, else the terminal, else 80)::

    src/train.py:13:9: TW201 `training_step` runs gc/cache clearing gated on the global step (lines 13–15)
      help: move it to a TrainerCallback on `on_step_end`
      note: on every release of the target range, 4.44.0–4.45.2

``concise`` is for tools: one line per finding with the whole message, ``path:line:column: CODE
message``, as before this split (editors' and CI problem matchers' regular expressions read it).

In both, a finding with a safe fix (one ``trainwright fix`` applies without ``--unsafe-fixes``)
reads ``CODE [*] message``, as in ruff. On a colour terminal (``NO_COLOR`` unset; never a pipe) the
path is bold, the code bold red and a hyperlink to the rule's page (OSC 8: invisible where
unsupported), ``[*]`` cyan and ``help:``/``note:`` bold cyan, added after the layout so that escape
codes never count as columns;
a pipe gets plain text, with ``–``/``→`` spelt ``-``/``->`` where it cannot encode them. Control
characters, bidirectional overrides and undecodable bytes in a path or a message are shown escaped
(``terminal.shown_safely``), never sent to the terminal raw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from trainwright_lint.finding import Finding
from trainwright_lint.output.fix_record import has_safe_fix
from trainwright_lint.output.headline import split_message
from trainwright_lint.output.rule_meta import rule_url
from trainwright_lint.terminal import GLUE, Terminal, printable, shown_safely

HEADLINE_HANG = "    "  # a headline too wide for the terminal continues under its path, indented
DETAIL_INDENT = "  "  # before "help:" and "note:"


def hyperlink(text: str, url: str) -> str:
    return f"\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\"


def _paints(stream: TextIO, term: Terminal) -> bool:
    """Colour and links only on a terminal that takes colour (``NO_COLOR`` unset, ``TERM`` not
    ``dumb``): never in a pipe, even with ``FORCE_COLOR``, since tools read this output."""
    try:
        return term.colour and stream.isatty()
    except (AttributeError, ValueError):
        return False


def _prefix(f: Finding) -> str:
    return f"{shown_safely(f.path)}:{f.line}:{f.column}: "


def _plain_code(f: Finding) -> str:
    return f.code + (" [*]" if has_safe_fix(f.fix) else "")


def _painted(f: Finding, term: Terminal, paint: bool) -> tuple[str, str]:
    """``(prefix, code)`` as they start a finding's line: with ``paint``, coloured (path bold, code
    bold red and a link to its page, ``[*]`` cyan), plain otherwise."""
    if not paint:
        return _prefix(f), _plain_code(f)
    code = term.style(hyperlink(f.code, rule_url(f.code)), "code") + (
        " " + term.style("[*]", "fixable") if has_safe_fix(f.fix) else ""
    )
    where = _prefix(f)[: -len(f":{f.line}:{f.column}: ")]
    return f"{term.style(where, 'path')}:{f.line}:{f.column}: ", code


def line(f: Finding, term: Terminal | None = None, paint: bool = False) -> str:
    """The concise line: the whole message, and why a fixable finding has no fix."""
    why_not = f" [{f.fix_note}]" if f.fix is None and f.fix_note else ""
    prefix, code = _painted(f, term or Terminal(colour=paint), paint)
    return f"{prefix}{code} {shown_safely(f.message)}{why_not}"


def block(f: Finding, term: Terminal, paint: bool = False) -> list[str]:
    """The full form of one finding: its headline, then its help and note lines, fitted to ``term``
    (laid out plain, then coloured: escape codes never count as columns)."""
    parts = split_message(shown_safely(f.message), f.fix_note)
    plain = f"{_prefix(f)}{_plain_code(f)} "
    # The location and the code stay on the first line (GLUE: no break), however long the path.
    glued = plain[:-1].replace(" ", GLUE) + " "
    lines = term.wrap(f"{glued}{parts.headline}", indent=HEADLINE_HANG, hang=0, lead="")
    if paint and lines[0].startswith(plain):
        prefix, code = _painted(f, term, paint)
        lines[0] = f"{prefix}{code} {lines[0][len(plain) :]}"
    for label, texts in (("help", parts.help), ("note", parts.notes)):
        for text in texts:
            lead = f"{DETAIL_INDENT}{label}: "
            wrapped = term.wrap(text, indent=" " * len(lead), hang=0, lead=lead)
            if paint:
                wrapped[0] = DETAIL_INDENT + term.style(f"{label}:", "label") + wrapped[0][len(lead) - 1 :]
            lines += wrapped
    return lines


def render(findings: Sequence[Finding], stream: TextIO) -> None:
    """``full``: headline, help and notes per finding."""
    term = Terminal.detect(stream)
    paint = _paints(stream, term)
    stream.writelines(f"{printable(text, stream)}\n" for f in findings for text in block(f, term, paint))


def render_concise(findings: Sequence[Finding], stream: TextIO) -> None:
    """``concise``: one line per finding."""
    term = Terminal.detect(stream)
    paint = _paints(stream, term)
    stream.writelines(printable(line(f, term, paint), stream) + "\n" for f in findings)
