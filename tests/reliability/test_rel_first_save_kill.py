"""A ``kill -9`` during the first save: ``resume_from_checkpoint=True`` starts from scratch, loses nothing.

The audit: the only checkpoint folder was torn, so ``resume_from_checkpoint=True`` raised "no complete
checkpoint" on every restart until someone deleted the folder by hand. Here a real training process is
killed with SIGKILL while it writes its first checkpoint (after the weights appear, before the Trainer's
``trainer_state.json``), and a restart with ``resume_from_checkpoint=True`` trains from step 0 with a
warning, the torn folder kept aside as ``incomplete-checkpoint-2``.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from kill_harness import EventStream
from rel_trainers import dpo_trainer

from trainwright.callbacks.checkpoint_guard import (
    CheckpointGuardWarning,
    marker_problem,
    newest_complete_checkpoint,
    trainer_check_problem,
)

pytest.importorskip("datasets")

CHILD = """
import torch
from kill_child import SaveProbe, emit, output_dir
from rel_trainers import dpo_trainer

torch.set_num_threads(1)
emit("RESUMED", "None")
dpo_trainer(output_dir(), callbacks=[SaveProbe()]).train()
"""


def kill_inside_the_first_save(zygote, run: Path, log: Path) -> Path:
    """Start a run, wait for its first save to write the weights, SIGKILL it; the checkpoint folder."""
    events = EventStream(run.parent / f"{run.name}.fifo")
    pid = zygote.spawn(CHILD, events.path, run, log, None)
    try:
        while (event := events.next(120.0)) is not None and event[0] != "SAVING":
            pass
        assert event is not None, log.read_text()[-3000:]
        folder = run / f"checkpoint-{event[1]}"
        deadline = time.monotonic() + 60
        while not (folder / "model.safetensors").exists() and time.monotonic() < deadline:
            time.sleep(0.0005)
        os.kill(pid, signal.SIGKILL)
        assert zygote.wait(pid)["signal"] == signal.SIGKILL
    finally:
        events.close()
    return folder


@pytest.mark.slow
def test_a_kill_during_the_first_save_restarts_from_scratch_without_losing_the_folder(zygote, tmp_path):
    for attempt in range(5):  # the kill must land inside the save: retried when the save had finished
        run = tmp_path / f"run-{attempt}"
        folder = kill_inside_the_first_save(zygote, run, tmp_path / f"child-{attempt}.log")
        if marker_problem(folder) is not None and trainer_check_problem(folder) is not None:
            break
    else:
        pytest.fail("no kill landed inside the first save in 5 attempts")
    torn_files = sorted(p.name for p in folder.iterdir())
    assert newest_complete_checkpoint(run) is None  # the audit's state: nothing to resume from

    restarted = dpo_trainer(run)
    with pytest.warns(CheckpointGuardWarning, match="no checkpoint in .* is complete .*starts from scratch"):
        restarted.train(resume_from_checkpoint=True)
    assert restarted.state.global_step == 4
    assert sorted(p.name for p in (run / "incomplete-checkpoint-2").iterdir()) == torn_files  # kept aside
    assert newest_complete_checkpoint(run) == str(run / "checkpoint-4")
    assert marker_problem(run / "checkpoint-2") is None  # the new first save is complete


def test_resume_true_without_any_checkpoint_folder_still_raises(tmp_path):
    """Nothing was ever saved there (a wrong output_dir): as ``Trainer.train``, an error, not a fresh run."""
    with pytest.raises(ValueError, match="resume_from_checkpoint=True but no checkpoint was found in"):
        dpo_trainer(tmp_path / "empty").train(resume_from_checkpoint=True)
