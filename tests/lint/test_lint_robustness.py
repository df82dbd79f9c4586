"""The engine never raises on valid Python: random programs (hypothesmith) placed inside the methods
of a Trainer subclass and of a callback, where every rule looks."""

from __future__ import annotations

import ast
import textwrap

import hypothesmith
from hypothesis import HealthCheck, assume, given, settings
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import lint_source

WRAPPER = """\
import time
from transformers import Trainer, TrainerCallback

class T(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        if self.state.global_step % 10 == 0:
{body}
        return super().training_step(model, inputs, num_items_in_batch)

    def _save_checkpoint(self, model, trial):
{body}

class C(TrainerCallback):
    def on_log(self, args, state, control, logs=None, **kwargs):
{body}
"""


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar(start="file_input"))
def test_engine_never_raises(program: str) -> None:
    body = textwrap.indent(program if program.strip() else "pass", " " * 12)
    source = WRAPPER.format(body=body)
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        assume(False)
    for finding in lint_source(source, "fuzz.py", LintConfig(transformers_version="5.24.0")):
        assert finding.line >= 1 and finding.column >= 1 and finding.code.startswith("TW")
