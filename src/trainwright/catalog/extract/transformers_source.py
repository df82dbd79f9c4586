"""Extract one transformers release's catalogue record from its source, read with ``ast`` (never imported).

What is extracted is described in ``scripts/build_catalog.py``, which merges the records of every shipped
release into ``data/transformers*.json``; :mod:`trainwright.catalog.additions` appends the record of a newer
release (installed, or from a downloaded wheel) to those documents at run time. One extractor both ways.
"""

from __future__ import annotations

import ast
import re
import zipfile
from pathlib import Path
from typing import Any

from trainwright.catalog.extract import facts
from trainwright.catalog.extract.facts import class_body_statements

CLASSES: tuple[tuple[str, str, str | None], ...] = (
    # (class, module file, parent class folded in)
    ("Trainer", "trainer.py", None),
    ("Seq2SeqTrainer", "trainer_seq2seq.py", "Trainer"),
)
FILES = ("trainer.py", "trainer_seq2seq.py", "trainer_pt_utils.py", "trainer_callback.py")
# Other modules that receive the trainer object and call its methods (``trainer.NAME(...)``); read when the
# release has them. Their call sites get a dotted caller such as ``integrations.deepspeed.deepspeed_init``.
EXTERNAL_FILES = (
    "trainer_callback.py",
    "trainer_jit_checkpoint.py",
    "integrations/deepspeed.py",
    "integrations/integration_utils.py",
)
# How those modules name the trainer: a variable ``trainer``/``local_trainer`` or an attribute ``self.trainer``.
TRAINER_NAMES = ("trainer", "local_trainer")
# Wrappers whose result calls the wrapped method; value = keywords the wrapper adds to every call.
WRAPPERS: dict[str, tuple[str, ...]] = {"find_executable_batch_size": ("batch_size",)}
_KIND_CODES = {
    "POSITIONAL_ONLY": 0,
    "POSITIONAL_OR_KEYWORD": 1,
    "VAR_POSITIONAL": 2,
    "KEYWORD_ONLY": 3,
    "VAR_KEYWORD": 4,
}

Sources = dict[str, str]  # file name -> source text

# --------------------------------------------------------------------------------------------- reading


def wheel_sources(wheel: Path) -> Sources:
    with zipfile.ZipFile(wheel) as zf:
        present = set(zf.namelist())
        return {
            name: zf.read(f"transformers/{name}").decode("utf-8")
            for name in (*FILES, *EXTERNAL_FILES)
            if name in FILES or f"transformers/{name}" in present
        }


def dir_sources(directory: Path) -> Sources:
    return {
        name: (directory / name).read_text(encoding="utf-8")
        for name in (*FILES, *EXTERNAL_FILES)
        if name in FILES or (directory / name).is_file()
    }


def package_sources(package: facts.Package) -> Sources:
    """:data:`FILES` and the :data:`EXTERNAL_FILES` the release has, from a wheel or a directory alike."""
    out: Sources = {}
    for name in (*FILES, *EXTERNAL_FILES):
        text = package.text("transformers." + name.removesuffix(".py").replace("/", "."))
        if text is None and name in FILES:
            raise LookupError(f"transformers/{name} is missing: not a transformers source tree")
        if text is not None:
            out[name] = text
    return out


# ------------------------------------------------------------------------------------------ extraction


def params_of(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[list[Any]]:
    """``[[name, kind_code, default_source_or_None], ...]`` in definition order, annotations dropped."""
    a = fn.args
    out: list[list[Any]] = []
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append([arg.arg, _KIND_CODES[kind], None if default is None else ast.unparse(default)])
    if a.vararg:
        out.append([a.vararg.arg, _KIND_CODES["VAR_POSITIONAL"], None])
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        out.append([arg.arg, _KIND_CODES["KEYWORD_ONLY"], None if default is None else ast.unparse(default)])
    if a.kwarg:
        out.append([a.kwarg.arg, _KIND_CODES["VAR_KEYWORD"], None])
    return out


def kind_of(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    for deco in fn.decorator_list:
        name = (
            deco.id if isinstance(deco, ast.Name) else deco.attr if isinstance(deco, ast.Attribute) else None
        )
        if name in ("staticmethod", "classmethod"):
            return name
        if name in ("property", "cached_property", "setter", "getter", "deleter"):
            return "property"
    return "method"


def find_class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise LookupError(f"class {name} not found")


def module_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def class_definitions(cls: ast.ClassDef, pt_utils: dict[str, ast.FunctionDef]) -> dict[str, dict[str, Any]]:
    """name -> {"kind", "params", "node"} for everything callable defined in the class body."""
    defs: dict[str, dict[str, Any]] = {}
    for stmt in class_body_statements(cls.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind = kind_of(stmt)
            if stmt.name in defs and defs[stmt.name]["kind"] == "property":
                continue  # ``@x.setter`` / ``@x.deleter`` keep the getter's entry
            defs[stmt.name] = {"kind": kind, "params": params_of(stmt), "node": stmt}
        elif isinstance(stmt, ast.ImportFrom) and stmt.module == "trainer_pt_utils":
            for alias in stmt.names:
                fn = pt_utils.get(alias.name)
                if fn is None:
                    raise LookupError(
                        f"{alias.name} imported into the class but not defined in trainer_pt_utils"
                    )
                defs[alias.asname or alias.name] = {
                    "kind": kind_of(fn),
                    "params": params_of(fn),
                    "node": None,
                }
    return defs


def _shape(call: ast.Call, extra_keywords: tuple[str, ...] = ()) -> tuple[int, list[str], bool, bool]:
    n_pos = sum(1 for a in call.args if not isinstance(a, ast.Starred))
    star_args = any(isinstance(a, ast.Starred) for a in call.args)
    keywords = [k.arg for k in call.keywords if k.arg is not None] + list(extra_keywords)
    star_kwargs = any(k.arg is None for k in call.keywords)
    return n_pos, keywords, star_args, star_kwargs


def _self_attr(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _method_aliases(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, method_names: set[str]
) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Locals of ``fn`` bound to ``self.NAME`` or to ``WRAPPER(self.NAME, ...)``: local name -> (method, the
    keywords the wrapper adds)."""
    aliases: dict[str, tuple[str, tuple[str, ...]]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            target = node.targets[0].id
            if _self_attr(value) in method_names:
                aliases[target] = (_self_attr(value), ())  # type: ignore[assignment]
            elif (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id in WRAPPERS
                and value.args
                and _self_attr(value.args[0]) in method_names
            ):
                aliases[target] = (_self_attr(value.args[0]), WRAPPERS[value.func.id])  # type: ignore[assignment]
    return aliases


def collect_calls(
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    all_params: dict[str, list[list[Any]]],
    method_names: set[str],
) -> tuple[dict[str, set[tuple[Any, ...]]], set[str]]:
    """Call sites ``name -> {(caller, n_pos, keywords, star_args, star_kwargs)}`` and referenced names."""
    calls: dict[str, set[tuple[Any, ...]]] = {}
    refs: set[str] = set()

    def add(name: str, caller: str, shape: tuple[int, list[str], bool, bool]) -> None:
        n_pos, keywords, star_args, star_kwargs = shape
        calls.setdefault(name, set()).add((caller, n_pos, tuple(keywords), star_args, star_kwargs))

    # Calls of each function's own parameters, for the "method passed as a value" indirection.
    param_calls: dict[str, dict[str, list[tuple[int, list[str], bool, bool]]]] = {}
    for fname, fn in functions.items():
        names = {p[0] for p in all_params[fname]}
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
                param_calls.setdefault(fname, {}).setdefault(node.func.id, []).append(_shape(node))

    for caller, fn in functions.items():
        call_funcs = {id(n.func) for n in ast.walk(fn) if isinstance(n, ast.Call)}
        aliases = _method_aliases(fn, method_names)
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                name = _self_attr(node.func)
                if name in method_names:
                    add(name, caller, _shape(node))
                    # Methods passed as arguments to this method, and called there through the parameter.
                    callee_params = [p[0] for p in all_params.get(name, [])][1:]
                    bindings: list[tuple[str, ast.expr]] = [
                        (callee_params[i], arg)
                        for i, arg in enumerate(node.args)
                        if i < len(callee_params) and not isinstance(arg, ast.Starred)
                    ] + [(k.arg, k.value) for k in node.keywords if k.arg is not None]
                    for pname, value in bindings:
                        passed = _self_attr(value)
                        if passed in method_names:
                            for shape in param_calls.get(name, {}).get(pname, []):
                                add(passed, name, shape)
                elif isinstance(node.func, ast.Name) and node.func.id in aliases:
                    target, extra = aliases[node.func.id]
                    add(target, caller, _shape(node, extra))
            elif isinstance(node, ast.Attribute) and id(node) not in call_funcs:
                name = _self_attr(node)
                if name in method_names and isinstance(node.ctx, ast.Load):
                    refs.add(name)
    return calls, refs


def _is_trainer_object(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in TRAINER_NAMES
    return isinstance(node, ast.Attribute) and node.attr == "trainer" and _self_attr(node) == "trainer"


def external_calls(trees: dict[str, ast.Module], method_names: set[str]) -> dict[str, set[tuple[Any, ...]]]:
    """Call sites ``trainer.NAME(...)`` in the other modules of :data:`EXTERNAL_FILES`."""
    calls: dict[str, set[tuple[Any, ...]]] = {}
    for file_name in EXTERNAL_FILES:
        tree = trees.get(file_name)
        if tree is None:
            continue
        module = file_name.removesuffix(".py").replace("/", ".")

        def visit(node: ast.AST, qualname: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(child, f"{qualname}.{child.name}")
                    continue
                if (
                    isinstance(child, ast.Call)
                    and isinstance(child.func, ast.Attribute)
                    and child.func.attr in method_names
                    and _is_trainer_object(child.func.value)
                ):
                    n_pos, keywords, star_args, star_kwargs = _shape(child)
                    site = (qualname, n_pos, tuple(keywords), star_args, star_kwargs)
                    calls.setdefault(child.func.attr, set()).add(site)
                visit(child, qualname)

        visit(tree, module)
    return calls


def method_records(
    merged: dict[str, dict[str, Any]],
    owners: dict[str, str],
    calls: dict[str, set[tuple[Any, ...]]],
    refs: set[str],
) -> dict[str, dict[str, Any]]:
    """The JSON record of every method of one class in one release (shared with the TRL builder).

    ``called`` is true when some call site was found or the method is referenced as a value
    (passed as a callback, e.g. ``sampler_fn=self._get_train_sampler``).
    """
    return {
        name: {
            "owner": owners[name],
            "kind": d["kind"],
            "params": d["params"],
            "calls": sorted(
                [list(s[:2]) + [list(s[2])] + [int(s[3]), int(s[4])] for s in calls.get(name, ())]
            ),
            "called": bool(calls.get(name)) or name in refs,
        }
        for name, d in merged.items()
    }


def extract_classes(sources: Sources) -> dict[str, dict[str, dict[str, Any]]]:
    """class -> method -> {"owner", "kind", "params", "calls": sorted list, "called": bool} for one release."""
    trees = {name: facts.parse_source(text) for name, text in sources.items()}
    pt_utils = module_functions(trees["trainer_pt_utils.py"])
    own: dict[str, dict[str, dict[str, Any]]] = {}
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for cls_name, file_name, parent in CLASSES:
        own[cls_name] = class_definitions(find_class(trees[file_name], cls_name), pt_utils)
        merged: dict[str, dict[str, Any]] = {}
        owners: dict[str, str] = {}
        for chain_cls in ([parent] if parent else []) + [cls_name]:
            for name, d in own[chain_cls].items():
                merged[name] = d
                owners[name] = chain_cls
        method_names = set(merged)
        calls: dict[str, set[tuple[Any, ...]]] = {}
        refs: set[str] = set()
        # The class's own code and its parent's code both run on an instance of the class.
        for chain_cls in ([parent] if parent else []) + [cls_name]:
            functions = {n: d["node"] for n, d in own[chain_cls].items() if d["node"] is not None}
            all_params = {n: d["params"] for n, d in merged.items()}
            c, r = collect_calls(functions, all_params, method_names)
            for name, sites in c.items():
                calls.setdefault(name, set()).update(sites)
            refs |= r
        for name, sites in external_calls(trees, method_names).items():
            calls.setdefault(name, set()).update(sites)
        result[cls_name] = method_records(merged, owners, calls, refs)
    return result


def extract_events(sources: Sources) -> dict[str, list[str]]:
    """event -> kwargs passed by ``CallbackHandler`` (its ``call_event`` defaults plus the event's own)."""
    tree = facts.parse_source(sources["trainer_callback.py"])
    events = [
        stmt.name
        for stmt in class_body_statements(find_class(tree, "TrainerCallback").body)
        if isinstance(stmt, ast.FunctionDef) and stmt.name.startswith("on_")
    ]
    handler = find_class(tree, "CallbackHandler")
    base: list[str] = []
    per_event: dict[str, list[str]] = {}
    for stmt in class_body_statements(handler.body):
        if not isinstance(stmt, ast.FunctionDef):
            continue
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Call):
                continue
            if stmt.name == "call_event" and isinstance(node.func, ast.Call):  # getattr(callback, event)(...)
                base = [k.arg for k in node.keywords if k.arg is not None]
            elif (
                stmt.name.startswith("on_")
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "call_event"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                per_event[node.args[0].value] = [k.arg for k in node.keywords if k.arg is not None]
    if not base:
        raise LookupError("CallbackHandler.call_event: could not find the callback invocation")
    return {event: base + per_event.get(event, []) for event in events}


def extract_control_flags(sources: Sources) -> list[str]:
    tree = facts.parse_source(sources["trainer_callback.py"])
    cls = find_class(tree, "TrainerControl")
    return [
        stmt.target.id
        for stmt in cls.body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
    ]


def extract_release(sources: Sources) -> dict[str, Any]:
    return {
        "classes": extract_classes(sources),
        "events": extract_events(sources),
        "control_flags": extract_control_flags(sources),
    }


# ---------------------------------------------------------------------- facts for the linter's new core

PACKAGE = "transformers"
# Modules whose ``from M import *`` the linter must understand (each recorded when the release has it).
EXPORT_MODULES = (
    "transformers",
    "transformers.trainer",
    "transformers.trainer_seq2seq",
    "transformers.trainer_callback",
    "transformers.training_args",
    "transformers.training_args_seq2seq",
    "transformers.integrations",
    "transformers.integrations.integration_utils",
    "transformers.keras_callbacks",
)
# Modules whose trainer/callback/arguments classes enter the class graph, besides any module outside
# ``models/`` whose source has a ``class ...Trainer|Callback|Arguments`` (found with CLASS_PATTERN).
CLASS_MODULES = (
    "transformers.trainer",
    "transformers.trainer_seq2seq",
    "transformers.trainer_callback",
    "transformers.training_args",
    "transformers.training_args_seq2seq",
    "transformers.keras_callbacks",
    "transformers.utils.notebook",
)
CLASS_PATTERN = re.compile(r"(?m)^class \w+(?:Trainer|Callback|Arguments|CallbackHandler)\b")
ARGUMENT_CLASSES = (
    "transformers.training_args.TrainingArguments",
    "transformers.training_args_seq2seq.Seq2SeqTrainingArguments",
)
# Classes whose ``__init__`` parameters may be renamed (the parameters themselves are in ``classes``).
INIT_CLASSES = {
    "Trainer": "transformers.trainer.Trainer",
    "Seq2SeqTrainer": "transformers.trainer_seq2seq.Seq2SeqTrainer",
}


def class_seeds(package: facts.Package, resolver: facts.Resolver) -> list[str]:
    modules = set(CLASS_MODULES) | set(package.modules("transformers.integrations"))
    for module in package.modules():
        if module.startswith(("transformers.models.", "transformers.utils.dummy_")) or module in modules:
            continue
        text = package.text(module) or ""
        if CLASS_PATTERN.search(text):
            modules.add(module)
    seeds = []
    for module in sorted(modules):
        seeds.extend(c for c in resolver.module_classes(module) if facts.wanted(c))
    return seeds


def extract_fingerprints(sources: Sources) -> dict[tuple[str, str], list[str]]:
    """``(canonical class, method) -> fingerprints`` of the methods ``Trainer``/``Seq2SeqTrainer`` define.

    A ``trainer_pt_utils`` function imported into the class body counts as a method of the class.
    """
    trees = {
        name: facts.parse_source(sources[name])
        for name in ("trainer.py", "trainer_seq2seq.py", "trainer_pt_utils.py")
    }
    pt_utils = module_functions(trees["trainer_pt_utils.py"])
    out: dict[tuple[str, str], list[str]] = {}
    for cls_name, file_name, _ in CLASSES:
        cls = find_class(trees[file_name], cls_name)
        canonical = INIT_CLASSES[cls_name]
        nodes = facts.method_nodes(cls)
        for stmt in class_body_statements(cls.body):
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "trainer_pt_utils":
                for alias in stmt.names:
                    nodes.setdefault(alias.asname or alias.name, []).append(pt_utils[alias.name])
        for name, functions in nodes.items():
            out[(canonical, name)] = facts.fingerprints_of(functions)
    return out


def extract_modules(package: facts.Package) -> tuple[facts.Resolver, dict[str, Any]]:
    """Star-import exports of :data:`EXPORT_MODULES` and the class graph of one release."""
    resolver = facts.Resolver(package)
    exports = {m: resolver.exports(m) for m in EXPORT_MODULES if package.has_module(m)}
    seeds = class_seeds(package, resolver)
    seeds += [c for names in exports.values() for c in names.values()]
    return resolver, {"exports": exports, "classes": resolver.class_graph(seeds)}


def extract_arguments(resolver: facts.Resolver, sources: Sources) -> dict[str, Any]:
    """``TrainingArguments``/``Seq2SeqTrainingArguments`` fields and the renames the source shows."""
    fields: dict[str, list[list[Any]]] = {}
    renames: list[tuple[str, str, str, bool, str]] = []
    for canonical in ARGUMENT_CLASSES:
        node = resolver.class_node(canonical)
        if node is None:
            raise LookupError(f"{canonical} not found")
        fields[canonical] = facts.dataclass_fields(node)
    all_names = {f[0] for own in fields.values() for f in own}
    for canonical in ARGUMENT_CLASSES:
        node = resolver.class_node(canonical)
        assert node is not None
        for fn in facts.method_nodes(node).values():
            for function in fn:
                for old, new, exact, note in facts.rename_evidence(function, all_names, on_self=True):
                    renames.append((canonical, old, new, exact, note))
        for old, new, exact, note in facts.help_evidence(facts.field_help(node), all_names):
            renames.append((canonical, old, new, exact, note))
    trees = {
        "trainer.py": facts.parse_source(sources["trainer.py"]),
        "trainer_seq2seq.py": facts.parse_source(sources["trainer_seq2seq.py"]),
    }
    for cls_name, file_name, _ in CLASSES:
        init = next(
            (
                s
                for s in find_class(trees[file_name], cls_name).body
                if isinstance(s, ast.FunctionDef) and s.name == "__init__"
            ),
            None,
        )
        if init is None:
            continue
        names = {p[0] for p in params_of(init)}
        for old, new, exact, note in facts.rename_evidence(init, names, on_self=False):
            renames.append((INIT_CLASSES[cls_name], old, new, exact, note))
    return {"fields": fields, "renames": sorted(set(renames))}


def extract_facts(sources: Sources, package: facts.Package) -> dict[str, Any]:
    """The facts for the linter of one release (see the module docstring)."""
    resolver, modules = extract_modules(package)
    return {
        "fingerprints": extract_fingerprints(sources),
        "modules": modules,
        "arguments": extract_arguments(resolver, sources),
    }


def extract_record(package: facts.Package) -> dict[str, Any]:
    """Everything the catalogue holds about one release: ``{"release": ..., "facts": ...}``, as the builder
    computes it before merging (``fingerprints`` keyed by ``(class, method)`` tuples)."""
    sources = package_sources(package)
    return {"release": extract_release(sources), "facts": extract_facts(sources, package)}
