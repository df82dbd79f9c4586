"""The fast scans must find exactly what the slower originals find: ``textscan``'s literal-anchored
searches against the equivalent regular expressions, the file-level ``# flake8: noqa`` search against
the line-by-line test, and ``child_nodes`` against ``ast.iter_child_nodes`` (the gate and the rules
switched to them for speed, not for different answers)."""

from __future__ import annotations

import random
import re

import pytest
from trainwright_lint.prefilter import has_class_with_bases
from trainwright_lint.textscan import LiteralScan, class_statements

# The regular expressions the scans replaced: the specification they must keep.
CLASS_WITH_BASES = re.compile(r"(?:^|\r)[ \t\f]*class[ \t]+\w+[ \t]*\(", re.MULTILINE)
CLASS_STATEMENT = re.compile(r"(?:^|\r)([ \t\f]*)class[ \t]+\w", re.MULTILINE)

TRICKY = [
    "class A(B):\n",
    "  class A (B):\n",
    "\fclass A(B): pass\n",
    "x = 1\rclass A(B):\r",  # old Mac line endings
    "a\r\nclass A(x): pass\r\n",
    "x = 1  # class A(B)\n",
    "subclass A(B)\n",
    "class  A:\n",
    "  \t class\tA\t(\n",
    "classA(B)\n",
    "s = 'class A(B)'\n",
    "class\n",
    "class",
    "",
    "def f():\n    class Inner(Base):\n        pass\n",
    "x = '😀'\nclass A(B):\n",  # 2-byte text
]


def _random_text(rng: random.Random) -> str:
    pieces = [
        "class",
        " ",
        "\t",
        "\f",
        "\n",
        "\r",
        "\r\n",
        "A",
        "_b",
        "(",
        ")",
        ":",
        "#",
        "'",
        "x.",
        "😀",
        "sub",
    ]
    return "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40)))


CASES = TRICKY + [_random_text(random.Random(seed)) for seed in range(2000)]


@pytest.mark.parametrize("text", CASES[:40])
def test_class_with_bases_agrees_with_the_regular_expression(text: str) -> None:
    assert has_class_with_bases(text) == (CLASS_WITH_BASES.search(text) is not None)


def test_class_with_bases_agrees_on_random_text() -> None:
    for text in CASES:
        assert has_class_with_bases(text) == (CLASS_WITH_BASES.search(text) is not None), repr(text)


def test_class_statements_are_at_the_keyword_of_each_class_line() -> None:
    for text in CASES:
        expected = [m.end(1) for m in CLASS_STATEMENT.finditer(text)]
        assert list(class_statements(text)) == expected, repr(text)


@pytest.mark.parametrize(
    ("literal", "rest"),
    [("super", r"\s*\("), ("self.tokenizer", r"\b"), (".tokenizer", r"\s*=(?!=)"), ("self.", r"(\w+)")],
)
def test_literal_scan_finds_what_finditer_finds(literal: str, rest: str) -> None:
    regex = re.compile(re.escape(literal) + rest)
    scan = LiteralScan(literal, rest)
    assert scan.pattern == regex.pattern
    texts = [
        "super().log(x)\nsuper ( ).a\nsuperb(\n",
        "self.tokenizer = t\nself.tokenizer_x = 1\nx.tokenizer == y\nx.tokenizer= z\n",
        "self.aself.b self.self.c myself.d(",
        "😀 super(); self.tokenizer",
    ] + [_random_text(random.Random(seed)).replace("class", literal) for seed in range(500)]
    for text in texts:
        expected = [(m.start(), m.group(0)[len(literal) :]) for m in regex.finditer(text)]
        assert [(at, m.group(0)) for at, m in scan.finditer(text)] == expected, repr(text)
        assert scan.search(text) == (regex.search(text) is not None)


def test_file_noqa_is_found_exactly_where_the_line_test_finds_it() -> None:
    """``# flake8: noqa`` alone on a line (any case, "\\r" or "\\r\\n" endings) is found by the
    search over the text exactly as by testing each line, and nowhere else."""
    from trainwright_lint import noqa

    rng = random.Random(7)
    pieces = ["# ", "flake8", ":", "=", "noqa", " ", "\n", "\r", "\r\n", "8:", "x", "FLAKE8", "NoQa", "\t"]
    texts = ["# flake8: noqa\n", "x = a[8:]\n  # FLAKE8= NOQA  \r\n", "x[8:]  # flake8: noqa\n", ""]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30))) for _ in range(3000)]
    for text in texts:
        lines = re.split(r"\r\n|\r|\n", text)
        expected = any(noqa._FILE.match(line) for line in lines)
        assert noqa.file_is_skipped(lines, text) == expected == noqa.file_is_skipped(lines), repr(text)


@pytest.mark.train("walks TRL's installed source")
def test_child_nodes_is_iter_child_nodes_without_context_markers() -> None:
    """``syntax.child_nodes`` (the narrowing walks' step) yields what ``ast.iter_child_nodes`` yields,
    in the same order, less the ``Load``/``Store``/``Del`` markers."""
    import ast
    import importlib.util
    from pathlib import Path

    from trainwright_lint.syntax import child_nodes

    spec = importlib.util.find_spec("trl")
    assert spec is not None and spec.submodule_search_locations
    root = Path(next(iter(spec.submodule_search_locations)))
    checked = 0
    for path in sorted(root.rglob("*.py"))[:80]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr_context)]
            assert child_nodes(node) == expected
            checked += 1
    assert checked > 50_000
