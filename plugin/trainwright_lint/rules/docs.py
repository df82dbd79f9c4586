"""A rule's documentation page, rendered from the rule class itself (ruff's page layout).

What it does / Why is this bad? / Example / Use instead / Fix safety / Options / References. The
docstring's first paragraph says what the rule flags and the rest why; the examples are the ones the
test-suite runs; an INVALID example's ``fixed`` code (the fix's real output, checked by the tests) or
the rule's ``USE_INSTEAD`` is the "Use instead". Duck-typed over the rule class so that it imports
nothing of the rules.
"""

from __future__ import annotations

import inspect
from typing import Any

_GLOBAL_OPTIONS = (
    ("select / ignore / per-file-ignores", "turn the rule on or off, for the project or for some files"),
    ("trainer-bases", "extra classes to treat as Trainer subclasses (a base the linter cannot resolve)"),
)
_VERSION_OPTIONS = (
    (
        "transformers-version / trl-version",
        (
            "the release or range to check against (default: the project's declared requirement, "
            "else the installed release, else the newest catalogued one)"
        ),
    ),
)


def _paragraphs(rule: Any) -> tuple[str, str]:
    doc = inspect.cleandoc(rule.__doc__ or "")
    first, _, rest = doc.partition("\n\n")
    return first.strip(), rest.strip()


def summary_line(rule: Any) -> str:
    """The first sentence of what the rule does (SARIF ``shortDescription``)."""
    first, _ = _paragraphs(rule)
    return " ".join(first.split())


def fix_safety_text(rule: Any) -> str:
    """The page's "Fix safety" section, and the rule's own ``fix_safety_note`` (what the behaviour
    oracle checked of its fix) when it has one."""
    text = _fix_safety(rule)
    note = getattr(rule, "fix_safety_note", "")
    return f"{text}\n\n{note}" if note else text


def _fix_safety(rule: Any) -> str:
    applicability = getattr(rule, "fix_applicability", None)
    if applicability == "safe":
        return (
            "The fix is **safe**: `trainwright fix` (or `trainwright lint --fix`) applies it, and only "
            "when the fixed code is valid on every release of the project's target range; otherwise "
            "the finding says why no fix is offered. `--diff` previews it."
        )
    if applicability == "unsafe":
        return (
            "The fix is **unsafe**: it changes when the code runs, so it is applied only with "
            "`--unsafe-fixes`, only when it is unambiguous, and never when it would create a duplicate "
            "definition. Review the diff (`--diff`)."
        )
    if getattr(rule, "suggestion", None):
        return (
            "No automatic fix: the logic has to move, and no move is written for it yet, so "
            '`trainwright fix --suggest` says "no mechanical move"; move it into a `TrainerCallback` '
            "by hand and register it with `Trainer(callbacks=[...])`."
        )
    return "No automatic fix."


def _code_block(code: str, version: str | None = None) -> list[str]:
    out = []
    if version:
        out += [f"Target transformers version: {version}", ""]
    return out + ["```python", inspect.cleandoc(code), "```"]


def render_rule_page(rule: Any) -> str:
    what, why = _paragraphs(rule)
    invalid = tuple(rule.INVALID)
    valid = tuple(rule.VALID)
    parts = [f"# {rule.code} {rule.name}", ""]
    applicability = getattr(rule, "fix_applicability", None)
    fixable = {"safe": "Fix is always available when valid on the whole target range (safe).",
               "unsafe": "Fix is available with `--unsafe-fixes`."}.get(applicability or "")  # fmt: skip
    if fixable:
        parts += [f"*{fixable}*", ""]
    if getattr(rule, "preview", False):
        parts += [("*Preview: off by default (precision on the blind test split under 0.90); "
                   "on with `--preview` or `preview = true` in `[tool.trainwright]`.*"), ""]  # fmt: skip
    if getattr(rule, "moves_only", False):
        parts += [("*No move, no finding: reported only where the fix can write the move to a callback; a "
                   "finding whose move is refused (the code reads what no event receives, or an event would "
                   "run it at another moment) is a preview variant, shown with `--preview` and the reason.*"),
                  ""]  # fmt: skip
    for method, kinds in sorted(getattr(rule, "preview_variants", {}).items()):
        verbs = ", ".join(f"`{k}`" for k in sorted(kinds))
        parts += [(f"*Preview variant: its findings in `{method}` overrides whose code {verbs} (the message's "
                   "first verb) are off by default (precision under 0.90 on the blind test split, or on the dev "
                   "split where the test split has no finding, or no finding on either) and on with "
                   "`--preview`.*"), ""]  # fmt: skip
    parts += ["## What it does", "", what]
    if why:
        parts += ["", "## Why is this bad?", "", why]
    if invalid:
        parts += ["", "## Example", ""] + _code_block(invalid[0].code, invalid[0].version)
    use_instead = next((ex.fixed for ex in invalid if ex.fixed), None) or getattr(rule, "USE_INSTEAD", "")
    if use_instead:
        parts += ["", "## Use instead", ""] + _code_block(
            use_instead, invalid[0].version if invalid else None
        )
    parts += ["", "## Message", "", "```text", f"{rule.code} {rule.message}", "```"]
    if len(invalid) > 1:
        parts += ["", "## Flagged"]
        for ex in invalid[1:4]:
            parts += [""] + _code_block(ex.code, ex.version)
    if valid:
        parts += ["", "## Not flagged"]
        for ex in valid[:3]:
            parts += [""] + _code_block(ex.code, ex.version)
    parts += ["", "## Fix safety", "", fix_safety_text(rule)]
    fix = inspect.cleandoc(getattr(rule, "FIX", "") or "")
    if fix:
        parts += ["", "By hand: " + fix]
    options = list(_GLOBAL_OPTIONS)
    if rule.reads_release():
        options = list(_VERSION_OPTIONS) + options
    options += [(o, "") for o in getattr(rule, "OPTIONS", ())]
    parts += ["", "## Options", ""] + [
        f"- `{name}`" + (f": {text}" if text else "") for name, text in options
    ]
    evidence = getattr(rule, "EVIDENCE", ())
    if evidence:
        parts += ["", "## References", ""] + [f"- <{url}>" for url in evidence]
    return "\n".join(parts).rstrip() + "\n"
