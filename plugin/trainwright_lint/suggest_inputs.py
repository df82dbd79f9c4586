"""What moved override code reads that a callback does not have, and how the callback gets it.

``fix --suggest`` moves statements out of a Trainer override into callback events. Two kinds of
value they read used to become ``None`` stand-ins, and the callback crashed on its first call:

* a **local of the override computed outside the moved code** (``out = self.args.output_dir``, then
  ``os.path.join(out, ...)`` in the moved part): when its assignment reads only what the event has
  (``args``, ``state``, the event's keyword arguments, imports, module names), the assignment is
  computed again in the event instead;
* an **attribute the Trainer subclass set itself** (``self.log_every = log_every`` in its
  ``__init__``): the callback takes it as an ``__init__`` argument, with the Trainer's default when
  the class shows one, so ``MyCallback()`` works as pasted and ``MyCallback(log_every=10)`` keeps the
  Trainer's setting.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def local_assignments(func: FunctionNode) -> dict[str, ast.stmt]:
    """The override's top-level ``name = expr`` statements, the first for each name."""
    found: dict[str, ast.stmt] = {}
    for statement in func.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            found.setdefault(targets[0].id, statement)
    return found


def recomputed(
    missing: Iterable[str],
    assignments: dict[str, ast.stmt],
    source: str,
    translate: Callable[[str], tuple[str, set[str]] | None],
) -> tuple[list[str], set[str]]:
    """The statements (translated for the event, in the override's order) that compute the
    ``missing`` locals again, and the names still missing after them.

    ``translate(code)`` gives the event's version of a statement and the names it reads that the
    event lacks, or ``None`` when it reads a Trainer attribute the callback cannot have. A statement is
    taken when every name it reads is available or computed by another taken statement."""
    chosen: dict[str, tuple[ast.stmt, str]] = {}
    left = set(missing)
    progress = True
    while progress:
        progress = False
        for name in sorted(left):
            statement = assignments.get(name)
            code = ast.get_source_segment(source, statement) if statement is not None else None
            translated = translate(code) if code is not None else None
            if translated is None:
                continue
            text, needs = translated
            if needs - set(chosen) - {name}:
                wanted = {n for n in needs if n in assignments and n not in chosen}
                progress |= not wanted <= left  # a local it reads: try computing that one too
                left |= wanted
                continue
            chosen[name] = (statement, text)  # type: ignore[assignment]
            left.discard(name)
            progress = True
    ordered = sorted(chosen.values(), key=lambda pair: pair[0].lineno)
    return [text for _, text in ordered], left - set(chosen)


def attribute_defaults(tree: ast.Module, class_name: str) -> dict[str, str | None]:
    """Each ``self.<attribute>`` the class assigns -> the source of its default: a literal assigned
    directly, or the default of the parameter it is set from (``__init__`` first); ``None`` when there
    is no literal to show. Attributes the class never assigns are not there (Trainer methods and
    attributes: a callback cannot be given those)."""
    cls = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is None:
        return {}
    methods = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    methods.sort(key=lambda m: m.name != "__init__")
    found: dict[str, str | None] = {}
    for method in methods:
        defaults = _parameter_defaults(method)
        for node in ast.walk(method):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for name in filter(None, map(_self_attribute, targets)):
                    found.setdefault(name, _default_of(node.value, defaults))
    return found


def _self_attribute(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _parameter_defaults(func: FunctionNode) -> dict[str, ast.expr]:
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    out = {p.arg: d for p, d in zip(positional[len(positional) - len(args.defaults) :], args.defaults)}
    out.update({p.arg: d for p, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return out


def _default_of(value: ast.expr, defaults: dict[str, ast.expr]) -> str | None:
    """``10`` for ``self.x = 10`` or ``self.x = x`` with ``x=10``; ``None`` when not a literal."""
    if isinstance(value, ast.Name) and value.id in defaults:
        value = defaults[value.id]
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return ast.unparse(value)
