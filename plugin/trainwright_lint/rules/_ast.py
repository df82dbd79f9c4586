"""AST helpers shared by the rules: dotted names, super() calls, override signatures, and the
side-effect classifier behind TW201/TW202.

The classifier is deliberately conservative (precision first): a statement counts as a *side effect*
only if it is recognisably logging, printing, file output, sample generation, memory/cache clearing,
profiling/timing, or recording into a ``self`` attribute; anything else (a call we cannot name, a
``return``, a write to a parameter or to a local that is read later) means the code may change what
the method computes, and the rules stay silent.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from trainwright.catalog import Param, Signature
from trainwright_lint.resolve import dotted_name

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

TIME_CALLS = frozenset(
    {
        "time.time",
        "time.perf_counter",
        "time.monotonic",
        "time.process_time",
        "time.time_ns",
        "time.perf_counter_ns",
        "time.monotonic_ns",
        "perf_counter",
        "monotonic",
        "datetime.now",
        "datetime.datetime.now",
        "datetime.utcnow",
        "datetime.datetime.utcnow",
    }
)

LOG = "logging"
PRINT = "printing"
FILE = "file output"
SAMPLES = "sample generation"
MEMORY = "gc/cache clearing"
TIMING = "timing"
STATE = "setting attributes"
RECORD = "recording metrics"
NOOP = "noop"

_LOG_METHODS = frozenset(
    {
        "info",
        "debug",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "log",
        "log_metrics",
        "save_metrics",
        "add_scalar",
        "add_scalars",
        "add_text",
        "add_histogram",
        "add_image",
        "add_figure",
        "log_dict",
        "log_artifact",
        "log_table",
        "set_postfix",
        "set_description",
        "log_once",
        "warning_once",
        "info_once",
    }
)
_LOG_ROOTS = frozenset(
    {"logger", "logging", "log", "wandb", "mlflow", "tb_writer", "writer", "_logger", "LOGGER", "tqdm"}
)
_FILE_METHODS = frozenset(
    {
        "write",
        "writelines",
        "dump",
        "savefig",
        "to_csv",
        "to_json",
        "to_parquet",
        "makedirs",
        "mkdir",
        "touch",
        "flush",
        "copyfile",
        "copytree",
        "write_text",
        "write_bytes",
        "save_pretrained",
        "save_model",
        "save",
    }
)
_MEMORY = frozenset(
    {
        "collect",
        "empty_cache",
        "ipc_collect",
        "reset_peak_memory_stats",
        "synchronize",
        "clear_cache",
        "malloc_trim",
    }
)
_TIMING_METHODS = frozenset({"start", "stop", "tic", "toc", "record", "elapsed_time", "step_profiler"})
# Words in a helper's name (split on "_") that say what it does: ``self.log_completions()``,
# ``print_samples()``, ``self._save_extras()``. Whole words only: ``_sync_logprobs`` is not logging.
_NAME_HINTS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"generate", "generation", "sample", "samples", "completion", "completions"}), SAMPLES),
    (
        frozenset(
            {"log", "logs", "print", "report", "plot", "visualize", "visualise", "table", "track", "wandb"}
        ),
        LOG,
    ),
    (frozenset({"save", "write", "dump", "export"}), FILE),
    (frozenset({"profile", "profiler", "timer", "timing"}), TIMING),
    (frozenset({"gc", "cache", "memory"}), MEMORY),
)


def _hint_kind(name: str) -> str | None:
    words = set(name.lower().strip("_").split("_"))
    for hints, kind in _NAME_HINTS:
        if words & hints:
            return kind
    return None


_RECORD_ATTR = re.compile(
    r"metric|log|stat|time|timing|hist|record|sample|completion|table|count|mem|durat|loss|step",
    re.IGNORECASE,
)
_RECORD_METHODS = frozenset({"append", "extend", "appendleft", "add"})


def is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def is_self_attr(node: ast.AST) -> bool:
    """``self.x``, ``self.x.y`` or ``self.x[...]``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return is_self(node)


def walk_body(nodes: list[ast.stmt] | ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without entering nested functions, lambdas or classes."""
    _nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    start = list(nodes) if isinstance(nodes, list) else [nodes]
    stack: list[ast.AST] = [n for n in start if not isinstance(n, _nested)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, _nested))


_BODY_CACHE: dict[int, tuple[ast.AST, list[ast.AST]]] = {}


def body_nodes(fn: FunctionNode) -> list[ast.AST]:
    """``walk_body(fn.body)`` as a list, memoised: every rule walks every method, and walking is the
    linter's main cost in flake8 mode. The engine clears the memo after each file."""
    hit = _BODY_CACHE.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    nodes = list(walk_body(fn.body))
    _BODY_CACHE[id(fn)] = (fn, nodes)
    return nodes


def clear_body_cache() -> None:
    _BODY_CACHE.clear()


def super_call_name(call: ast.AST) -> str | None:
    """``m`` for ``super().m(...)`` / ``super(C, self).m(...)``."""
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "super"
    ):
        return call.func.attr
    return None


def call_shape(call: ast.Call) -> tuple[int, tuple[str, ...], bool, bool]:
    n_pos = sum(1 for a in call.args if not isinstance(a, ast.Starred))
    star_args = any(isinstance(a, ast.Starred) for a in call.args)
    keywords = tuple(k.arg for k in call.keywords if k.arg is not None)
    star_kwargs = any(k.arg is None for k in call.keywords)
    return n_pos, keywords, star_args, star_kwargs


def decorator_names(fn: FunctionNode) -> set[str]:
    names = set()
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = dotted_name(target)
        if name:
            names.add(name.rsplit(".", 1)[-1])
    return names


def signature_of(fn: FunctionNode) -> Signature:
    """The override's signature in the catalogue's terms (defaults as source text)."""
    a = fn.args
    params: list[Param] = []
    positional = list(a.posonlyargs) + list(a.args)
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = "POSITIONAL_ONLY" if i < len(a.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        params.append(Param(arg.arg, kind, ast.unparse(default) if default is not None else None))
    if a.vararg:
        params.append(Param(a.vararg.arg, "VAR_POSITIONAL"))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        params.append(Param(arg.arg, "KEYWORD_ONLY", ast.unparse(default) if default is not None else None))
    if a.kwarg:
        params.append(Param(a.kwarg.arg, "VAR_KEYWORD"))
    return Signature(tuple(params), bound="staticmethod" not in decorator_names(fn))


def param_names(fn: FunctionNode) -> set[str]:
    a = fn.args
    names = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    if a.vararg:
        names.add(a.vararg.arg)
    if a.kwarg:
        names.add(a.kwarg.arg)
    return names


# ------------------------------------------------------------------------------------------------
# Conditions


def time_names(fn: FunctionNode) -> set[str]:
    """Local names and ``self.x`` attributes assigned from a wall-clock call inside ``fn``."""
    names: set[str] = set()
    for node in body_nodes(fn):
        if isinstance(node, ast.Assign) and _contains_time_call(node.value):
            for t in node.targets:
                name = dotted_name(t)
                if name:
                    names.add(name)
    return names


def _contains_time_call(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            name = dotted_name(sub.func)
            if name and (name in TIME_CALLS or name.endswith((".perf_counter", ".monotonic"))):
                return True
    return False


def condition_kind(test: ast.AST, clock_names: set[str]) -> str | None:
    """ "step", "epoch" or "wall-clock" when ``test`` depends on training progress or time."""
    for sub in ast.walk(test):
        if isinstance(sub, ast.Attribute) and sub.attr in ("global_step", "epoch"):
            owner = dotted_name(sub.value) or ""
            if owner == "state" or owner.endswith(".state"):
                return "step" if sub.attr == "global_step" else "epoch"
        if isinstance(sub, ast.Call) and _contains_time_call(sub):
            return "wall-clock"
        if isinstance(sub, (ast.Name, ast.Attribute)):
            name = dotted_name(sub)
            if name and name in clock_names:
                return "wall-clock"
    return None


# ------------------------------------------------------------------------------------------------
# Side effects


def call_effect(call: ast.Call) -> str | None:
    """The side-effect kind of a call used as a statement, or None if we cannot tell."""
    func = call.func
    name = dotted_name(func)
    if name is None:
        return None
    parts = name.split(".")
    last = parts[-1]
    if name in ("print", "pprint", "pprint.pprint") or last == "print":
        return PRINT
    if name in TIME_CALLS:
        return TIMING
    if name in ("gc.collect",) or last in _MEMORY:
        return MEMORY
    if "generate" in last or last.startswith("sample"):
        return SAMPLES
    if len(parts) == 1 or (parts[0] == "self" and len(parts) == 2):
        # a helper: print_samples(...), self.log_completions(), self._save_extras()
        return _hint_kind(last)
    if parts[0] == "self" and len(parts) >= 3 and last in _RECORD_METHODS and _RECORD_ATTR.search(parts[-2]):
        return RECORD
    if parts[0] in _LOG_ROOTS or (last in _LOG_METHODS and len(parts) >= 2):
        return LOG
    if name in ("open", "torch.save", "np.save", "numpy.save", "json.dump", "pickle.dump", "os.makedirs") or (
        parts[0] in ("shutil", "json", "yaml", "pickle", "os") and len(parts) == 2
    ):
        return FILE
    if last in _FILE_METHODS and len(parts) >= 2 and parts[0] != "self":
        return FILE
    if ("profil" in name or "timer" in name.lower()) and last in _TIMING_METHODS | {
        "step",
        "enable",
        "disable",
        "__enter__",
        "__exit__",
    }:
        return TIMING
    if (
        last in _TIMING_METHODS
        and len(parts) >= 2
        and ("time" in parts[-2].lower() or "prof" in parts[-2].lower())
    ):
        return TIMING
    return None


def names_loaded(nodes: list[ast.stmt] | ast.AST) -> set[str]:
    return {n.id for n in walk_body(nodes) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stored_names(stmts: list[ast.stmt]) -> set[str]:
    return {n.id for n in walk_body(stmts) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def side_effect_kinds(stmts: list[ast.stmt], outside_reads: set[str]) -> set[str] | None:
    """Kinds of side effect in ``stmts``, or None if they may change what the method computes.

    ``outside_reads``: names read elsewhere in the method; a local assigned here and read there
    flows into the computation.
    """
    local = _stored_names(stmts)
    if local & outside_reads:
        return None
    return _block(stmts, local)


def _block(stmts: list[ast.stmt], local: set[str]) -> set[str] | None:
    kinds: set[str] = set()
    for stmt in stmts:
        k = _stmt_effect(stmt, local)
        if k is None:
            return None
        kinds |= k
    return kinds


def _is_control(target: ast.AST) -> bool:
    name = dotted_name(target) if isinstance(target, ast.Attribute) else None
    return bool(name) and (name.startswith("self.control.") or name == "self.control")


def _target_ok(target: ast.AST, local: set[str]) -> str | None:
    if _is_control(target):
        return None  # deciding the loop's control flow is TW203's business, not a side effect
    if isinstance(target, ast.Name):
        return NOOP if target.id in local else None
    if isinstance(target, (ast.Tuple, ast.List)):
        kinds = {_target_ok(t, local) for t in target.elts}
        return None if None in kinds else (STATE if STATE in kinds else NOOP)
    if isinstance(target, ast.Attribute) and is_self(target.value):
        return STATE
    if isinstance(target, (ast.Attribute, ast.Subscript)):
        base = target.value
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            base = base.value
        if is_self(base):
            return RECORD
        if isinstance(base, ast.Name) and base.id in local:
            return NOOP
    if isinstance(target, ast.Starred):
        return _target_ok(target.value, local)
    return None


def _stmt_effect(stmt: ast.stmt, local: set[str]) -> set[str] | None:
    if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
        return {NOOP}
    if isinstance(stmt, ast.Expr):
        value = stmt.value
        if isinstance(value, ast.Call):
            kind = call_effect(value)
            if kind is None and isinstance(value.func, ast.Attribute):
                base = value.func.value
                while isinstance(base, (ast.Attribute, ast.Subscript, ast.Call)):
                    base = base.func if isinstance(base, ast.Call) else base.value
                if isinstance(base, ast.Name) and base.id in local:
                    kind = NOOP  # a method of a value built in this block (fig.savefig, table.add_data)
            return {kind} if kind else None
        return None
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        kinds = set()
        for t in targets:
            k = _target_ok(t, local)
            if k is None:
                return None
            kinds.add(k)
        if stmt.value is not None and _contains_time_call(stmt.value):
            kinds.discard(STATE)  # self._t0 = time.perf_counter(): a timer, not state for later
            kinds.add(TIMING)
        if isinstance(stmt.value, ast.Call):
            effect = call_effect(stmt.value)
            if effect is not None:
                kinds.add(effect)
        return kinds
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return _block(stmt.body, local)
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.If)):
        return _block(stmt.body + stmt.orelse, local)
    if isinstance(stmt, ast.Try):
        return _block(
            stmt.body + stmt.orelse + stmt.finalbody + [s for h in stmt.handlers for s in h.body], local
        )
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {NOOP}
    return None
