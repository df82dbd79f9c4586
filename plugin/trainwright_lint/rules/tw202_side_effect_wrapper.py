"""TW202: an override that only wraps ``super()`` with side effects."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from trainwright_lint.finding import Finding
from trainwright_lint.rules._advice import WRAPPER_EVENTS, reference
from trainwright_lint.rules._ast import (
    NOOP,
    SAMPLES,
    STATE,
    body_nodes,
    condition_kind,
    is_self,
    param_names,
    side_effect_kinds,
    super_call_name,
    time_names,
    walk_body,
)
from trainwright_lint.rules.base import ClassContext, Example, Rule

# Calls on the super() result that only read it.
_READ_ONLY = frozenset(
    {
        "item",
        "detach",
        "cpu",
        "float",
        "tolist",
        "numpy",
        "get",
        "keys",
        "items",
        "values",
        "mean",
        "sum",
        "clone",
    }
)


def _passthrough_args(call: ast.Call, params: set[str]) -> bool:
    """Arguments are the override's own parameters, unchanged (so the computation is the base's)."""
    for arg in call.args:
        value = arg.value if isinstance(arg, ast.Starred) else arg
        if not (isinstance(value, ast.Name) and value.id in params):
            return False
    for kw in call.keywords:
        if not (isinstance(kw.value, ast.Name) and kw.value.id in params):
            return False
    return True


def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[1:]
    return body


def _result_changed(result: str, stmts: list[ast.stmt]) -> bool:
    for node in walk_body(stmts):
        if isinstance(node, ast.Name) and node.id == result and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name) and base.id == result:
                return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == result
            and node.func.attr not in _READ_ONLY
        ):
            return True
    return False


class SideEffectWrapper(Rule):
    """An override whose only job is to wrap the `super()` call with timing, profiling, logging,
    printing, `gc`/cache clearing or file output, passing its own arguments through unchanged and
    returning the super result unchanged.

    Such an override changes nothing the Trainer computes; it only observes. Callback events bracket
    the same work (`on_step_begin`/`on_step_end` around a training step, `on_save` after a checkpoint,
    `on_log`, `on_evaluate`, ...) and survive upgrades because they are public API, while the override
    couples you to the method's signature. Overrides that change arguments, results or state the loss
    depends on are not reported.
    """

    FIX = "Delete the override and put the side effects in the callback event(s) the message names."
    EVIDENCE = ("https://huggingface.co/docs/transformers/main_classes/callback",)

    code = "TW202"
    name = "side-effect-wrapper"
    message = "`{method}` only wraps `super().{method}()` with {effects}; use the callback event(s) {events} instead{ref}"

    INVALID = (
        Example(
            """
            import time
            from transformers import Trainer

            class TimedTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    start = time.perf_counter()
                    loss = super().training_step(model, inputs, num_items_in_batch)
                    self.step_times.append(time.perf_counter() - start)
                    return loss
            """,
            line=5,
        ),
        Example(
            """
            import logging
            from transformers import Trainer

            logger = logging.getLogger(__name__)

            class MyTrainer(Trainer):
                def _save_checkpoint(self, model, trial):
                    logger.info("saving checkpoint at step %d", self.state.global_step)
                    super()._save_checkpoint(model, trial)
            """,
            line=7,
        ),
        Example(
            """
            import torch
            from transformers import Trainer

            class ProfiledTrainer(Trainer):
                def evaluate(self, *args, **kwargs):
                    with torch.profiler.record_function("evaluate"):
                        return super().evaluate(*args, **kwargs)
            """,
            line=5,
        ),
    )
    VALID = (
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def log(self, logs, start_time=None):
                    logs["extra"] = self.extra_metric  # changes what is logged
                    super().log(logs, start_time)
            """
        ),
        Example(
            """
            from transformers import Trainer

            class MyTrainer(Trainer):
                def training_step(self, model, inputs, num_items_in_batch=None):
                    inputs = self.augment(inputs)  # changes what is computed
                    return super().training_step(model, inputs, num_items_in_batch)
            """
        ),
    )

    def check(self, ctx: ClassContext) -> Iterator[Finding]:
        for fn in ctx.methods():
            if fn.name.startswith("__") or not ctx.ever_trainer_method(fn.name):
                continue  # dunders (__init__) are not loop hooks
            kinds = self._wrapper_effects(fn)
            if not kinds:
                continue
            if SAMPLES in kinds:
                events, callback = "on_evaluate", "SampleGenerationCallback"
            elif fn.name in WRAPPER_EVENTS:
                events, callback = WRAPPER_EVENTS[fn.name]
            else:
                guidance = ctx.catalog.guidance(fn.name) if ctx.catalog is not None else None
                events = (
                    " / ".join(guidance.events[:3])
                    if guidance is not None and guidance.events
                    else "on_step_begin -> on_step_end"
                )
                callback = guidance.callbacks[0] if guidance is not None and guidance.callbacks else None
            message = self.message.format(
                method=fn.name,
                effects=", ".join(sorted(kinds)),
                events=f"`{events}`",
                ref=reference(callback),
            )
            yield self.report(ctx, fn, message, method=fn.name)

    def _wrapper_effects(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
        body = _strip_docstring(fn.body)
        params = param_names(fn) - {"self"}
        supers = [n for n in body_nodes(fn) if super_call_name(n) == fn.name]
        if len(supers) != 1:
            return None
        call = supers[0]
        assert isinstance(call, ast.Call)
        if not _passthrough_args(call, params):
            return None
        # Unwrap ``with``/``try-finally`` blocks whose body contains the call.
        pre: list[ast.stmt] = []
        post: list[ast.stmt] = []
        stmts = body
        while True:
            index = next(i for i, s in enumerate(stmts) if any(n is call for n in ast.walk(s)))
            pre += stmts[:index]
            post = stmts[index + 1 :] + post
            holder = stmts[index]
            if isinstance(holder, (ast.With, ast.AsyncWith)):
                stmts = holder.body
                continue
            if isinstance(holder, ast.Try) and not holder.handlers:
                post = holder.finalbody + post
                stmts = holder.body + holder.orelse
                continue
            break
        result: str | None = None
        if isinstance(holder, ast.Return) and holder.value is call:
            pass
        elif isinstance(holder, ast.Expr) and holder.value is call:
            if any(isinstance(n, ast.Return) and n.value is not None for n in walk_body(post)):
                return None
        elif (
            isinstance(holder, ast.Assign)
            and holder.value is call
            and len(holder.targets) == 1
            and isinstance(holder.targets[0], ast.Name)
        ):
            result = holder.targets[0].id
            if not post or not (
                isinstance(post[-1], ast.Return)
                and isinstance(post[-1].value, ast.Name)
                and post[-1].value.id == result
            ):
                return None
            post = post[:-1]
            if _result_changed(result, post):
                return None
        else:
            return None
        effects = pre + post
        if any(isinstance(n, (ast.Return, ast.Raise)) for n in walk_body(effects)):
            return None
        if any(
            isinstance(n, ast.Name) and n.id in params and isinstance(n.ctx, ast.Store)
            for n in walk_body(effects)
        ):
            return None
        super_reads = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
        kinds = side_effect_kinds(effects, super_reads)
        if kinds is not None and STATE in kinds:
            return None  # attributes set around super() may feed what it computes
        if any(isinstance(n, ast.If) and condition_kind(n.test, time_names(fn)) for n in walk_body(effects)):
            return None  # a step/epoch/time-gated block: reported by TW201
        # Context managers wrapping the call count as timing/profiling.
        wrapped = self._context_effects(body, call)
        if kinds is None or wrapped is None:
            return None
        kinds = (kinds | wrapped) - {NOOP}
        return kinds or None

    @staticmethod
    def _context_effects(body: list[ast.stmt], call: ast.Call) -> set[str] | None:
        kinds: set[str] = set()
        for node in walk_body(body):
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(n is call for n in ast.walk(node)):
                for item in node.items:
                    expr = item.context_expr
                    text = ast.unparse(expr).lower()
                    if any(
                        w in text for w in ("profil", "record_function", "timer", "timing", "nvtx", "trace")
                    ):
                        kinds.add("profiling")
                    elif is_self(expr):
                        return None
                    else:
                        return None  # autocast, no_grad, accumulate...: changes how it is computed
        return kinds
