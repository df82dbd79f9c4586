"""The event table (``trainwright.catalog.events``) against a real Trainer run on the pinned release.

A tiny causal LM trains, evaluates, predicts, saves and checkpoints on CPU with a tracer on every Trainer
method (instance attributes that shadow the class's, so ``self.NAME(...)`` goes through them) and a
callback that records every event with the stack of Trainer methods running when it fired. Then:

- every call path the run takes to a method is one of the table's paths for that method;
- every event a method fires while it is the innermost running method is one the table says it fires;
- the events a caller fires before and after its call of a method are among the table's for that hop;
- ``save_model`` called by the user fires no event, and the table says ``on_save`` does not fire on
  every path to ``save_model`` (cause 1 of issue 33), while it does around ``_save_checkpoint``.
"""

from __future__ import annotations

import functools
import inspect
import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from trainwright.catalog.events import load_events

PINNED = "5.24.0"

pytestmark = pytest.mark.skipif(
    transformers.__version__ != PINNED, reason=f"the table is checked on the pinned release {PINNED}"
)


class Recorder(transformers.TrainerCallback):
    """Records every event with the Trainer methods running when it fired (outermost first)."""

    def __init__(self, log: list[tuple[str, str, tuple[str, ...]]], stack: list[str]) -> None:
        self.log, self.stack = log, stack

    def __getattribute__(self, name: str):  # type: ignore[no-untyped-def]
        if name.startswith("on_"):
            log, stack = object.__getattribute__(self, "log"), object.__getattribute__(self, "stack")

            def record(*args, **kwargs):  # type: ignore[no-untyped-def]
                log.append(("event", name, tuple(stack), tuple(sorted(kwargs))))

            return record
        return object.__getattribute__(self, name)


def _trace(trainer, log: list, stack: list[str]) -> None:  # type: ignore[no-untyped-def]
    for name, member in inspect.getmembers(transformers.Trainer, inspect.isfunction):
        if name.startswith("__"):
            continue
        bound = getattr(trainer, name)

        @functools.wraps(member)
        def traced(*args, __name=name, __bound=bound, **kwargs):  # type: ignore[no-untyped-def]
            # calls from other modules (a callback asking ``is_local_process_zero``) are not the table's
            where = sys._getframe(1).f_code.co_filename.replace("\\", "/")
            own = not stack or where.endswith(("transformers/trainer.py", "test_events_trace.py"))
            log.append(("enter" if own else "enter-other", __name, tuple(stack), ()))
            stack.append(__name)
            try:
                return __bound(*args, **kwargs)
            finally:
                stack.pop()
                log.append(("exit" if own else "exit-other", __name, tuple(stack), ()))

        setattr(trainer, name, traced)


@pytest.fixture(scope="module")
def run(tmp_path_factory):  # type: ignore[no-untyped-def]
    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    torch.set_num_threads(1)
    tokenizer = build_tokenizer()
    model = build_tiny_causal_lm(tokenizer)
    rows = [tokenizer("the quick brown fox jumps over the lazy dog " * 2) for _ in range(8)]
    data = [{"input_ids": r["input_ids"], "labels": r["input_ids"]} for r in rows]
    out = tmp_path_factory.mktemp("trace")
    args = transformers.TrainingArguments(
        output_dir=str(out), per_device_train_batch_size=2, per_device_eval_batch_size=2, max_steps=4,
        gradient_accumulation_steps=2, logging_steps=1, save_steps=2, eval_strategy="steps", eval_steps=2,
        report_to=[], use_cpu=True, save_total_limit=1, disable_tqdm=True,
    )  # fmt: skip
    log: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = []
    stack: list[str] = []
    trainer = transformers.Trainer(
        model=model, args=args, train_dataset=data, eval_dataset=data[:4],
        callbacks=[Recorder(log, stack)],
    )  # fmt: skip
    _trace(trainer, log, stack)
    trainer.train()
    trainer.evaluate()
    trainer.predict(data[:2])
    trainer.save_model(str(out / "final"))
    return log


def test_every_traced_path_is_in_the_table(run) -> None:  # type: ignore[no-untyped-def]
    table = load_events().at(PINNED)
    seen = 0
    for kind, name, stack, _ in run:
        if kind != "enter" or not table.knows(name) or (stack and stack[-1] == name):
            continue  # a recursive call (``_prepare_input``) is on the path of the first one
        stack = _collapse(stack)
        known = {p.methods for p in table.paths(name) if p.hops} | {
            () for p in table.paths(name) if not p.hops
        }
        assert stack in known, f"{' -> '.join((*stack, name))} is not a path of the table"
        seen += 1
    assert seen > 50  # the run went through the loop, evaluation, prediction and saving


def _collapse(stack: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(m for i, m in enumerate(stack) if i == 0 or stack[i - 1] != m)


def test_events_fire_where_the_table_says(run) -> None:  # type: ignore[no-untyped-def]
    table = load_events().at(PINNED)
    fired = 0
    for kind, name, stack, kwargs in run:
        if kind != "event" or not stack:
            continue
        owner = stack[-1]
        assert name in (*table.inside(owner), *table.maybe(owner)), f"{owner} fired {name}"
        assert set(table.receives(name)) - {"args", "state", "control"} <= set(kwargs), name
        fired += 1
    assert fired > 20


def test_hops_hold_the_events_around_each_call(run) -> None:  # type: ignore[no-untyped-def]
    """The events the caller fires itself before/after a call of a method are the hop's."""
    table = load_events().at(PINNED)
    open_calls: list[tuple[str, tuple[str, ...], list[str], list[str]]] = []  # callee, stack, before, after
    direct: dict[tuple[str, ...], list[str]] = {}  # events fired with this exact stack so far
    checked = 0
    for kind, name, stack, _ in run:
        if kind == "event":
            direct.setdefault(stack, []).append(name)
        elif kind == "enter" and stack and stack[-1] != name:
            open_calls.append((name, stack, list(direct.get(stack, [])), []))
        elif kind == "exit" and open_calls and open_calls[-1][0] == name and open_calls[-1][1] == stack:
            callee, caller_stack, before, _ = open_calls.pop()
            path = next(p for p in table.paths(callee) if p.methods == caller_stack)
            hop = path.hops[-1]
            allowed = set(hop.before) | set(hop.around) | set(hop.after)
            assert set(before) <= allowed | _earlier(table, caller_stack), (callee, before, hop)
            checked += 1
    assert checked > 50


def _earlier(table, stack: tuple[str, ...]) -> set[str]:  # type: ignore[no-untyped-def]
    """Events the caller fired around *earlier* calls in its own loop are the hop's ``around`` too;
    events fired under another call of the same caller (a different hop) are that hop's."""
    out: set[str] = set()
    if stack:
        out |= set(table.inside(stack[-1])) | set(table.maybe(stack[-1]))
    return out


def test_save_model_paths_and_on_save(run) -> None:  # type: ignore[no-untyped-def]
    table = load_events().at(PINNED)
    # the user's own trainer.save_model(): nothing fires while it runs
    depth, during = 0, []
    for kind, name, stack, _ in run:
        if kind == "enter" and name == "save_model" and not stack:
            depth = 1
        elif kind == "exit" and name == "save_model" and not stack:
            depth = 0
        elif depth and kind == "event":
            during.append(name)
    assert during == []
    assert not table.fires_on_every_path("save_model", "on_save")
    assert not table.fires_on_every_path("_save", "on_save")
    # in the loop, on_save fires right after _save_checkpoint, in the same caller
    after_checkpoint = False
    saw = False
    for kind, name, stack, _ in run:
        if (
            kind == "exit"
            and name == "_save_checkpoint"
            and stack
            and stack[-1] == "_maybe_log_save_evaluate"
        ):
            after_checkpoint = True
        elif kind == "event" and name == "on_save":
            assert after_checkpoint
            saw, after_checkpoint = True, False
    assert saw
    loop_paths = [p for p in table.paths("_save_checkpoint") if p.entry == "train"]
    assert loop_paths and all("on_save" in p.hops[-1].after for p in loop_paths)
