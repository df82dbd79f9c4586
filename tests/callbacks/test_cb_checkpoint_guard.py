"""CheckpointGuardCallback and newest_complete_checkpoint in real Trainer runs.

The torn folders here are made by hand from real checkpoints (a file removed or cut short, as a crash
leaves them); ``tests/reliability/test_rel_kill_checkpoint.py`` makes them with real ``kill -9``.
"""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from trainwright.callbacks import (
    CheckpointExtrasCallback,
    CheckpointGuardCallback,
    CheckpointGuardWarning,
    newest_complete_checkpoint,
)
from trainwright.callbacks.checkpoint_guard import COMPLETE_MARKER, marker_problem, trainer_check_problem


def _marker(folder):
    return json.loads((folder / COMPLETE_MARKER).read_text())


def _train(make_trainer, out, callbacks=None, resume=None, **overrides):
    settings = {"max_steps": 4, "save_strategy": "steps", "save_steps": 2}
    settings.update(overrides)
    trainer = make_trainer(callbacks=callbacks, output_dir=out, **settings)
    trainer.add_callback(CheckpointGuardCallback())  # last: after every on_save writer
    trainer.train(resume_from_checkpoint=resume)
    return trainer


def test_marker_lists_every_file_of_the_finished_checkpoint(make_trainer, tmp_path):
    out = tmp_path / "run"
    _train(make_trainer, out, callbacks=[CheckpointExtrasCallback({"notes/run.json": {"a": 1}})])
    for step in (2, 4):
        folder = out / f"checkpoint-{step}"
        marker = _marker(folder)
        assert marker["step"] == step and marker["format"] == 1
        on_disk = {
            p.relative_to(folder).as_posix(): p.stat().st_size
            for p in folder.rglob("*")
            if p.is_file() and p.name != COMPLETE_MARKER
        }
        assert marker["files"] == on_disk
        # written by the Trainer before on_save, and by a callback in its own on_save before the guard
        for name in (
            "model.safetensors",
            "optimizer.pt",
            "rng_state.pth",
            "trainer_state.json",
            "notes/run.json",
        ):
            assert name in marker["files"]
        assert marker_problem(folder) is None
        assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_save_only_model_checkpoints_are_marked(make_trainer, tmp_path):
    out = tmp_path / "run"
    _train(make_trainer, out, save_only_model=True)
    files = _marker(out / "checkpoint-4")["files"]
    assert "trainer_state.json" in files and "model.safetensors" in files and "optimizer.pt" not in files


def test_a_guard_before_an_on_save_writer_does_not_cover_its_file(make_trainer, tmp_path):
    """Why the guard must be registered last: callbacks run in list order."""
    out = tmp_path / "run"
    guard_first = [CheckpointGuardCallback(), CheckpointExtrasCallback({"late.txt": "x"})]
    make_trainer(
        callbacks=guard_first, output_dir=out, max_steps=2, save_strategy="steps", save_steps=2
    ).train()
    assert (out / "checkpoint-2" / "late.txt").is_file()
    assert "late.txt" not in _marker(out / "checkpoint-2")["files"]


def test_newest_complete_checkpoint_skips_a_torn_newer_folder(make_trainer, tmp_path):
    out = tmp_path / "run"
    _train(make_trainer, out, max_steps=6)
    # checkpoint-6 as a kill during its save leaves it: optimizer written, nothing after it
    torn = out / "checkpoint-6"
    for name in ("trainer_state.json", "rng_state.pth", COMPLETE_MARKER):
        (torn / name).unlink()
    with pytest.warns(CheckpointGuardWarning) as record:
        chosen = newest_complete_checkpoint(out)
    assert chosen == str(out / "checkpoint-4")
    (message,) = [str(w.message) for w in record]
    assert f"skipping {torn}" in message and f"no {COMPLETE_MARKER}" in message
    assert f"the newest complete checkpoint is {out / 'checkpoint-4'}" in message

    resumed = make_trainer(output_dir=out, max_steps=6, save_strategy="steps", save_steps=2)
    resumed.add_callback(CheckpointGuardCallback())
    with pytest.warns(CheckpointGuardWarning, match="renamed it to incomplete-checkpoint-6"):
        resumed.train(resume_from_checkpoint=chosen)
    assert resumed.state.global_step == 6
    assert (out / "incomplete-checkpoint-6" / "optimizer.pt").is_file()  # set aside, not deleted
    assert marker_problem(out / "checkpoint-6") is None  # written again, from scratch, and marked


def test_a_marked_folder_damaged_later_is_skipped(make_trainer, tmp_path):
    out = tmp_path / "run"
    _train(make_trainer, out)
    weights = out / "checkpoint-4" / "model.safetensors"
    size = weights.stat().st_size
    os.truncate(weights, size // 2)  # e.g. a second save into the folder killed half-way
    with pytest.warns(
        CheckpointGuardWarning, match=rf"model.safetensors has {size // 2} bytes, .* recorded {size}"
    ):
        assert newest_complete_checkpoint(out) == str(out / "checkpoint-2")
    (out / "checkpoint-2" / "optimizer.pt").unlink()  # e.g. a rotation (rmtree) killed half-way
    with pytest.warns(CheckpointGuardWarning) as record:
        # invalid markers everywhere: the Trainer's own test is not used for damaged guarded folders
        assert newest_complete_checkpoint(out) is None
    messages = [str(w.message) for w in record]
    assert len(messages) == 2 and "checkpoint-4" in messages[0] and "model.safetensors has" in messages[0]
    assert (
        "checkpoint-2" in messages[1]
        and "optimizer.pt (listed in checkpoint_complete.json) is missing" in messages[1]
    )


def test_without_markers_the_trainers_own_test_is_used(make_trainer, tmp_path):
    out = tmp_path / "plain"
    make_trainer(output_dir=out, max_steps=6, save_strategy="steps", save_steps=2).train()  # no guard
    assert newest_complete_checkpoint(out) == str(out / "checkpoint-6")
    (out / "checkpoint-6" / "trainer_state.json").write_text('{"global_step": 6, "log_hi')  # torn
    (out / "checkpoint-4" / "trainer_state.json").unlink()
    with pytest.warns(CheckpointGuardWarning) as record:
        assert newest_complete_checkpoint(out) == str(out / "checkpoint-2")
    messages = [str(w.message) for w in record]
    assert "unreadable trainer_state.json (JSONDecodeError" in messages[0] and "checkpoint-6" in messages[0]
    assert "no trainer_state.json" in messages[1] and "checkpoint-4" in messages[1]
    (out / "checkpoint-2" / "model.safetensors").unlink()
    assert trainer_check_problem(out / "checkpoint-2").startswith("no model weights")
    with pytest.warns(CheckpointGuardWarning):
        assert newest_complete_checkpoint(out) is None


def test_no_output_dir_or_no_checkpoints(tmp_path, recwarn):
    assert newest_complete_checkpoint(tmp_path / "missing") is None
    (tmp_path / "checkpoint-x").mkdir()  # not a checkpoint name
    (tmp_path / "checkpoint-3").write_text("a file, not a folder")
    assert newest_complete_checkpoint(tmp_path) is None
    assert not recwarn.list


def test_resume_true_still_takes_the_torn_folder(make_trainer, tmp_path):
    """Why the helper exists: Trainer.train resolves True with get_last_checkpoint before any callback event."""
    out = tmp_path / "run"
    _train(make_trainer, out)
    (out / "checkpoint-6").mkdir()  # a kill right after the Trainer created the folder
    trainer = make_trainer(output_dir=out, max_steps=6, save_strategy="steps", save_steps=2)
    trainer.add_callback(CheckpointGuardCallback())
    with pytest.raises(ValueError, match="Can't find a valid checkpoint at .*checkpoint-6"):
        trainer.train(resume_from_checkpoint=True)


def test_rotation_cannot_keep_a_torn_folder_instead_of_the_newest_complete_one(make_trainer, tmp_path):
    """transformers' rotate_checkpoints always keeps the *last* checkpoint of its order and deletes the
    others beyond save_total_limit. A torn checkpoint-10 (a crashed run that saved every 5 steps) sorts
    last; its mtime is set in the future so that it does under both orders sort_checkpoints uses (mtime,
    or the step number when all mtimes lie within 1 s — fast saves, filesystems without mtimes)."""

    def torn_folder(out):
        folder = out / "checkpoint-10"
        folder.mkdir()
        (folder / "model.safetensors").write_bytes(b"\x00" * 10)  # half-written weights
        future = time.time() + 3600
        os.utime(folder, (future, future))

    # without the guard: the resumed run saves checkpoint-6 and rotation deletes it (and 4), keeping 10
    plain = tmp_path / "plain"
    make_trainer(
        output_dir=plain, max_steps=4, save_strategy="steps", save_steps=4, save_total_limit=1
    ).train()
    torn_folder(plain)
    make_trainer(
        output_dir=plain, max_steps=6, save_strategy="steps", save_steps=3, save_total_limit=1
    ).train(resume_from_checkpoint=str(plain / "checkpoint-4"))
    assert sorted(p.name for p in plain.iterdir() if p.is_dir()) == ["checkpoint-10"]

    # with the guard: checkpoint-10 is set aside at train begin, rotation keeps the new checkpoint-6
    guarded = tmp_path / "guarded"
    _train(make_trainer, guarded, max_steps=4, save_steps=4, save_total_limit=1)
    torn_folder(guarded)
    with pytest.warns(CheckpointGuardWarning):
        resume = newest_complete_checkpoint(guarded)
    assert resume == str(guarded / "checkpoint-4")
    with pytest.warns(CheckpointGuardWarning, match="renamed it to incomplete-checkpoint-10"):
        _train(make_trainer, guarded, resume=resume, max_steps=6, save_steps=3, save_total_limit=1)
    names = sorted(p.name for p in guarded.iterdir() if p.is_dir())
    assert names == ["checkpoint-6", "incomplete-checkpoint-10"]
    assert newest_complete_checkpoint(guarded) == str(guarded / "checkpoint-6")


def test_torn_delete_and_abandoned_markers(make_trainer, tmp_path):
    out = tmp_path / "run"
    _train(make_trainer, out, max_steps=6)
    shutil.copytree(out / "checkpoint-6", out / "checkpoint-8")
    (out / "checkpoint-8" / COMPLETE_MARKER).unlink()  # torn
    trainer = make_trainer(output_dir=out, max_steps=6, save_strategy="no")
    trainer.add_callback(CheckpointGuardCallback(torn="delete"))
    with pytest.warns(CheckpointGuardWarning) as record:
        trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))  # branch from an older checkpoint
    messages = " | ".join(str(w.message) for w in record)
    assert "checkpoint-8 is not a complete checkpoint" in messages and "deleted it" in messages
    assert "checkpoint-4 is beyond step 2" in messages and "checkpoint-6 is beyond step 2" in messages
    assert not (out / "checkpoint-8").exists()
    # 4 and 6 belong to the abandoned branch: still there, but no longer what a crash-resume picks
    assert (out / "checkpoint-6" / "model.safetensors").is_file()
    with pytest.warns(CheckpointGuardWarning):
        assert newest_complete_checkpoint(out) == str(out / "checkpoint-2")


def test_fsync_off_still_marks_and_bad_arguments(make_trainer, tmp_path):
    out = tmp_path / "run"
    trainer = make_trainer(output_dir=out, max_steps=2, save_strategy="steps", save_steps=2)
    trainer.add_callback(CheckpointGuardCallback(fsync=False))
    trainer.train()
    assert marker_problem(out / "checkpoint-2") is None
    with pytest.raises(ValueError, match="torn must be 'rename' or 'delete'"):
        CheckpointGuardCallback(torn="keep")  # type: ignore[arg-type]
