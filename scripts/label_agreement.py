#!/usr/bin/env python
"""Agreement between two independent labellings of the same methods (a test split's quality check).

    python scripts/label_agreement.py [--first benchmarks/ecosystem/test/labels.csv]
                                      [--second benchmarks/ecosystem/test/second_labels.csv]

A hand-labelled split is only as good as its labels. A second labeller, blind to the first labels, the rules
and the linter, labelled a sample of whole classes again; this prints raw agreement and Cohen's kappa per
column, and every method on which the CALLBACK verdict differs. Rows are matched on
(repo, path, class, method, line).
"""

from __future__ import annotations

import argparse
import csv
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "benchmarks" / "ecosystem" / "test"
Key = tuple[str, str, str, str, str]


def read(path: Path) -> dict[Key, dict[str, str]]:
    with path.open(newline="") as handle:
        return {(r["repo"], r["path"], r["class"], r["method"], r["line"]): r for r in csv.DictReader(handle)}


def kappa(pairs: Sequence[tuple[object, object]]) -> tuple[float, float]:
    """Raw agreement and Cohen's kappa, ``(p_o - p_e) / (1 - p_e)``, of paired labels."""
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[k] * second[k] for k in first.keys() | second.keys()) / (n * n)
    return observed, (observed - expected) / (1 - expected) if expected < 1 else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--first", type=Path, default=HERE / "labels.csv")
    parser.add_argument("--second", type=Path, default=HERE / "second_labels.csv")
    args = parser.parse_args(argv)
    first, second = read(args.first), read(args.second)
    common = sorted(first.keys() & second.keys())
    if missing := second.keys() - first.keys():
        raise SystemExit(
            f"{len(missing)} rows of {args.second} match no row of {args.first}, e.g. {min(missing)}"
        )
    print(f"{len(common)} methods labelled twice")
    print("| column | verdict compared | agreement | Cohen's kappa |\n|---|---|---:|---:|")
    checks = {
        "tw2": ("CALLBACK / SUBCLASS / empty", lambda r: r["tw2"]),
        "tw2 ": ("CALLBACK or not", lambda r: r["tw2"] == "CALLBACK"),
        "tw1": ("codes", lambda r: " ".join(sorted(r["tw1"].split()))),
        "tw3": ("codes", lambda r: " ".join(sorted(r["tw3"].split()))),
        "tw303": ("TW303 or not", lambda r: bool(r["tw303"].strip())),
        "hard_negative": ("1 or not", lambda r: r["hard_negative"] == "1"),
    }
    for column, (what, value) in checks.items():
        observed, k = kappa([(value(first[key]), value(second[key])) for key in common])
        print(f"| {column.strip()} | {what} | {observed:.3f} | {k:.2f} |")
    for key in common:
        a, b = first[key]["tw2"], second[key]["tw2"]
        if (a == "CALLBACK") != (b == "CALLBACK"):
            print(f"- CALLBACK differs: {key[0]} {key[1]} {key[2]}.{key[3]} (line {key[4]}): {a} / {b}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
