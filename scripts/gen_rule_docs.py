#!/usr/bin/env python3
"""Generate ``docs/rules/*.md``: one page per lint rule, from the rule classes themselves.

Each page is ``Rule.explain()`` (what ``trainwright explain TWxxx`` prints): what the rule flags and
why (the class docstring), the message, flagged and accepted examples (the examples the test-suite
runs), the fix (automatic, unsafe, or by hand) and the evidence links. ``index.md`` lists them all.

    python scripts/gen_rule_docs.py           # write docs/rules/ and README.md's rules table
    python scripts/gen_rule_docs.py --check   # exit 1 if a page or the table is missing or stale (run in CI)
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT / "src", ROOT / "plugin"):
    sys.path.insert(0, str(extra))

from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import lint_source
from trainwright_lint.finding import NOT_LINTED
from trainwright_lint.noqa import UNUSED_NOQA
from trainwright_lint.output.headline import split_message
from trainwright_lint.output.sarif import NON_RULE_CODES, help_uri
from trainwright_lint.rules import RULES, fixes, suggested
from trainwright_lint.rules.base import SAFE, UNSAFE

from trainwright.catalog import load_catalog

DOCS = ROOT / "docs" / "rules"
README = ROOT / "README.md"
TABLE_START, TABLE_END = "<!-- rules-table -->", "<!-- /rules-table -->"
# TW000 is not a rule: no example to lint, so its line is written here.
NON_RULE_HEADLINES = {
    NOT_LINTED: "the file could not be linted (it does not parse or decode, or took too long)",
    UNUSED_NOQA: "unused `# noqa` code `TW101`: nothing it names is reported on this line",
}
NON_RULE_TRAILERS = {  # what to do, per non-rule code
    NOT_LINTED: (
        "Not a rule: the file is reported instead of crashing or stalling the run. Unparsable files are "
        "left untouched by `trainwright fix`. Fix the file (or exclude it) and lint again.\n"
    ),
    UNUSED_NOQA: (
        "Not a rule: a check of the `# noqa` comments themselves. Bare `# noqa` and other tools' codes "
        "(`E501`) are never judged, nor a code whose rules are all off in the run (`--select`). Silence it "
        "with `--ignore TW001` (or `# noqa: TW001` on the line).\n"
    ),
}

FIXING_SECTION = """
## Fixing

`trainwright fix [PATHS]` (or `trainwright lint --fix`) applies the safe fixes with libcst, keeping
comments, layout, encoding and line endings, and only when the fixed code is valid on every release of
the project's target range; `--diff` previews them, `--unsafe-fixes` adds the fixes that change
behaviour, `--suggest` previews the callback move of {suggested} findings (its diff). Pre-commit: the
`trainwright` hook applies them.

| code | fix | applied by |
|---|---|---|
{rows}
"""

CI_SECTION = """
## In CI

`--format github` prints workflow annotations (shown on the pull request diff); `--format sarif`
writes SARIF 2.1.0 for GitHub code scanning, with each rule's page as its help URI:

```yaml
# .github/workflows/trainwright.yml
name: trainwright
on: [push, pull_request]
permissions:
  contents: read
  security-events: write   # upload to code scanning
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - run: pip install trainwright
      - run: trainwright lint --format github --exit-zero
      - run: trainwright lint --format sarif --exit-zero > trainwright.sarif
      - uses: github/codeql-action/upload-sarif@v3
        with:
          sarif_file: trainwright.sarif
          category: trainwright
```

Files that cannot be linted (syntax errors, Python 2, NUL bytes, deep nesting, or past the per-file time
limit, `file-timeout`, 20 s by default) are reported as [TW000](TW000.md), never as a crash.

## Robustness

The test-suite lints every `.py` file of its environment's site-packages through the CLI path
(14,051 files with torch, transformers, TRL and their dependencies: 4.7 s on one core, no internal
error; `TRAINWRIGHT_SWEEP_EVERY=N` samples every Nth file on slow CI machines), runs every 40th of
them through all rules without the textual pre-filter and through the fixer, lints and fixes a
corpus of pathological files (syntax errors, Python 2, latin-1 and invalid UTF-8, NUL bytes, a 10 MB
file, deep nesting, CR-only newlines), and feeds hypothesmith programs and generated Trainer
subclasses through lint and fix (a fixed file always parses; a second fix changes nothing).
"""


def _first_sentence(text: str) -> str:
    flat = " ".join(inspect.cleandoc(text).split())
    end = flat.find(". ")
    return flat if end < 0 else flat[: end + 1]


def non_rule_page(code: str) -> str:
    name, text = NON_RULE_CODES[code]
    return f"# {code} {name}\n\n{text}\n\n{NON_RULE_TRAILERS[code]}"


def pages() -> dict[str, str]:
    out: dict[str, str] = {}
    rows = ["| code | name | fixable | summary |", "|---|---|---|---|"]
    for code in sorted(NON_RULE_CODES):
        out[f"{code}.md"] = non_rule_page(code)
        rows.append(
            f"| [{code}]({code}.md) | {NON_RULE_CODES[code][0]} | | {_first_sentence(NON_RULE_CODES[code][1])} |"
        )
    for code, rule in sorted(RULES.items()):
        out[f"{code}.md"] = rule.explain()
        fixable = {"safe": "yes", "unsafe": "with `--unsafe-fixes`"}.get(rule.fix_applicability or "", "")
        name = f"{rule.name} (preview: `--preview`)" if rule.preview else rule.name
        rows.append(f"| [{code}]({code}.md) | {name} | {fixable} | {_first_sentence(rule.__doc__ or '')} |")
    out["index.md"] = (
        "# Lint rules\n\n"
        "Generated by `scripts/gen_rule_docs.py` from the rule classes; `trainwright explain CODE` prints "
        f"the same page. Published at {help_uri('').rstrip('/')}/.\n\n"
        + "\n".join(rows)
        + "\n"
        + fixing_section()
        + CI_SECTION
    )
    return out


def fixing_section() -> str:
    """What ``trainwright fix`` applies, listed from the rules' declarations (never by hand)."""
    how = {SAFE: "`trainwright fix`", UNSAFE: "`trainwright fix --unsafe-fixes`"}
    rows = [f"| [{code}]({code}.md) | {title} | {how[kind]} |" for kind in how for code, title in fixes(kind)]
    return FIXING_SECTION.format(rows="\n".join(rows), suggested=", ".join(suggested()))


def example_headline(code: str) -> str:
    """The headline ``trainwright lint`` prints for the rule's first flagged example: what a user sees."""
    if code in NON_RULE_HEADLINES:
        return NON_RULE_HEADLINES[code]
    example = RULES[code].INVALID[0]
    # At the example's release, else the catalogue's newest: the same table whatever is installed.
    config = LintConfig(
        select=(code,), transformers_version=example.version or load_catalog().newest, preview=True
    )
    (first, *_) = lint_source(inspect.cleandoc(example.code) + "\n", "example.py", config)
    return split_message(first.message).headline


def readme_table() -> str:
    """The README's rules table: every code of the registry (and TW000), its fix, and an example
    headline, generated so that it can never lack a rule."""
    rows = ["| code | name | fix | for example |", "|---|---|---|---|"]
    for code in sorted({*NON_RULE_CODES, *RULES}):
        name = NON_RULE_CODES[code][0] if code in NON_RULE_CODES else RULES[code].name
        applicability = RULES[code].fix_applicability if code in RULES else None
        fix = {"safe": "safe", "unsafe": "unsafe"}.get(applicability or "", "")
        headline = example_headline(code).replace("|", "\\|")
        rows.append(f"| [{code}](docs/rules/{code}.md) | {name} | {fix} | {headline} |")
    return "\n".join(rows)


def with_table(readme: str) -> str:
    """``readme`` with the generated table between its markers."""
    head, _, rest = readme.partition(TABLE_START + "\n")
    _, _, tail = rest.partition(TABLE_END)
    if not rest:
        raise SystemExit(f"README.md has no {TABLE_START} ... {TABLE_END} block")
    return f"{head}{TABLE_START}\n{readme_table()}\n{TABLE_END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if docs/rules/ is not current")
    parser.add_argument("--out", type=Path, default=DOCS)
    args = parser.parse_args(argv)
    wanted = pages()
    if args.check:
        stale = [
            name
            for name, text in wanted.items()
            if not (args.out / name).is_file() or (args.out / name).read_text(encoding="utf-8") != text
        ]
        extra = (
            sorted(p.name for p in args.out.glob("*.md") if p.name not in wanted) if args.out.is_dir() else []
        )
        readme = README.read_text(encoding="utf-8")
        if with_table(readme) != readme:
            stale.append("README.md (rules table)")
        if stale or extra:
            print(
                f"docs/rules is out of date (stale or missing: {', '.join(stale) or '-'}; "
                f"not generated: {', '.join(extra) or '-'}); run: python scripts/gen_rule_docs.py",
                file=sys.stderr,
            )
            return 1
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in wanted.items():
        (args.out / name).write_text(text, encoding="utf-8")
    README.write_text(with_table(README.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {len(wanted)} pages to {args.out} and the rules table of README.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
