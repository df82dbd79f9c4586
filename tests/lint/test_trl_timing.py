"""TRL 1.16's ``GRPOTrainer.training_step`` and ``RLOOTrainer.training_step`` (installed in the dev
environment) time ``super().training_step(...)`` and record ``step_time`` at accumulation boundaries:
the seed's own example of timing logic in a subclass. The finding must name the event pair and point
at the observing statements only, not at the ``self._step`` counter that ``_prepare_inputs`` reads to
pick the micro-batch (the data path)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from trainwright_lint.configuration import LintConfig
from trainwright_lint.engine import lint_source

trl = pytest.importorskip("trl")
TRAINERS = Path(trl.__file__).parent / "trainer"


def _lines(text: str) -> set[int]:
    """The line numbers a message lists (``lines 1511, 1514–1518``)."""
    found: set[int] = set()
    listed = re.search(r"\(lines? ([0-9–, ]+)\)", text)
    assert listed, text
    for part in listed.group(1).split(","):
        a, _, b = part.strip().partition("–")
        found |= set(range(int(a), int(b or a) + 1))
    return found


@pytest.mark.parametrize("module", ["grpo_trainer.py", "rloo_trainer.py"])
def test_trl_training_step_timing_is_reported_without_the_data_path_counter(module: str) -> None:
    path = TRAINERS / module
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    # a timer in `training_step` is a preview variant of TW201 (``Rule.preview_variants``): shown with --preview
    config = LintConfig(transformers_version="5.24.0", trl_version="1.16.0", preview=True)
    findings = [f for f in lint_source(source, str(path), config) if f.method == "training_step"]
    (finding,) = [f for f in findings if f.code.startswith("TW2")]
    # the message names the events the move writes: the span of each micro-batch (rules/_move.py)
    assert "`on_step_begin`" in finding.message and "`on_pre_optimizer_step`" in finding.message, (
        finding.message
    )
    assert (
        finding.fix is not None
    )  # the move (issue 33): the counter before the timer's end is read at the event
    timer = next(i for i, line in enumerate(lines, 1) if "time_before = time.perf_counter()" in line)
    counter = next(i for i, line in enumerate(lines, 1) if line.strip() == "self._step += 1" and i > timer)
    reported = _lines(finding.message)
    assert finding.line == timer
    assert counter not in reported  # it feeds the data path: _prepare_inputs indexes the buffer with it
    assert {timer, timer + 3} <= reported  # the two clock reads around super().training_step(...)
    recording = next(i for i, line in enumerate(lines, 1) if '["step_time"].append' in line)
    assert recording in reported
