"""TW304: a keyword argument the target release no longer accepts, where a Trainer, a TRL trainer,
``TrainingArguments`` or a TRL config is constructed."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from trainwright.catalog import Catalog, VersionView
from trainwright.catalog.model import Rename
from trainwright.catalog.versions import version_key
from trainwright_lint.analysis.facts import FILE, SharedFact
from trainwright_lint.analysis.unit import FileUnit, nodes_on_lines, statements_at
from trainwright_lint.edits import Edit
from trainwright_lint.finding import Finding
from trainwright_lint.prefilter import CONSTRUCTED_WORDS, constructs_library_class
from trainwright_lint.project import library
from trainwright_lint.project.model import LIBRARY_CLASS, MIXIN, PROJECT_CLASS, split_key
from trainwright_lint.project.summary import ALIAS, CLASS, IMPORT_FROM, Binding, import_bindings
from trainwright_lint.rules.base import SAFE, Example, ModuleContext, Rule
from trainwright_lint.syntax import FUNCTION_TYPES, FunctionNode, dotted_name, super_method
from trainwright_lint.textscan import LiteralScan

_TRANSFORMERS_CLASSES = {
    library.TRAINER: "Trainer",
    library.SEQ2SEQ: "Seq2SeqTrainer",
    "transformers.TrainingArguments": "TrainingArguments",
    "transformers.Seq2SeqTrainingArguments": "Seq2SeqTrainingArguments",
}


@dataclass(frozen=True)
class RenameKeyword(Edit):
    """TW304: ``f(old=value)`` -> ``f(new=value)`` in the call that starts on ``line``."""

    line: int
    old: str
    new: str
    unsafe: bool = False

    def describe(self) -> str:
        return f"Rename the argument `{self.old}=` to `{self.new}=`"


@dataclass(frozen=True)
class Target:
    """The library class a call constructs: ``library`` is "transformers" or "trl"."""

    library: str
    cls: str  # short name: "Trainer", "TrainingArguments", "GRPOTrainer", "DPOConfig"
    consumed: frozenset[str] = frozenset()  # keywords a project __init__ in between takes itself

    @property
    def arguments_class(self) -> bool:
        return self.cls.endswith(("Arguments", "Config"))


# The functions of a file that import names themselves: (first line, last line, the names bound).
Scope = dict[str, tuple[Binding, ...]]
LOCAL_IMPORTS: SharedFact[list[tuple[int, int, Scope]]] = SharedFact("function-level imports", FILE)
# Every call of a file that constructs a class TW304 checks (key: None).
CONSTRUCTIONS: SharedFact[list[tuple[ast.Call, Target, str | None, str | None]]] = SharedFact(
    "library constructions", FILE, needs=(LOCAL_IMPORTS,)
)


class RemovedArgument(Rule):
    """A call passes a keyword argument that the target release of the constructed class does not
    accept: `Trainer(model=m, tokenizer=tok)` and `TrainingArguments(evaluation_strategy="steps")` are
    plain `TypeError`s on transformers 5.x, `DPOTrainer(..., beta=0.1)` is one on TRL 1.x (the knob
    moved to `DPOConfig`). Checked where `Trainer`, `Seq2SeqTrainer`, a TRL trainer,
    `TrainingArguments`, `Seq2SeqTrainingArguments` or a TRL config — or a project subclass of one —
    is constructed, and in `super().__init__(...)` calls that reach one.

    A deprecated name is accepted for as long as the release still takes it under the old name (the
    catalogue records both the fields and the deprecation windows), so a project pinned to
    `transformers>=4.44,<4.46` is not told about 5.0. Keywords a project's own `__init__` takes before
    passing the rest on are not checked against the library.
    """

    FIX = (
        "Pass the argument under its new name (`processing_class=`, `eval_strategy=`), or, when it moved, "
        "set it where the message says (a TRL trainer's knobs live in its config)."
    )
    EVIDENCE = (
        "https://github.com/huggingface/transformers/pull/32385",
        "https://github.com/huggingface/transformers/pull/30190",
    )

    code = "TW304"
    FACTS = (CONSTRUCTIONS, LOCAL_IMPORTS)
    name = "removed-argument"
    scope = "module"
    script_gate = staticmethod(constructs_library_class)  # a script that builds a Trainer / arguments
    fix_applicability = SAFE
    fix_module = "trainwright_lint.rules.tw304_removed_argument_fix"
    fix_pass = 5
    fix_title = "rename a renamed argument"
    fix_safety_note = (
        "A rename is offered only where the new name takes the old value unchanged on every release of "
        "the range: the catalogue records the release whose shim maps the old name onto the new one. "
        "What the behaviour oracle checked (`scripts/oracle_matrix.py --dev-split`): a call in the "
        "project's own script cannot run on the toy model, so each rename is judged on stand-ins "
        "(`trainwright.testing.renames`), the oracle's own training passing the call's keyword and literal "
        "value before and after the rename. They found `warmup_ratio=0.1` -> `warmup_steps=0.1` failing "
        "on 4.46.3 (`warmup_steps` takes a ratio only from 5.0.0), so on a range reaching 4.x that rename "
        "is no longer offered (`tests/testing/test_renames.py`). The rule's own examples, scripts that "
        "build no model, are judged the same way (`scripts/oracle_matrix.py --examples-only`)."
    )
    message = "`{keyword}=` is not accepted by `{owner}` in {library} {version}{when}; {instead}"

    INVALID = (
        Example(
            """
            from transformers import Trainer, TrainingArguments

            args = TrainingArguments(output_dir="out", evaluation_strategy="steps")
            trainer = Trainer(model=None, args=args, tokenizer=None)
            """,
            line=3,
            fixed="""
            from transformers import Trainer, TrainingArguments

            args = TrainingArguments(output_dir="out", eval_strategy="steps")
            trainer = Trainer(model=None, args=args, processing_class=None)
            """,
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def __init__(self, *args, tok=None, **kwargs):
                    super().__init__(*args, tokenizer=tok, **kwargs)
            """,
            line=5,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer, TrainingArguments

            args = TrainingArguments(output_dir="out", evaluation_strategy="steps")
            trainer = Trainer(model=None, args=args, tokenizer=None)
            """,
            version="4.45.2",
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def __init__(self, *args, tokenizer=None, **kwargs):
                    super().__init__(*args, **kwargs)
                    self.tokenizer = tokenizer

            trainer = MyTrainer(model=None, tokenizer=None)
            """
        ),
    )

    def wants_module(self, unit: FileUnit) -> bool:
        """A linted file is scanned for every candidate call, ``super().__init__(...)`` of a ``class
        T(transformers.Trainer)`` included (``script_gate``, narrower, decides which scripts without a
        target class are read at all)."""
        return bool(unit.construction_offsets)

    def check_module(self, ctx: ModuleContext) -> Iterator[Finding]:
        for call, target, class_name, method in _constructions(ctx):
            present = {k.arg for k in call.keywords if k.arg is not None}
            for kw in call.keywords:
                if kw.arg is None or kw.arg in target.consumed:
                    continue
                if _accepted(ctx, target, kw.arg):
                    continue
                yield self._finding(ctx, call, kw, target, present, class_name, method)

    def _finding(
        self,
        ctx: ModuleContext,
        call: ast.Call,
        kw: ast.keyword,
        target: Target,
        present: set[str],
        class_name: str | None,
        method: str | None,
    ) -> Finding:
        assert kw.arg is not None  # check_module passes no ``**kwargs``
        catalog = _catalog(ctx, target)
        cls = _qualified(target)
        history = _history(catalog, target, kw.arg)
        own = catalog.renamed_argument(kw.arg, cls=target.cls)
        rename = own or _inherited_rename(ctx, target, kw.arg)
        # The old name may outlive its parameter through a deprecation shim (`tokenizer=` left the
        # signature in 4.46 and kept working until 5.0): the last release that takes it is what counts.
        until = own.old_until if own is not None and own.old_until else (history[1] if history else None)
        when = f" (accepted until {until})" if until else ""
        fix = None
        if rename is not None and rename.exact:
            instead = f"pass `{rename.new}=` instead"
            if rename.new not in present:
                fix = RenameKeyword(line=call.lineno, old=kw.arg, new=rename.new)
        elif rename is not None:
            instead = f"use `{rename.new}` (not the same value: see the release notes of {rename.new_since})"
        else:
            instead = _moved(ctx, target, kw.arg) or "remove it"
        version = ctx.view.version if target.library == "transformers" else ctx.library_view.version
        message = self.message.format(
            keyword=kw.arg, owner=cls, library=target.library, version=version, when=when, instead=instead
        )
        return self.report(ctx, kw, message, method=method, fix=fix, class_name=class_name)

    def fix_is_valid(self, ctx: ModuleContext, edit: Edit) -> bool:  # type: ignore[override]  # a module rule
        """The new name must be accepted by every call the edit touches at this release, and take the old
        name's value unchanged there (``warmup_steps=0.1`` is a ratio from 5.0 and fails on 4.x: the
        behaviour oracle's call-site stand-ins, ``trainwright.testing.renames``)."""
        if not isinstance(edit, RenameKeyword) or not isinstance(ctx, ModuleContext):
            return False
        for call, target, _cls, _method in _constructions(ctx):
            renamed_here = call.lineno == edit.line and any(k.arg == edit.old for k in call.keywords)
            if renamed_here and not (_accepted(ctx, target, edit.new) and _same_value(ctx, target, edit.old)):
                return False
        return True


def _constructions(ctx: ModuleContext) -> list[tuple[ast.Call, Target, str | None, str | None]]:
    """Every call of the file that constructs a catalogued library class (or a project subclass of
    one), with the enclosing class and method (memoised per file)."""

    def compute() -> list[tuple[ast.Call, Target, str | None, str | None]]:
        unit = ctx.unit
        scopes = _local_imports(ctx)
        lines = {
            unit.line_of(at)
            for at in unit.construction_offsets
            # a name a function imports is resolved later, with that function's imports
            if (scopes and _scope_at(scopes, unit.line_of(at))) or _may_construct(ctx, unit.source, at)
        }
        aliases = _aliased_classes(ctx)
        if aliases:
            lines |= set(
                unit.match_lines(re.compile(r"\b(?:" + "|".join(map(re.escape, aliases)) + r")\s*\("))
            )
        lines |= _locally_imported_calls(ctx, scopes)
        calls = nodes_on_lines(unit.tree, lines, lambda n: isinstance(n, ast.Call))
        owners = _owners(unit)
        out = []
        for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):  # type: ignore[attr-defined]
            assert isinstance(call, ast.Call)
            if not call.keywords:
                continue
            class_name, method, class_key = owners(call.lineno)
            target = _super_init_target(ctx, call, class_key) if super_method(call) == "__init__" else None
            if target is None and super_method(call) is None:
                dotted = dotted_name(call.func)
                target = _target_of(ctx, dotted, _scope_at(scopes, call.lineno)) if dotted else None
            if target is not None:
                out.append((call, target, class_name, method))
        return out

    return ctx.unit.facts.get(CONSTRUCTIONS, None, compute)


_IDENTIFIER_TAIL = re.compile(r"\w*")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _may_construct(ctx: ModuleContext, text: str, at: int) -> bool:
    """Whether the candidate call at ``at`` (``prefilter.construction_offsets``) may construct a
    class TW304 checks. A plain dotted callee (``GenerationConfig(``, ``trl.GRPOConfig(``) is
    resolved from the text, as the tree would give it: most "...Config(" calls of a trainer file
    build model or generation configs, and finding their nodes cost more than the rest of the rule.
    Anything else (``super().__init__(``, a callee after a call or a subscript) is kept."""
    if text.startswith(".", at):
        return True  # ``.__init__(``: resolved from the tree (``super()``, a base class)
    start = at
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "._"):
        start -= 1
    end = _IDENTIFIER_TAIL.match(text, at).end()  # type: ignore[union-attr]  # ``\w*`` always matches
    name = text[start:end]
    if _DOTTED.fullmatch(name) is None:
        return True
    before = start
    while before > 0 and text[before - 1] in " \t\\\r\n":
        before -= 1
    if before > 0 and text[before - 1] == ".":
        return True  # the name goes on before a space (``trl . GRPOConfig(`` is legal too)
    return _target_of(ctx, name) is not None


def _inherited_rename(ctx: ModuleContext, target: Target, keyword: str) -> Rename | None:
    """A TRL trainer or config inherits transformers' renames (``tokenizer`` -> ``processing_class``)
    when the TRL class takes the new name: TRL's own catalogue starts after those renames happened."""
    if target.library != "trl" or ctx.catalog is None:
        return None
    base = "TrainingArguments" if target.arguments_class else "Trainer"
    rename = ctx.catalog.renamed_argument(keyword, cls=base)
    return rename if rename is not None and _accepted(ctx, target, rename.new) else None


def _aliased_classes(ctx: ModuleContext) -> list[str]:
    """Module-level names bound to a class TW304 checks whose name the text scan misses: an alias
    (``Q = P``), a renamed import (``from a import PTrainer as P``) or a class of this file
    (``class P(Trainer)``). A same-name import of such a class (``from a import P``) is not followed:
    resolving every capitalised import of every file would read modules no other rule needs."""
    found = []
    for name, bindings in ctx.unit.summary.bindings.items():
        if any(word in name for word in CONSTRUCTED_WORDS):
            continue  # the text scan finds its calls already
        if any(_may_name_a_class(name, b) for b in bindings) and _target_of(ctx, name):
            found.append(name)
    return sorted(found)


def _may_name_a_class(name: str, binding: Binding) -> bool:
    if binding.kind in (ALIAS, CLASS):
        return True
    return binding.kind == IMPORT_FROM and binding.name != name


def _owners(unit: FileUnit) -> Callable[[int], tuple[str | None, str | None, str | None]]:
    """line -> (class name, method name, class key) of the innermost class and method around it."""
    spans: list[tuple[int, int, str, str | None, str]] = []
    for qualname, cls in unit.summary.classes.items():
        for m in cls.methods.values():
            spans.append((m.line, m.end_line, cls.name, m.name, f"{unit.path}::{qualname}"))
        spans.append((cls.line, cls.end_line, cls.name, None, f"{unit.path}::{qualname}"))

    def find(line: int) -> tuple[str | None, str | None, str | None]:
        best: tuple[int, str, str | None, str] | None = None
        for first, last, cls, method, key in spans:
            if first <= line <= last and (best is None or first >= best[0]):
                best = (first, cls, method, key)
        return (best[1], best[2], best[3]) if best else (None, None, None)

    return find


_IMPORT_WORD = LiteralScan("import", r"[ \t]")  # str.find: a multi-line regex is slow on long files


def _local_imports(ctx: ModuleContext) -> list[tuple[int, int, Scope]]:
    """The functions that import names at their own level (``from transformers import Trainer as T``
    inside a method, common where a module-level import would be a cycle or slow): each function's
    span and the names its imports bind, for resolving the calls in it. Found from the indented
    ``import`` lines of the text, so a file without any costs one scan."""

    def compute() -> list[tuple[int, int, Scope]]:
        unit = ctx.unit
        imports: dict[int, tuple[FunctionNode, list[ast.Import | ast.ImportFrom]]] = {}
        for line in unit.match_lines(_IMPORT_WORD):
            text = unit.lines[line - 1]
            if not text[:1].isspace() or not text.lstrip().startswith(
                ("import ", "from ", "import\t", "from\t")
            ):
                continue  # a module-level import, or the word elsewhere
            chain = list(statements_at(unit.tree.body, line))
            functions = [s for s in chain if isinstance(s, FUNCTION_TYPES)]
            found = [s for s in chain if isinstance(s, (ast.Import, ast.ImportFrom)) and s.lineno == line]
            if functions and found:
                fn = functions[-1]
                imports.setdefault(id(fn), (fn, []))[1].extend(found)
        return [
            (fn.lineno, fn.end_lineno or fn.lineno, import_bindings(stmts)) for fn, stmts in imports.values()
        ]

    return ctx.unit.facts.get(LOCAL_IMPORTS, None, compute)


def _scope_at(scopes: list[tuple[int, int, Scope]], line: int) -> Scope | None:
    """The names the functions around ``line`` import, the innermost function's first."""
    holding = [(first, scope) for first, last, scope in scopes if first <= line <= last]
    if not holding:
        return None
    merged: Scope = {}
    for _first, scope in sorted(holding, key=lambda fs: fs[0]):
        merged.update(scope)
    return merged


def _locally_imported_calls(ctx: ModuleContext, scopes: list[tuple[int, int, Scope]]) -> set[int]:
    """Lines calling a name a function imports that names a class TW304 checks, within that function
    (``T2(...)`` after ``from transformers import Trainer as T2``; plain ``Trainer(`` lines are the text
    scan's)."""
    lines: set[int] = set()
    for first, last, scope in scopes:
        names = [
            name
            for name, bindings in scope.items()
            if name[:1].isupper()  # a class; resolving every local function import reads modules
            and not any(word in name for word in CONSTRUCTED_WORDS)
            and any(b.kind == IMPORT_FROM for b in bindings)  # a same-name import too: they are few here
            and _target_of(ctx, name, scope) is not None
        ]
        if names:
            pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\s*\(")
            lines |= ctx.unit.lines_matching(first, last, pattern)
    return lines


def _target_of(ctx: ModuleContext, dotted: str, scope: Scope | None = None) -> Target | None:
    resolved = ctx.workspace.model.resolve(ctx.unit.path, dotted, scope)
    if resolved.kind == LIBRARY_CLASS:
        return _library_target(resolved.key)
    if resolved.kind == PROJECT_CLASS:
        return _through_project(ctx, resolved.key)
    if resolved.kind == "external":
        return _library_target(resolved.key)
    return None


def _library_target(key: str) -> Target | None:
    """``transformers.Trainer``/``...TrainingArguments``/``trl.DPOTrainer``/``trl.DPOConfig``."""
    short = key.rsplit(".", 1)[-1]
    root = key.split(".", 1)[0]
    if key in _TRANSFORMERS_CLASSES or (root == "transformers" and short in _TRANSFORMERS_CLASSES.values()):
        return Target("transformers", _TRANSFORMERS_CLASSES.get(key, short))
    if root == "trl" and (short.endswith(("Trainer", "Config"))):
        return Target("trl", short)
    return None


def _through_project(ctx: ModuleContext, key: str) -> Target | None:
    """A project class: the first library class of its MRO, when every project ``__init__`` before it
    passes unknown keywords on (``**kwargs``); the keywords they name are theirs."""
    consumed: set[str] = set()
    model = ctx.workspace.model
    for k in model.info(key).mro_keys:
        if split_key(k) is None:
            target = _library_target(k)
            return Target(target.library, target.cls, frozenset(consumed)) if target else None
        found = model.class_summary(k)
        if found is None:
            return None
        init = found[1].methods.get("__init__")
        if init is None:
            continue
        params = init.signature.call_params
        if not any(p.kind == "VAR_KEYWORD" for p in params):
            return None  # the project's own signature decides: not a library argument
        consumed |= {p.name for p in params if p.kind in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY")}
        consumed |= init.kwargs_keys  # `kwargs.pop("forget_loss")`: taken before the base sees them
    return None


def _super_init_target(ctx: ModuleContext, call: ast.Call, class_key: str | None) -> Target | None:
    """``super().__init__(...)`` in a project class: the next class of the MRO (a mixin's: of the
    classes it is combined with) when it is a library class."""
    if class_key is None:
        return None
    model = ctx.workspace.model
    # Only a mixin (whose own MRO reaches no library class) needs the classes it is combined with;
    # finding those reads every module of the project, which flake8 mode cannot afford per file.
    own_mro = model.info(class_key).mro_keys
    if any(split_key(k) is None for k in own_mro):
        concrete: tuple[str, ...] = (class_key,)
    else:
        concrete = model.mixin_users().get(class_key, ()) if model.role(class_key) == MIXIN else ()
    for key in concrete:
        mro = model.info(key).mro_keys
        if class_key not in mro:
            continue
        for k in mro[mro.index(class_key) + 1 :]:
            if split_key(k) is None:
                return _library_target(k)
            found = model.class_summary(k)
            if found is not None and "__init__" in found[1].methods:
                return None  # a project __init__ in between takes the call
    return None


def _catalog(ctx: ModuleContext, target: Target) -> Catalog:
    return ctx.catalog if target.library == "transformers" else ctx.library_catalog


def _qualified(target: Target) -> str:
    return f"{target.library}.{target.cls}" if target.library == "trl" else target.cls


def _accepted(ctx: ModuleContext, target: Target, keyword: str) -> bool:
    """``keyword`` binds at this release point: a parameter or field, or a deprecated name still taken."""
    view: VersionView = ctx.view if target.library == "transformers" else ctx.library_view
    if target.arguments_class:
        if target.library == "trl":  # a TRL config inherits TrainingArguments at the transformers release
            fields = view.argument_fields(target.cls, base_version=ctx.view.version)
        else:
            fields = view.argument_fields(target.cls)
        if not fields:
            return True  # a class the catalogue does not know at this release: nothing to say
        if keyword in fields and fields[keyword].init:
            return True
    else:
        if target.cls not in view.classes and target.library == "trl":
            return True
        info = view.method("__init__", cls=target.cls)
        if info is None:
            return True
        params = info.signature.call_params
        if any(p.kind == "VAR_KEYWORD" for p in params):
            return True
        if any(p.name == keyword and p.kind in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY") for p in params):
            return True
    rename = _catalog(ctx, target).renamed_argument(keyword, cls=target.cls, exact_only=False)
    if rename is not None and rename.old_until is not None:
        return version_key(view.version) <= version_key(rename.old_until)
    return False


def _same_value(ctx: ModuleContext, target: Target, old: str) -> bool:
    """At this release point the new name takes ``old``'s value unchanged (``Rename.exact_since``)."""
    rename = _catalog(ctx, target).renamed_argument(old, cls=target.cls)
    if rename is None or rename.exact_since is None:
        return True
    view: VersionView = ctx.view if target.library == "transformers" else ctx.library_view
    return version_key(view.version) >= version_key(rename.exact_since)


def _history(catalog: Catalog, target: Target, keyword: str) -> tuple[str, str | None] | None:
    try:
        return catalog.argument_history(keyword, cls=target.cls)
    except (KeyError, ValueError):
        return None


def _moved(ctx: ModuleContext, target: Target, keyword: str) -> str:
    """``it is a `DPOConfig` field now`` when a TRL trainer's knob moved to its config."""
    if target.library != "trl" or target.arguments_class:
        return ""
    config = target.cls.replace("Trainer", "Config")
    fields = ctx.library_view.argument_fields(config, base_version=ctx.view.version)
    if keyword in fields:
        return f"set it on the config instead: `{config}({keyword}=...)`"
    return ""
