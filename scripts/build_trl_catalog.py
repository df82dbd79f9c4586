#!/usr/bin/env python3
"""Regenerate ``src/trainwright/catalog/data/trl.json``: TRL's trainer classes across TRL releases.

Maintainer tool, not run in CI. Same idea and same JSON format as ``scripts/build_catalog.py`` (whose
extraction helpers it reuses), so ``trainwright.catalog.load_catalog("trl")`` reads it with the same
loader: every release is read with ``ast`` straight out of its wheel, never imported.

    pip download --no-deps trl==1.16.0 -d /work/wheel_cache      # for each release in DEFAULT_VERSIONS
    python scripts/build_trl_catalog.py

What is recorded per release, for every TRL class whose base chain reaches ``transformers.Trainer``
(``GRPOTrainer``, ``DPOTrainer``, ``SFTTrainer``, ``KTOTrainer``, ``RLOOTrainer``, ``RewardTrainer``, ...,
through TRL's own base classes such as ``BaseTrainer``): the methods the class and its TRL bases define
(not those inherited from ``transformers.Trainer``, which the transformers catalogue covers), their
kind, parameters and owner, and the ``self.NAME(...)`` call sites inside that TRL chain. Classes defined
twice (``trl.trainer`` and ``trl.experimental``) keep the ``trl.trainer`` one. There are no callback
events or control flags in this catalogue.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "src"))

from build_catalog import class_body_statements, collect_calls, kind_of, method_records, params_of, ranges

from trainwright.catalog.versions import sort_versions

DEFAULT_OUT = ROOT / "src" / "trainwright" / "catalog" / "data" / "trl.json"
DEFAULT_WHEEL_DIR = Path("/work/wheel_cache")
FORMAT = 1
# A dozen releases from 0.19 to the newest: TRL moves fast, so roughly one every two minors.
DEFAULT_VERSIONS: tuple[str, ...] = (
    "0.19.1", "0.21.0", "0.23.1", "0.25.1", "0.27.2", "0.29.1",
    "1.0.0", "1.4.0", "1.8.0", "1.12.0", "1.16.0",
)  # fmt: skip


def wheel_trees(wheel: Path) -> dict[str, ast.Module]:
    """module path inside the wheel -> parsed tree, for every ``trl/**.py`` (tests and scripts skipped)."""
    trees: dict[str, ast.Module] = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if not name.startswith("trl/") or not name.endswith(".py") or "/scripts/" in name:
                continue
            try:
                trees[name] = ast.parse(zf.read(name).decode("utf-8"))
            except (SyntaxError, UnicodeDecodeError):
                continue
    return trees


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def trainer_classes(trees: dict[str, ast.Module]) -> dict[str, tuple[ast.ClassDef, list[str]]]:
    """TRL trainer class name -> (its ClassDef, its TRL chain from the top TRL base down to itself)."""
    classes: dict[str, ast.ClassDef] = {}
    # ``trl/trainer`` first so that its definitions win over ``trl/experimental`` duplicates.
    for path in sorted(trees, key=lambda p: (0 if p.startswith("trl/trainer/") else 1, p)):
        for node in ast.walk(trees[path]):
            if isinstance(node, ast.ClassDef) and node.name not in classes:
                classes[node.name] = node

    def chain(name: str, seen: frozenset[str] = frozenset()) -> list[str] | None:
        """TRL classes from the topmost TRL base to ``name`` if it reaches transformers' Trainer."""
        node = classes.get(name)
        if node is None or name in seen:
            return None
        for base in node.bases:
            base_name = _base_name(base)
            if base_name is None:
                continue
            if base_name == "Trainer" or (base_name == "Seq2SeqTrainer" and base_name not in classes):
                return [name]
            sub = chain(base_name, seen | {name})
            if sub is not None:
                return [*sub, name]
        return None

    out: dict[str, tuple[ast.ClassDef, list[str]]] = {}
    for name, node in classes.items():
        if name == "Trainer":
            continue
        found = chain(name)
        if found is not None and name.endswith("Trainer"):
            out[name] = (node, found)
    return out


def own_definitions(cls: ast.ClassDef) -> dict[str, dict[str, Any]]:
    defs: dict[str, dict[str, Any]] = {}
    for stmt in class_body_statements(cls.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name in defs and defs[stmt.name]["kind"] == "property":
                continue
            defs[stmt.name] = {"kind": kind_of(stmt), "params": params_of(stmt), "node": stmt}
    return defs


def extract_release(trees: dict[str, ast.Module]) -> dict[str, dict[str, dict[str, Any]]]:
    """class -> method -> {"owner", "kind", "params", "calls", "called"} for one TRL release."""
    found = trainer_classes(trees)
    by_name = {name: node for name, (node, _) in found.items()}
    own_cache: dict[str, dict[str, dict[str, Any]]] = {}
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for cls_name, (_, chain) in sorted(found.items()):
        merged: dict[str, dict[str, Any]] = {}
        owners: dict[str, str] = {}
        for link in chain:
            if link not in own_cache:
                own_cache[link] = own_definitions(by_name.get(link) or found[link][0])
            for name, d in own_cache[link].items():
                merged[name] = d
                owners[name] = link
        method_names = set(merged)
        all_params = {n: d["params"] for n, d in merged.items()}
        calls: dict[str, set[tuple[Any, ...]]] = {}
        refs: set[str] = set()
        for link in chain:
            functions = {n: d["node"] for n, d in own_cache[link].items()}
            c, r = collect_calls(functions, all_params, method_names)
            for name, sites in c.items():
                calls.setdefault(name, set()).update(sites)
            refs |= r
        result[cls_name] = method_records(merged, owners, calls, refs)
    return result


def merge(releases: dict[str, dict[str, dict[str, dict[str, Any]]]]) -> dict[str, Any]:
    versions = list(sort_versions(list(releases)))
    class_names = sorted({c for v in versions for c in releases[v]})
    classes: dict[str, Any] = {}
    for cls_name in class_names:
        names = sorted({n for v in versions for n in releases[v].get(cls_name, {})})
        methods: dict[str, Any] = {}
        for name in names:

            def info(v: str, name: str = name, cls_name: str = cls_name) -> dict[str, Any] | None:
                return releases[v].get(cls_name, {}).get(name)

            def definition(v: str) -> Any:
                i = info(v)
                return None if i is None else [i["owner"], i["kind"], i["params"]]

            methods[name] = {
                "defs": [[a, b, *val] for a, b, val in ranges(versions, definition)],
                "calls": [r for r in ranges(versions, lambda v: (info(v) or {}).get("calls")) if r[2]],
                "called": [
                    [a, b] for a, b, val in ranges(versions, lambda v: (info(v) or {}).get("called")) if val
                ],
            }
        classes[cls_name] = methods
    return {
        "format": FORMAT,
        "generator": "scripts/build_trl_catalog.py",
        "library": "trl",
        "versions": versions,
        "classes": classes,
        "events": {},
        "control_flags": [],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="*", default=list(DEFAULT_VERSIONS))
    parser.add_argument("--wheel-dir", type=Path, default=DEFAULT_WHEEL_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    releases: dict[str, Any] = {}
    for version in args.versions:
        hits = sorted(args.wheel_dir.glob(f"trl-{version}-*.whl"))
        if not hits:
            parser.error(
                f"no wheel for trl=={version} in {args.wheel_dir}: "
                f"pip download --no-deps trl=={version} -d {args.wheel_dir}"
            )
        releases[version] = extract_release(wheel_trees(hits[0]))
    data = merge(releases)
    args.out.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(
        f"wrote {args.out} ({len(data['versions'])} releases, {len(data['classes'])} classes, "
        f"{args.out.stat().st_size} bytes)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
