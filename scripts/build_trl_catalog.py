#!/usr/bin/env python3
"""Regenerate ``src/trainwright/catalog/data/trl.json``: TRL's trainer classes across TRL releases.

Maintainer tool, not run in CI. Same idea and same JSON format as ``scripts/build_catalog.py`` (whose
extraction helpers it reuses), so ``trainwright.catalog.load_catalog("trl")`` reads it with the same
loader: every release is read with ``ast`` straight out of its wheel, never imported.

    pip download --no-deps trl==1.16.0 -d /work/wheel_cache      # for each release in DEFAULT_VERSIONS
    python scripts/build_catalog.py                               # first: TRL's facts name transformers'
    python scripts/build_trl_catalog.py

What is recorded per release, for every TRL class whose base chain reaches ``transformers.Trainer``
(``GRPOTrainer``, ``DPOTrainer``, ``SFTTrainer``, ``KTOTrainer``, ``RLOOTrainer``, ``RewardTrainer``, ...,
through TRL's own base classes such as ``BaseTrainer``): the methods the class and its TRL bases define
(not those inherited from ``transformers.Trainer``, which the transformers catalogue covers), their
kind, parameters and owner, and the ``self.NAME(...)`` call sites inside that TRL chain. Classes defined
twice (``trl.trainer`` and ``trl.experimental``) keep the ``trl.trainer`` one. There are no callback
events or control flags in this catalogue.

Like ``scripts/build_catalog.py`` it also writes ``trl-fingerprints.json``, ``trl-modules.json`` and
``trl-arguments.json`` next to ``--out``, but keyed by canonical dotted class names, so that a class
defined twice (``trl.trainer.kto_trainer.KTOTrainer`` and ``trl.experimental.kto.KTOTrainer``, one a
deprecation shim subclassing the other) is two classes there:
- fingerprints of every method of every TRL class whose bases reach ``transformers.Trainer`` and of the
  TRL classes above them (``_BaseTrainer``, mixins), experimental ones included;
- star-import exports of ``trl``, ``trl.scripts``, and every module under ``trl.trainer`` and
  ``trl.experimental``; the TRL class graph, with transformers bases named as the transformers
  catalogue names them (read from ``--transformers-modules``: build transformers first);
- the fields of every TRL ``*Config``/``*Arguments`` class (its own body; inherited ones are joined by the
  loader along the class graph) and the renames their ``__post_init__`` and the trainers' ``__init__``
  show (``--transformers-arguments`` supplies the ``TrainingArguments`` field names a TRL config inherits,
  for ``exp_name`` -> ``run_name``).
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

import catalog_facts as facts
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


# ---------------------------------------------------------------------- facts for the linter's new core

PACKAGE = "trl"
GENERATOR = "scripts/build_trl_catalog.py"
DEFAULT_TRANSFORMERS_MODULES = ROOT / "src" / "trainwright" / "catalog" / "data" / "transformers-modules.json"
DEFAULT_TRANSFORMERS_ARGUMENTS = (
    ROOT / "src" / "trainwright" / "catalog" / "data" / "transformers-arguments.json"
)
TRAINER_ROOTS = frozenset({"transformers.trainer.Trainer", "transformers.trainer_seq2seq.Seq2SeqTrainer"})
ARGUMENTS_ROOT = "transformers.training_args.TrainingArguments"


def transformers_canonicaliser(modules_doc: dict[str, Any]) -> Any:
    """``transformers.X`` as TRL imports it -> the canonical class name the transformers catalogue uses
    (newest catalogued release that exports it); anything else is returned unchanged."""
    exports = modules_doc.get("exports", {})
    classes = modules_doc.get("classes", {})

    def canonical(dotted: str) -> str:
        module, _, name = dotted.rpartition(".")
        spans = exports.get(module, {}).get(name)
        if spans:
            return str(spans[-1][2])
        if dotted in classes:
            return dotted
        return dotted

    return canonical


def export_modules(package: facts.Package) -> list[str]:
    modules = ["trl", "trl.scripts", "trl.scripts.utils"]
    modules += package.modules("trl.trainer") + package.modules("trl.experimental")
    return sorted({m for m in modules if package.has_module(m)})


def extract_facts(package: facts.Package, canonical: Any, transformers_fields: set[str]) -> dict[str, Any]:
    """One TRL release: star-import exports, class graph, trainer fingerprints, config fields, renames."""
    resolver = facts.Resolver(package, external=canonical)
    exports = {}
    for module in export_modules(package):
        names = resolver.exports(module)
        if names:
            exports[module] = names
    seeds = [c for m in package.modules() for c in resolver.module_classes(m) if facts.wanted(c)]
    seeds += [c for names in exports.values() for c in names.values()]
    graph = resolver.class_graph(seeds)

    trainers = [c for c in graph if facts.reaches(graph, c, TRAINER_ROOTS)]
    chain: set[str] = set()
    todo = list(trainers)
    while todo:  # trainers and the TRL classes above them (mixins included)
        cls = todo.pop()
        if cls in chain or cls not in graph:
            continue
        chain.add(cls)
        todo.extend(graph[cls])
    fingerprints: dict[tuple[str, str], list[str]] = {}
    renames: list[tuple[str, str, str, bool, str]] = []
    for cls in sorted(chain):
        node = resolver.class_node(cls)
        assert node is not None
        for name, functions in facts.method_nodes(node).items():
            fingerprints[(cls, name)] = facts.fingerprints_of(functions)
            if name == "__init__":
                params = {p[0] for fn in functions for p in params_of(fn)}
                for function in functions:
                    for old, new, exact, note in facts.rename_evidence(function, params, on_self=False):
                        renames.append((cls, old, new, exact, note))

    fields: dict[str, list[list[Any]]] = {}
    configs = [c for c in graph if c.endswith(("Config", "Arguments"))]
    for cls in configs:
        node = resolver.class_node(cls)
        assert node is not None
        fields[cls] = facts.dataclass_fields(node)
    for cls in configs:
        names: set[str] = set()
        todo = [cls]
        seen: set[str] = set()
        while todo:  # the fields of the class and of its TRL bases
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            names |= {f[0] for f in fields.get(current, [])}
            todo.extend(graph.get(current, []))
        if facts.reaches(graph, cls, frozenset({ARGUMENTS_ROOT})):
            names |= transformers_fields
        node = resolver.class_node(cls)
        assert node is not None
        for functions in facts.method_nodes(node).values():
            for function in functions:
                for old, new, exact, note in facts.rename_evidence(function, names, on_self=True):
                    renames.append((cls, old, new, exact, note))
        for old, new, exact, note in facts.help_evidence(facts.field_help(node), names):
            renames.append((cls, old, new, exact, note))
    return {
        "fingerprints": fingerprints,
        "modules": {"exports": exports, "classes": graph},
        "arguments": {"fields": fields, "renames": sorted(set(renames))},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", nargs="*", default=list(DEFAULT_VERSIONS))
    parser.add_argument("--wheel-dir", type=Path, default=DEFAULT_WHEEL_DIR)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--transformers-modules",
        type=Path,
        default=DEFAULT_TRANSFORMERS_MODULES,
        help="the transformers catalogue's modules file, to name transformers classes canonically",
    )
    parser.add_argument(
        "--transformers-arguments",
        type=Path,
        default=DEFAULT_TRANSFORMERS_ARGUMENTS,
        help="the transformers catalogue's arguments file (TrainingArguments field names, for renames)",
    )
    args = parser.parse_args(argv)
    canonical = transformers_canonicaliser(json.loads(args.transformers_modules.read_text(encoding="utf-8")))
    arguments_doc = json.loads(args.transformers_arguments.read_text(encoding="utf-8"))
    transformers_fields = {
        f[0] for spans in arguments_doc["fields"].values() for span in spans for f in span[2]
    }
    releases: dict[str, Any] = {}
    release_facts: dict[str, Any] = {}
    for version in args.versions:
        hits = sorted(args.wheel_dir.glob(f"trl-{version}-*.whl"))
        if not hits:
            parser.error(
                f"no wheel for trl=={version} in {args.wheel_dir}: "
                f"pip download --no-deps trl=={version} -d {args.wheel_dir}"
            )
        releases[version] = extract_release(wheel_trees(hits[0]))
        release_facts[version] = extract_facts(
            facts.Package.from_wheel(hits[0], PACKAGE), canonical, transformers_fields
        )
    data = merge(releases)
    args.out.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(
        f"wrote {args.out} ({len(data['versions'])} releases, {len(data['classes'])} classes, "
        f"{args.out.stat().st_size} bytes)",
        file=sys.stderr,
    )
    facts.write_facts(args.out, PACKAGE, GENERATOR, data["versions"], release_facts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
