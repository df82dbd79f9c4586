"""Advice that names a reference callback says when the target range cannot import it.

The callbacks ship with the ``train`` extra, which needs transformers 5.x: on a range with 4.x
releases the message must say so instead of pointing at code the project cannot use.
"""

from __future__ import annotations

from pathlib import Path

from trainwright_lint.configuration import LintConfig
from trainwright_lint.configuration.target import resolve_project_target
from trainwright_lint.engine import lint_source

SOURCE = (Path(__file__).resolve().parents[2] / "examples" / "gallery" / "step_timer_before.py").read_text(
    encoding="utf-8"
)


def messages(spec: str) -> list[str]:
    target = resolve_project_target("transformers", None, option=spec)
    config = LintConfig(select=("TW202",), transformers_version=target.newest, transformers_target=target)
    return [f.message for f in lint_source(SOURCE, "step_timer_before.py", config)]


def test_a_4x_range_is_told_the_reference_needs_5x() -> None:
    (message,) = messages(">=4.44,<4.46")
    assert "trainwright.callbacks.StepTimerCallback, which needs transformers>=5" in message


def test_a_range_reaching_into_4x_is_told_too() -> None:
    (message,) = messages(">=4.57,<6")
    assert "which needs transformers>=5" in message


def test_a_5x_range_gets_the_plain_reference() -> None:
    (message,) = messages(">=5.0,<6")
    assert message.endswith("(reference: trainwright.callbacks.StepTimerCallback)")
