#!/usr/bin/env python3
"""Regenerate ``src/trainwright/catalog/data/transformers-events.json``: which callback events fire around
each Trainer method, on every call path from a public entry point, per transformers release.

Maintainer tool, not run in CI. Like ``scripts/build_catalog.py`` it reads each release's source with
``ast`` (never imports it), from a wheel or a ``site-packages/transformers`` folder:

    python scripts/build_events.py --source 5.24.0=/path/to/site-packages/transformers
    python scripts/build_events.py --wheel-dir /tmp/wheels          # every transformers-*.whl there

Kept apart from ``build_catalog.py`` on purpose: the event table is its own fact with its own file.

What is derived, per release:
- For every ``Trainer`` method, its body in evaluation order as a list of *steps*: a call of another
  Trainer method (``self.NAME(...)``, or ``self.NAME`` handed on as a value, e.g. to
  ``find_executable_batch_size``) or a callback event (``self.callback_handler.on_X(...)``), each with
  the loops that enclose it (an event in the same loop as a call fires around every iteration of it).
- Entry points: the public methods a user calls (``ENTRY_POINTS``) and the functions of other
  transformers modules that call the trainer (``trainer_jit_checkpoint``: the SIGTERM checkpoint).
- Every simple call path from an entry point to each method (cycles cut, at most ``MAX_PATHS`` per
  method), and on each hop the events its caller fires before the call, after it, and around it (same
  loop). The events a method fires itself, or through its callees, are its ``inside`` events.
- The keyword arguments ``CallbackHandler`` passes each event.

The lint side reads the result through ``trainwright.catalog.events`` (no transformers import).
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from trainwright.catalog.events import DATA_FILE, FORMAT, PROOFS_FILE, EventTables
from trainwright.catalog.extract.transformers_source import Sources, dir_sources, wheel_sources
from trainwright.catalog.versions import sort_versions

PROOFS_FILE_PATH = Path(PROOFS_FILE)

# What a user calls on a trainer object. ``__init__`` fires ``on_init_end``.
ENTRY_POINTS = (
    "__init__",
    "train",
    "evaluate",
    "predict",
    "save_model",
    "push_to_hub",
    "hyperparameter_search",
)
# Other transformers modules that receive the trainer and call its methods (read when the release has them).
EXTERNAL_FILES = ("trainer_jit_checkpoint.py",)
FILES = ("trainer.py", "trainer_callback.py")
MAX_PATHS = 64
MAX_DEPTH = 10


@dataclass
class Step:
    """One call of a Trainer method or one event, in the order the method's body runs them."""

    kind: str  # "call" or "event"
    name: str
    loops: tuple[int, ...]  # ids of the enclosing loop statements
    line: int
    conditional: bool = False  # under an ``if``, an ``except``, a ``match`` case or a conditional expression


@dataclass
class Body:
    steps: list[Step] = field(default_factory=list)


# --------------------------------------------------------------------------------------- extraction


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise LookupError(f"class {name} not found")


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


class _StepCollector(ast.NodeVisitor):
    """Post-order walk (arguments run before the call that receives them) that keeps a loop stack."""

    def __init__(
        self, methods: set[str], receiver: str = "self", params: frozenset[str] = frozenset()
    ) -> None:
        self.methods = methods
        self.params = params
        self.handed: list[tuple[str, str, str]] = []  # (callee, parameter, method handed on)
        self.receiver = receiver
        self.loops: list[int] = []
        self.conditions = 0
        self.steps: list[Step] = []
        self._called: set[int] = set()

    def _loop(self, node: ast.For | ast.While | ast.AsyncFor) -> None:
        self.loops.append(id(node))
        self.generic_visit(node)
        self.loops.pop()

    visit_For = visit_While = visit_AsyncFor = _loop

    def _branch(self, node: ast.AST) -> None:
        test = getattr(node, "test", None)
        if test is not None:  # the condition itself always runs
            self.visit(test)
        self.conditions += 1
        for name, value in ast.iter_fields(node):
            if name == "test":
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    self.visit(child)
        self.conditions -= 1

    visit_If = visit_IfExp = visit_ExceptHandler = visit_match_case = _branch

    def _add(self, kind: str, name: str, node: ast.AST) -> None:
        step = Step(kind, name, tuple(self.loops), getattr(node, "lineno", 0), self.conditions > 0)
        self.steps.append(step)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if self._is_receiver_method(func):  # ``self._get_dataloader(sampler_fn=self._get_train_sampler)``
            for kw in node.keywords:
                if kw.arg and self._is_receiver_method(kw.value):
                    self.handed.append((func.attr, kw.arg, kw.value.attr))  # type: ignore[attr-defined]
                    self._called.add(id(kw.value))
        self.generic_visit(node)
        if isinstance(func, ast.Name) and func.id in self.params:
            self._add("param", func.id, node)  # the callee of a method handed on as this argument
        if isinstance(func, ast.Attribute):
            owner = func.value
            if (
                func.attr.startswith("on_")
                and isinstance(owner, ast.Attribute)
                and owner.attr == "callback_handler"
                and isinstance(owner.value, ast.Name)
                and owner.value.id == self.receiver
            ):
                self._add("event", func.attr, node)
            elif self._is_receiver(owner) and func.attr in self.methods:
                self._called.add(id(func))
                self._add("call", func.attr, node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)
        # ``find_executable_batch_size(self._inner_training_loop, ...)``: handed on, then called
        handed_on = (
            id(node) not in self._called and self._is_receiver(node.value) and node.attr in self.methods
        )
        if handed_on and isinstance(getattr(node, "ctx", None), ast.Load):
            self._add("call", node.attr, node)

    def _is_receiver_method(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Attribute) and self._is_receiver(node.value) and node.attr in self.methods

    def _is_receiver(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Name):
            return node.id == self.receiver
        return isinstance(node, ast.Attribute) and node.attr == "trainer" and self.receiver == "trainer"


def method_bodies(tree: ast.Module) -> dict[str, Body]:
    """Each Trainer method's steps. A method handed on as an argument to another method that calls
    that parameter (``_get_dataloader(sampler_fn=self._get_train_sampler)`` -> ``sampler_fn(dataset)``)
    is called by the receiving method, where it calls the parameter."""
    methods = _methods(_class(tree, "Trainer"))
    names = set(methods)
    out: dict[str, Body] = {}
    handed: list[tuple[str, str, str]] = []
    for name, fn in methods.items():
        params = frozenset(a.arg for a in (*fn.args.args, *fn.args.kwonlyargs))
        collector = _StepCollector(names, params=params)
        for stmt in fn.body:
            collector.visit(stmt)
        out[name] = Body(collector.steps)
        handed.extend(collector.handed)
    for callee, param, method in handed:
        body = out.get(callee)
        if body is None:
            continue
        for i, step in enumerate(list(body.steps)):
            if step.kind == "param" and step.name == param:
                body.steps.insert(i, Step("call", method, step.loops, step.line, step.conditional))
                break
    for body in out.values():
        body.steps = [s for s in body.steps if s.kind != "param"]
    return out


def external_bodies(sources: Sources, names: set[str]) -> dict[str, Body]:
    """``module.function`` -> its calls of trainer methods (``trainer.NAME``/``self.trainer.NAME``)."""
    out: dict[str, Body] = {}
    for file in EXTERNAL_FILES:
        if file not in sources:
            continue
        module = file.removesuffix(".py").replace("/", ".")
        tree = ast.parse(sources[file])
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            collector = _StepCollector(names, receiver="trainer")
            for stmt in node.body:
                collector.visit(stmt)
            calls = [s for s in collector.steps if s.kind == "call"]
            if calls:
                out[f"{module}.{node.name}"] = Body(calls)
    return out


def event_kwargs(sources: Sources) -> dict[str, list[str]]:
    """event -> the keyword arguments ``CallbackHandler`` passes (``call_event``'s plus the event's own)."""
    tree = ast.parse(sources["trainer_callback.py"])
    events = [n for n in _methods(_class(tree, "TrainerCallback")) if n.startswith("on_")]
    base: list[str] = []
    own: dict[str, list[str]] = {}
    for name, fn in _methods(_class(tree, "CallbackHandler")).items():
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            if name == "call_event" and isinstance(node.func, ast.Call):  # getattr(callback, event)(...)
                base = [k.arg for k in node.keywords if k.arg is not None]
            elif (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "call_event"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                own[str(node.args[0].value)] = [k.arg for k in node.keywords if k.arg is not None]
    head = ["args", "state", "control"]
    return {e: head + base + own.get(e, []) for e in events}


# -------------------------------------------------------------------------------------------- paths


def inside_events(bodies: dict[str, Body], always: bool) -> dict[str, list[str]]:
    """Events a method fires itself or through its callees (any depth), in first-firing order;
    ``always``: only those it fires on every run (no condition on the way)."""
    memo: dict[str, list[str]] = {}

    def visit(name: str, stack: frozenset[str]) -> list[str]:
        if name in memo:
            return memo[name]
        found: list[str] = []
        for step in bodies.get(name, Body()).steps:
            if always and step.conditional:
                continue
            more = (
                [step.name]
                if step.kind == "event"
                else (
                    visit(step.name, stack | {name}) if step.name not in stack and step.name != name else []
                )
            )
            found.extend(e for e in more if e not in found)
        if not stack:
            memo[name] = found
        return found

    return {name: visit(name, frozenset()) for name in bodies}


def hop(bodies: dict[str, Body], inside: dict[str, list[str]], caller: str, callee: str) -> dict[str, Any]:
    """What ``caller`` fires around its calls of ``callee``: before, after, and in a loop enclosing one."""
    steps = bodies[caller].steps
    sites = [i for i, s in enumerate(steps) if s.kind == "call" and s.name == callee]
    before: list[str] = []
    after: list[str] = []
    around: list[str] = []

    def fired(step: Step) -> list[str]:
        if step.kind == "event":
            return [step.name]
        return [] if step.name in (caller, callee) else inside.get(step.name, [])

    for site in sites:
        loops = set(steps[site].loops)
        for i, step in enumerate(steps):
            if i == site:
                continue
            for event in fired(step):
                bucket = before if i < site else after
                if event not in bucket:
                    bucket.append(event)
                if loops & set(step.loops) and event not in around:
                    around.append(event)
    # no line numbers: they move with every release and would make each release's table distinct
    return {"caller": caller, "before": before, "after": after, "around": around}


def call_paths(bodies: dict[str, Body], entries: list[str]) -> dict[str, list[list[str]]]:
    """method -> the simple call paths (entry first, method last) that reach it."""
    paths: dict[str, list[list[str]]] = {}
    stack: list[list[str]] = [[e] for e in reversed(entries)]
    while stack:
        path = stack.pop()
        tail = path[-1]
        if len(path) > 1:
            found = paths.setdefault(tail, [])
            if len(found) >= MAX_PATHS:
                continue
            found.append(path)
        if len(path) >= MAX_DEPTH:
            continue
        callees = list(dict.fromkeys(s.name for s in bodies.get(tail, Body()).steps if s.kind == "call"))
        stack.extend(path + [c] for c in reversed(callees) if c not in path)
    return paths


def extract_release(sources: Sources) -> dict[str, Any]:
    tree = ast.parse(sources["trainer.py"])
    bodies = method_bodies(tree)
    external = external_bodies(sources, set(bodies))
    all_bodies = {**bodies, **external}
    inside = inside_events(all_bodies, always=False)
    always = inside_events(all_bodies, always=True)
    entries = [e for e in ENTRY_POINTS if e in bodies] + sorted(external)
    methods: dict[str, Any] = {}
    paths = call_paths(all_bodies, entries)
    for entry in entries:  # an entry point is also reached by its own call
        paths.setdefault(entry, []).insert(0, [entry])
    for name in sorted(bodies):
        found = paths.get(name, [])
        methods[name] = {
            "inside": always.get(name, []),
            "maybe": [e for e in inside.get(name, []) if e not in always.get(name, [])],
            "paths": [
                {
                    "entry": path[0],
                    "hops": [hop(all_bodies, inside, a, b) for a, b in itertools.pairwise(path)],
                    "via": path[1:-1],
                }
                for path in found
            ],
        }
    return {"entries": entries, "events": event_kwargs(sources), "methods": methods}


# --------------------------------------------------------------------------------------------- main


class _Pool:
    """Values stored once, referred to by index (a hop or a path recurs across methods and releases)."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._index: dict[str, int] = {}

    def add(self, value: Any) -> int:
        key = json.dumps(value, sort_keys=True)
        if key not in self._index:
            self._index[key] = len(self.items)
            self.items.append(value)
        return self._index[key]


def proofs(data: dict[str, Any]) -> dict[str, Any]:
    """What the linter's proof reads (``trainwright_lint.analysis.moves``), small enough to load on every
    lint: per distinct table and method, the events it fires itself and, per path, whether the path is
    opt-in and the events around the method on it (``CallPath.near`` plus the last hop's ``around``)."""
    tables = EventTables(data)
    pool = _Pool()
    out = []
    for version in [
        min(v for v, i in data["releases"].items() if i == k) for k in range(len(data["tables"]))
    ]:
        view = tables.at(version)
        methods = {}
        for name in data["tables"][data["releases"][version]]["methods"]:
            near = set()
            for path in view.paths(name):
                before, after = path.near()
                around = path.hops[-1].around if path.hops else ()
                near.add((int("." in path.entry), tuple(sorted({*before, *after, *around}))))
            methods[name] = pool.add([list(view.inside(name)), sorted([o, list(e)] for o, e in near)])
        out.append(methods)
    return {"format": FORMAT, "releases": data["releases"], "tables": out, "entries": pool.items}


def pack(releases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The file's layout: hops ``[caller, before, after, around]`` and paths ``[entry, hop ids]`` pooled
    across releases, one table per distinct release (releases map to a table index)."""
    hops, paths, tables = _Pool(), _Pool(), _Pool()
    index: dict[str, int] = {}
    for version, release in releases.items():
        methods = {
            name: {
                "inside": m["inside"],
                "maybe": m["maybe"],
                "paths": [
                    paths.add([p["entry"], [hops.add([h["caller"], h["before"], h["after"], h["around"]])
                                            for h in p["hops"]]])
                    for p in m["paths"]
                ],
            }
            for name, m in release["methods"].items()
        }  # fmt: skip
        index[version] = tables.add(
            {"entries": release["entries"], "events": release["events"], "methods": methods}
        )
    return {
        "format": FORMAT,
        "hops": hops.items,
        "paths": paths.items,
        "releases": index,
        "tables": tables.items,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", action="append", default=[], metavar="VERSION=DIR")
    parser.add_argument("--wheel-dir", type=Path, help="read every transformers-*.whl in this folder")
    parser.add_argument("--out", type=Path, default=DATA_FILE)
    args = parser.parse_args(argv)
    sources: dict[str, Sources] = {}
    for item in args.source:
        version, _, directory = item.partition("=")
        if not directory or not Path(directory, "trainer.py").is_file():
            parser.error(f"--source {item!r}: expected VERSION=DIR with DIR/trainer.py")
        sources[version] = dir_sources(Path(directory), FILES, EXTERNAL_FILES)
    if args.wheel_dir is not None:
        for wheel in sorted(args.wheel_dir.glob("transformers-*.whl")):
            version = wheel.name.split("-")[1]
            sources.setdefault(version, wheel_sources(wheel, FILES, EXTERNAL_FILES))
    if not sources:
        parser.error("nothing to read: give --source or --wheel-dir")
    data = pack({v: extract_release(sources[v]) for v in sort_versions(list(sources))})
    PROOFS_FILE_PATH.write_text(json.dumps(proofs(data), separators=(",", ":"), sort_keys=True) + "\n")
    args.out.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n")
    releases = sort_versions(list(sources))
    print(f"wrote {args.out} ({len(releases)} releases: {releases[0]}-{releases[-1]})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
