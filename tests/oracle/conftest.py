"""Shared oracle runs: every program the oracle tests need is trained once per session, in one child
process (importing torch and transformers is most of a run's time on a 2-core CI machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from trainwright.testing.fixed import DEFAULT_RANGE, fixed_copy
from trainwright.testing.oracle import Record, Spec, run_specs
from trainwright.testing.suggested import Suggested, applied

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
    "own_loss_divided": Spec(PROGRAMS / "own_loss_divided.py"),
    "log_record_kept": Spec(PROGRAMS.parent / "moves" / "record_written_after_own_on_log.py"),
    "log_record_recomputed": Spec(PROGRAMS / "log_record_recomputed.py"),
}
# name -> program fixed by ``trainwright fix --unsafe-fixes`` (the fix under test), trained the same way
FIXED = {"own_loss_fixed": "own_loss.py", "super_loss_fixed": "super_loss.py", "super_loss": None}
TARGETS = {"super_loss_fixed": ">=4.46,<6"}  # where super() takes ``num_items_in_batch``: forwarded


@pytest.fixture(scope="session")
def fixed_programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("fixed")
    out = {}
    for name, source in FIXED.items():
        if source is None:
            continue
        fixed = fixed_copy(
            PROGRAMS / source, folder / name, unsafe=True, target=TARGETS.get(name, DEFAULT_RANGE)
        )
        assert fixed.changed, fixed.output
        out[name] = fixed.path
    return out


GALLERY = Path(__file__).parents[2] / "examples" / "gallery"
# name -> original: ``fix --suggest`` previews judged by the oracle (each applied as printed)
SUGGESTED: dict[str, Path] = {
    "eval_print": PROGRAMS / "eval_print.py",
    "sample_tok": PROGRAMS / "sample_tok.py",
    "gated_timer": PROGRAMS / "gated_timer.py",
    "progress_file": GALLERY / "progress_file_before.py",
    "step_timer": GALLERY / "step_timer_before.py",
}
TRAINER_KWARGS = {"sample_tok": "{'tokenizer': toy_tokenizer}"}


@pytest.fixture(scope="session")
def suggested_programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Suggested]]:
    folder = tmp_path_factory.mktemp("suggested")
    return {name: applied(source, folder / name) for name, source in SUGGESTED.items()}


@pytest.fixture(scope="session")
def oracle_records(
    fixed_programs: dict[str, Path], suggested_programs: dict[str, list[Suggested]]
) -> dict[str, Record]:
    specs = dict(SPECS)
    specs.update({name: Spec(path) for name, path in fixed_programs.items()})
    specs["super_loss"] = Spec(PROGRAMS / "super_loss.py")
    for name, original in SUGGESTED.items():
        kwargs = TRAINER_KWARGS.get(name, "")
        specs[name] = Spec(original, trainer_kwargs=kwargs)
        for i, moved in enumerate(suggested_programs[name]):
            if moved.program is not None:
                specs[f"{name}_suggested{i}"] = Spec(moved.program, trainer_kwargs=kwargs)
    return dict(zip(specs, run_specs(list(specs.values()))))
