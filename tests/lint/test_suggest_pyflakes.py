"""Every ``fix --suggest`` output is code pyflakes accepts: no undefined name, no unused local.

The suggestions are checked over the gallery, the annotated rule fixtures, every rule's INVALID
examples and generated Trainer overrides (hypothesis) that read parameters, module constants and
locals the moved code cannot see. Whatever the callback cannot have is bound on a ``# TODO:`` line.
"""

from __future__ import annotations

import inspect
import io
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lint_helpers import FIXTURES, lint_snippet
from pyflakes.api import check
from pyflakes.reporter import Reporter
from trainwright_lint.rules import RULES
from trainwright_lint.suggest import SUGGESTED_CODES, module_name, suggest

ROOT = Path(__file__).resolve().parents[2]
GALLERY = ROOT / "examples" / "gallery"


def pyflakes_messages(code: str) -> str:
    out = io.StringIO()
    check(code, "suggestion.py", Reporter(out, out))
    return out.getvalue()


def suggestions_for(source: str, version: str | None = None) -> list[str]:
    findings = lint_snippet(source, version=version)
    texts = [suggest(source, f, "pkg.train") for f in findings if f.code in SUGGESTED_CODES]
    return [t for t in texts if t is not None]


def _cases() -> list[pytest.param]:
    cases = [
        pytest.param(p.read_text(encoding="utf-8"), None, id=f"gallery-{p.stem}")
        for p in GALLERY.glob("*.py")
    ]
    cases += [
        pytest.param(p.read_text(encoding="utf-8"), None, id=f"fixture-{p.stem}")
        for p in (FIXTURES / "rules").glob("tw2*.py")
    ]
    cases += [
        pytest.param(inspect.cleandoc(ex.code), ex.version, id=f"{code}-INVALID-{i}")
        for code, rule in sorted(RULES.items())
        if code in SUGGESTED_CODES
        for i, ex in enumerate(rule.INVALID)
    ]
    return cases


@pytest.mark.parametrize(("source", "version"), _cases())
def test_suggestions_pass_pyflakes(source: str, version: str | None) -> None:
    for text in suggestions_for(source, version):
        assert pyflakes_messages(text) == "", text


def test_the_corpus_yields_suggestions() -> None:
    """The parametrised test above would pass vacuously if nothing were suggested."""
    total = sum(len(suggestions_for(p.read_text(encoding="utf-8"))) for p in GALLERY.glob("*_before.py"))
    assert total >= 5


def test_a_local_from_outside_the_moved_code_becomes_a_todo() -> None:
    """The issue's case: the moved code read `t0`, assigned where the callback cannot see it."""
    source = textwrap.dedent(
        """
        import time
        from transformers import Trainer

        EVERY = 50

        class MyTrainer(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                t0 = self._clock()
                loss = super().training_step(model, inputs, num_items_in_batch)
                if self.state.global_step % EVERY == 0:
                    print(time.perf_counter() - t0)
                return loss
        """
    )
    (text,) = suggestions_for(source)
    assert pyflakes_messages(text) == "", text
    assert "t0 = None  # TODO: `t0` was computed in `MyTrainer.training_step`" in text
    assert "from pkg.train import EVERY  # TODO:" in text


def test_a_wrapper_carries_its_local_from_begin_to_end() -> None:
    source = (GALLERY / "step_timer_before.py").read_text(encoding="utf-8")
    (text,) = suggestions_for(source)
    assert (
        "def on_step_begin(self, args, state, control, **kwargs):\n        self.start = time.perf_counter()"
        in text
    )
    assert "time.perf_counter() - self.start" in text


@pytest.mark.parametrize(
    ("shown", "module"),
    [("src/pkg/train.py", "pkg.train"), ("pkg/__init__.py", "pkg"), ("my-scripts/run.py", None)],
)
def test_module_name_of_a_shown_path(shown: str, module: str | None) -> None:
    assert module_name(shown) == module


# ------------------------------------------------------------------ generated overrides (hypothesis)

BEFORE_SUPER = [
    "t0 = time.perf_counter()",
    "start = self._clock()",
    "n = len(inputs)",
    "self._seen += 1",
]
AFTER_SUPER = [
    "self.log({'t': time.perf_counter() - t0})",
    "if self.state.global_step % EVERY == 0:\n    print(start, n, self.model.dtype)",
    "if self.accelerator.is_main_process:\n    wandb.log({'loss': loss.item()})",
    "elapsed = time.perf_counter() - start\nself.log({'elapsed': elapsed, 'seen': self._seen})",
    "if self.state.global_step % 10 == 0:\n    helper(inputs, num_items_in_batch)",
]


@st.composite
def wrapped_training_step(draw: st.DrawFn) -> str:
    before = draw(st.lists(st.sampled_from(BEFORE_SUPER), unique=True, max_size=3))
    after = draw(st.lists(st.sampled_from(AFTER_SUPER), unique=True, min_size=1, max_size=3))
    body = [*before, "loss = super().training_step(model, inputs, num_items_in_batch)", *after, "return loss"]
    method = "def training_step(self, model, inputs, num_items_in_batch=None):\n" + textwrap.indent(
        "\n".join(body), "    "
    )
    return (
        "import time\n\nimport wandb\nfrom transformers import Trainer\n\nEVERY = 20\n\n\n"
        "def helper(*values):\n    print(values)\n\n\n"
        f"class MyTrainer(Trainer):\n{textwrap.indent(method, '    ')}\n"
    )


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(wrapped_training_step())
def test_generated_overrides_give_pyflakes_clean_suggestions(source: str) -> None:
    for text in suggestions_for(source):
        assert pyflakes_messages(text) == "", f"{source}\n---\n{text}"
