"""Extract one TRL release's catalogue record from its source, read with ``ast`` (never imported).

What is extracted is described in ``scripts/build_trl_catalog.py``, which merges the records of the shipped
releases into ``data/trl*.json``; :mod:`trainwright.catalog.additions` appends a newer release's record at
run time. TRL's facts name transformers classes canonically, so they need the transformers catalogue's
modules document (:func:`transformers_canonicaliser`) and its ``TrainingArguments`` field names.
"""

from __future__ import annotations

import ast
from typing import Any

from trainwright.catalog.extract import facts
from trainwright.catalog.extract.facts import class_body_statements
from trainwright.catalog.extract.transformers_source import collect_calls, kind_of, method_records, params_of

PACKAGE = "trl"
TRAINER_ROOTS = frozenset({"transformers.trainer.Trainer", "transformers.trainer_seq2seq.Seq2SeqTrainer"})
ARGUMENTS_ROOT = "transformers.training_args.TrainingArguments"


def package_trees(package: facts.Package) -> dict[str, ast.Module]:
    """module path (``trl/trainer/x.py``) -> parsed tree, for every module that parses (scripts skipped)."""
    trees: dict[str, ast.Module] = {}
    for module in package.modules():
        path = package.file_of(module)
        if path is None or "/scripts/" in path:
            continue
        try:
            tree = package.tree(module)
        except UnicodeDecodeError:
            continue
        if tree is not None:
            trees[path] = tree
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


def _config_field_names(cls: str, graph: dict[str, Any], fields: dict[str, list[list[Any]]]) -> set[str]:
    """The field names of config class ``cls`` and of its TRL bases."""
    names: set[str] = set()
    todo = [cls]
    seen: set[str] = set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        names |= {f[0] for f in fields.get(current, [])}
        todo.extend(graph.get(current, []))
    return names


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
        names = _config_field_names(cls, graph, fields)
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


def extract_record(
    package: facts.Package, transformers_modules: dict[str, Any], transformers_fields: set[str]
) -> dict[str, Any]:
    """One TRL release as the builder computes it before merging (see ``extract_record`` of
    :mod:`trainwright.catalog.extract.transformers_source`); TRL has no callback events or control flags."""
    canonical = transformers_canonicaliser(transformers_modules)
    return {
        "release": {"classes": extract_release(package_trees(package)), "events": {}, "control_flags": None},
        "facts": extract_facts(package, canonical, transformers_fields),
    }
