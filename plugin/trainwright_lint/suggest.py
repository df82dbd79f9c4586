"""``trainwright fix --suggest``: turn a TW2xx finding into a ready ``TrainerCallback`` to paste.

TW201/TW202/TW203 flag timing or side-effect logic inside a Trainer override. The fix is a move, not
an edit: the code goes to a callback event, where ``self.state`` is the ``state`` argument,
``self.args`` is ``args``, ``self.control`` is ``control`` and ``self.model`` (``optimizer``,
``lr_scheduler``, ``processing_class``, dataloaders) arrive as event keywords. Suggestions are printed,
never written: the logic needs a human to check what else it reads from the Trainer.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Sequence

import libcst as cst

from trainwright_lint.finding import Finding

SUGGESTED_CODES = ("TW201", "TW202", "TW203")
_EVENT = re.compile(r"\bon_[a-z_]+\b")
_EVENT_ARGUMENTS = {"state": "state", "args": "args", "control": "control"}
_EVENT_KWARGS = frozenset(
    {"model", "optimizer", "lr_scheduler", "processing_class", "train_dataloader", "eval_dataloader"}
)


class _FromTrainer(cst.CSTTransformer):
    """``self.state`` -> ``state``, ``self.model`` -> ``kwargs["model"]``; records other ``self.x``."""

    def __init__(self) -> None:
        super().__init__()
        self.unresolved: set[str] = set()

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if not (isinstance(updated.value, cst.Name) and updated.value.value == "self"):
            return updated
        attr = updated.attr.value
        if attr in _EVENT_ARGUMENTS:
            return cst.Name(_EVENT_ARGUMENTS[attr])
        if attr in _EVENT_KWARGS:
            return cst.parse_expression(f'kwargs["{attr}"]')
        self.unresolved.add(attr)
        return updated


def _event(finding: Finding) -> str:
    match = _EVENT.search(finding.message)
    return match.group(0) if match else "on_step_end"


def _snippet(source: str, finding: Finding) -> str | None:
    """The statements to move: the flagged block (TW201/TW203) or the wrapper's own code (TW202)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    if finding.code == "TW202":
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == finding.line:
                keep = [
                    s
                    for s in node.body
                    if "super()" not in ast.get_source_segment(source, s, padded=False)  # type: ignore[operator]
                    and not isinstance(s, ast.Return)
                    and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
                ]
                if not keep:
                    return None
                return "\n".join(
                    textwrap.dedent("\n".join(lines[s.lineno - 1 : (s.end_lineno or s.lineno)])) for s in keep
                )
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno == finding.line:
            return textwrap.dedent("\n".join(lines[node.lineno - 1 : (node.end_lineno or node.lineno)]))
    return None


def suggest(source: str, finding: Finding) -> str | None:
    """The callback class (and the line registering it) for one TW2xx finding, or None."""
    if finding.code not in SUGGESTED_CODES:
        return None
    try:
        snippet = _snippet(source, finding)
        if snippet is None:
            return None
        transformer = _FromTrainer()
        body = cst.parse_module(snippet + "\n").visit(transformer).code.rstrip()
    except (SyntaxError, cst.ParserSyntaxError, ValueError):
        return None
    event = _event(finding)
    owner = finding.class_name or "Trainer"
    name = f"{owner}{''.join(p.title() for p in (finding.method or 'hook').strip('_').split('_'))}Callback"
    lines = [
        "from transformers import TrainerCallback",
        "",
        "",
        f"class {name}(TrainerCallback):",
        f'    """Moved out of `{owner}.{finding.method}` ({finding.code}): runs on `{event}`."""',
        "",
        f"    def {event}(self, args, state, control, **kwargs):",
    ]
    if transformer.unresolved:
        names = ", ".join(f"self.{a}" for a in sorted(transformer.unresolved))
        lines.append(f"        # TODO: {names} belonged to the Trainer: pass what you need to __init__.")
    lines += textwrap.indent(body, " " * 8).splitlines()
    lines += [
        "",
        "",
        f"# register it: trainer.add_callback({name}())  # or Trainer(..., callbacks=[{name}()])",
    ]
    return "\n".join(lines) + "\n"


def suggestions(source: str, findings: Sequence[Finding]) -> list[tuple[Finding, str]]:
    out = []
    for f in findings:
        text = suggest(source, f)
        if text is not None:
            out.append((f, text))
    return out
