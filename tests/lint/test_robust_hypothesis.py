"""Property-based robustness: generated programs (hypothesmith) and generated Trainer subclasses and
callbacks go through lint and fix. Lint never raises anything but ``SyntaxError`` for source that does
not parse; fix never writes a file that does not parse, a second fix changes nothing, and nothing a
safe fix can handle is left behind."""

from __future__ import annotations

import ast
import textwrap

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lint_helpers import config, fix_text
from trainwright_lint.engine import lint_source
from trainwright_lint.fixes import FixError, wanted

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # generated code such as `"a"()`

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI failures reproduce
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def check_fix(source: str, unsafe: bool = True) -> None:
    try:
        first = fix_text(source, unsafe=unsafe)
    except FixError:
        try:
            ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return  # unparsable input: reported, left untouched
        raise
    fixed = first.fixed.decode("utf-8")
    ast.parse(fixed)  # a fixed file always parses
    second = fix_text(first.fixed, unsafe=unsafe)
    assert second.fixed == first.fixed, "fixing twice changed the file the second time"
    assert not wanted(second.remaining, unsafe), [f.message for f in wanted(second.remaining, unsafe)]


def wrap_in_trainer(program: str) -> str:
    return (
        "from transformers import Trainer\n\n\nclass Generated(Trainer):\n"
        + textwrap.indent(program or "pass\n", "    ")
        + "\n    pass\n"
    )


@SETTINGS
@given(hypothesmith.from_grammar())
def test_generated_programs_never_crash_lint_or_fix(program: str) -> None:
    for source in (program, wrap_in_trainer(program)):
        try:
            lint_source(source, "generated.py", config(), gate=False)
        except (SyntaxError, ValueError, RecursionError):
            pass  # the front ends report these as TW000
        check_fix(source)


# ------------------------------------------------------------------------- generated Trainer subclasses

METHODS = {
    "compute_loss": ["model", "inputs", "return_outputs=False", "num_items_in_batch=None"],
    "training_step": ["model", "inputs", "num_items_in_batch=None"],
    "log": ["logs", "start_time=None"],
    "prediction_step": ["model", "inputs", "prediction_loss_only", "ignore_keys=None"],
    "_save_checkpoint": ["model", "trial"],
    "_get_train_sampler": ["train_dataset=None"],
    "save_model": ["output_dir=None", "_internal_call=False"],
    "evaluate": ["eval_dataset=None", "ignore_keys=None", 'metric_key_prefix="eval"'],
    "create_optimizer": ["model=None"],
}
EVENTS = ["on_log", "on_step_end", "on_train_begin", "on_evaluate", "on_step_ned", "on_epoch_edn", "on_save"]
STALE_KEYWORDS = ["metrics=None", "tokenizer=None", "trial=None", "foo=1"]


@st.composite
def trainer_method(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(sorted(METHODS)))
    base = METHODS[name]
    keep = draw(st.integers(0, len(base)))
    params = ["self", *base[:keep]]
    if draw(st.booleans()) and draw(st.booleans()):
        params.append("*args")
    multiline = draw(st.booleans())
    if multiline:
        header = f"def {name}(\n" + "".join(f"    {p},\n" for p in params) + "):"
    else:
        header = f"def {name}({', '.join(params)}):"
    names = [p.split("=")[0] for p in params[1:] if not p.startswith("*")]
    args = names[: draw(st.integers(0, len(names)))]
    if draw(st.booleans()):
        args = ["self", *args]
    if draw(st.booleans()):
        args.append(draw(st.sampled_from(STALE_KEYWORDS)))
    body = []
    if draw(st.booleans()):
        body.append("pad = self.tokenizer.pad_token_id")
    if draw(st.booleans()):
        body.append("if self.state.global_step % 10 == 0:\n    print('step', self.state.global_step)")
    body.append(f"return super().{name}({', '.join(args)})  # keep")
    return header + "\n" + textwrap.indent("\n".join(body), "    ") + "\n"


@st.composite
def callback_method(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(EVENTS))
    params = ["self", "args", "state", "control"]
    if draw(st.booleans()):
        params.append("logs=None")
    if draw(st.booleans()):
        params.append("**kwargs")
    return f"def {name}({', '.join(params)}):\n    print(state.global_step)\n"


@st.composite
def trainer_module(draw: st.DrawFn) -> str:
    methods = draw(st.lists(trainer_method(), min_size=1, max_size=4, unique_by=lambda m: m.split("(")[0]))
    callbacks = draw(st.lists(callback_method(), min_size=0, max_size=3, unique_by=lambda m: m.split("(")[0]))
    text = "from transformers import Trainer, TrainerCallback\n\n\nclass MyTrainer(Trainer):\n"
    text += "\n".join(textwrap.indent(m, "    ") for m in methods)
    if callbacks:
        text += "\n\nclass MyCallback(TrainerCallback):\n" + "\n".join(
            textwrap.indent(c, "    ") for c in callbacks
        )
    return text


@SETTINGS
@given(trainer_module(), st.booleans())
def test_generated_trainer_subclasses_fix_to_a_fixpoint(source: str, unsafe: bool) -> None:
    ast.parse(source)
    findings = lint_source(source, "generated.py", config())
    assert all(f.line >= 1 for f in findings)
    check_fix(source, unsafe=unsafe)
