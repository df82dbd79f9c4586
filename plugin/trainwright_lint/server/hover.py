"""Hover on a finding: its message, then its rule's page (the text of ``docs/rules/TWxxx.md``, which
``rules.docs.render_rule_page`` renders from the rule class: the same words, and present in an
installed package, where the docs folder is not)."""

from __future__ import annotations

from collections.abc import Sequence

from trainwright_lint.finding import Finding
from trainwright_lint.output.rule_meta import NON_RULE_CODES, rule_url
from trainwright_lint.rules import RULES
from trainwright_lint.rules.docs import render_rule_page


def rule_page(code: str) -> str:
    """The page of ``code`` in Markdown: a rule's generated page, or a non-rule code's description."""
    rule = RULES.get(code)
    if rule is not None:
        return render_rule_page(rule)
    name, text = NON_RULE_CODES.get(code, ("", ""))
    return f"# {code} {name}\n\n{text}\n" if name else f"# {code}\n\n{rule_url(code)}\n"


def hover_text(findings: Sequence[Finding]) -> str:
    """Markdown for the findings under the cursor: each one's code and message, then its rule's
    page (once per code)."""
    parts = [f"**{f.code}** ({f.name}): {f.message}" for f in findings]
    for code in dict.fromkeys(f.code for f in findings):
        parts.append(f"---\n\n{rule_page(code)}\n\n[{code} on the web]({rule_url(code)})")
    return "\n\n".join(parts)
