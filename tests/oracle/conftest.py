"""Shared oracle runs: every program of ``programs/`` is trained once per session, in one child."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from trainwright.testing.oracle import Record, Spec, run_specs

PROGRAMS = Path(__file__).parent / "programs"

# name -> how the program is put together (as its docstring says it is registered)
SPECS = {
    "base": Spec(PROGRAMS / "base.py", trainer="ReferenceTrainer"),
    "same": Spec(PROGRAMS / "same.py", trainer="ReferenceTrainer"),
    "loss_scaling": Spec(PROGRAMS / "loss_scaling.py", trainer="ReferenceTrainer"),
    "moved_print": Spec(
        PROGRAMS / "moved_print.py", trainer="ReferenceTrainer", callbacks=("EvalPrintCallback()",)
    ),
    "timer_span": Spec(
        PROGRAMS / "timer_span.py", trainer="ReferenceTrainer", callbacks=("StepTimerCallback()",)
    ),
    "final_save": Spec(
        PROGRAMS / "final_save.py", trainer="ReferenceTrainer", callbacks=("NotesCallback()",)
    ),
    "crash": Spec(
        PROGRAMS / "crash.py",
        trainer="ReferenceTrainer",
        register=("trainer.add_callback(SampleCallback(tokenizer=None))",),
    ),
}


@pytest.fixture(scope="session")
def oracle_records() -> dict[str, Record]:
    return dict(zip(SPECS, run_specs(list(SPECS.values()))))
