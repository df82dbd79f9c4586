"""The project's own ``TrainingArguments`` subclass, when its Trainer reads fields only that class has.

Why: a project's Trainer subclass reads ``self.args.max_new_tokens`` or ``args.vision_tower_lr``, fields
its own ``@dataclass class TrainingArguments(transformers.TrainingArguments)`` declares, usually in the
training script, which the Trainer's module never imports. Built from the library's class, the run
stops at ``AttributeError``, before and after a fix alike, and the fix is never judged.

The class is read from the project's source (``ast``), never imported: the script holding it parses
its command line or loads models when imported. It is rebuilt (``dataclasses.make_dataclass``) on the
arguments class the oracle would use, with the project's literal defaults (``x: int = 16``,
``field(default=...)``, ``field(default_factory=list)``); the oracle's own values still win for the
fields it sets. A field the Trainer reads whose default is not a literal (or that has none) is a
reason the program cannot run (:class:`~trainwright.testing._construct.NotRunnable`), named; the
project's ``__post_init__`` is not run, so a field it derives stays missing, and says so when read.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from trainwright.testing._construct import NotRunnable

_READ = re.compile(r"\bargs\.([A-Za-z_]\w*)")
_BASES = ("TrainingArguments", "Seq2SeqTrainingArguments")
_FACTORIES = {"list": list, "dict": dict, "set": set, "tuple": tuple}
_MAX_FILES = 5000
_NO_DEFAULT = object()


@dataclasses.dataclass(frozen=True)
class _Found:
    """A project class: its name, file, base name and fields (name -> default, or ``_NO_DEFAULT``)."""

    name: str
    path: Path
    base: str
    fields: dict[str, Any]


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _default(value: ast.expr | None) -> Any:
    """The literal default of a field's right-hand side, else ``_NO_DEFAULT``."""
    if value is None:
        return _NO_DEFAULT
    if isinstance(value, ast.Call) and _base_name(value.func) == "field":
        keywords = {k.arg: k.value for k in value.keywords}
        if "default" in keywords:
            return _default(keywords["default"])
        factory = keywords.get("default_factory")
        if isinstance(factory, ast.Name) and factory.id in _FACTORIES:
            return _FACTORIES[factory.id]()
        return _NO_DEFAULT
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_DEFAULT


def _classes(path: Path, text: str, bases: tuple[str, ...]) -> list[_Found]:
    """The dataclasses in ``text`` (the file ``path``) deriving directly from one of ``bases``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        base = next((_base_name(b) for b in node.bases if _base_name(b) in bases), "")
        if not base:
            continue
        fields = {
            s.target.id: _default(s.value)
            for s in node.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        }
        out.append(_Found(node.name, path, base, fields))
    return out


def _candidates(root: Path, wanted: set[str], bases: tuple[str, ...]) -> list[_Found]:
    """The project's argument classes declaring at least one of ``wanted``."""
    out = []
    for path in sorted(root.rglob("*.py"))[:_MAX_FILES]:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(b in text for b in bases) and any(w in text for w in wanted):
            out += [c for c in _classes(path, text, bases) if wanted & set(c.fields)]
    return out


def _has(base: type, name: str) -> bool:
    return name in getattr(base, "__dataclass_fields__", {}) or hasattr(base, name)


def _made(found: _Found, base: type, wanted: set[str]) -> type:
    """``found`` rebuilt on ``base``: its fields with literal defaults (every field read must have one)."""
    missing = sorted(n for n in wanted & set(found.fields) if found.fields[n] is _NO_DEFAULT)
    if missing:
        raise NotRunnable(
            f"reads {', '.join(missing)} of the project's `{found.name}` ({found.path.name}), "
            "which has no literal default"
        )
    specs = [
        (name, Any, dataclasses.field(default_factory=functools.partial(copy.deepcopy, value)))
        for name, value in found.fields.items()
        if value is not _NO_DEFAULT
    ]
    made = dataclasses.make_dataclass(f"project_{found.name}", specs, bases=(base,))
    made.__module__ = __name__  # pickled by ``Trainer._save`` (``training_args.bin``): found by name
    setattr(sys.modules[__name__], made.__name__, made)
    return made


def project_arguments(module: ModuleType, root: Path, base: type) -> tuple[type, str] | None:
    """``(class, description)``: the project's own arguments class rebuilt on ``base``, when the
    Trainer's module reads fields ``base`` lacks and one class of the project (under ``root``) declares
    them (the one declaring most of them); ``None`` otherwise."""
    source = getattr(module, "__file__", None)
    if source is None or not Path(source).is_file():
        return None
    text = Path(source).read_text(encoding="utf-8", errors="replace")
    wanted = {n for n in _READ.findall(text) if not _has(base, n)}
    if not wanted:
        return None
    bases = tuple(dict.fromkeys((*_BASES, base.__name__)))
    found = _candidates(root, wanted, bases)
    if not found:
        return None
    best = max(found, key=lambda c: len(wanted & set(c.fields)))
    made = _made(best, base, wanted)
    where = best.path.relative_to(root) if best.path.is_relative_to(root) else best.path.name
    read = ", ".join(f"`{n}`" for n in sorted(wanted & set(best.fields)))
    return made, f"the project's `{best.name}` ({where}; reads {read})"
