"""A GRPO buffer that does not fit the resumed run is regenerated with a named warning (issue 38, items 3-4).

The audit: resuming with another ``steps_per_generation`` died with a bare ``IndexError``; with another
batch size the run silently trained on the old buffer's rows; a foreign buffer holding only tensors (of the
wrong names, shapes, token ids or values) passed the structure check and failed deep in a step
(``KeyError``/``IndexError``/``RuntimeError``). Each case here is a real checkpoint resumed by a real
trainer, which must warn, say why, regenerate the round and finish.
"""

from __future__ import annotations

import pytest
import torch
from rel_trainers import StopAt, grpo_trainer

from trainwright.callbacks import CheckpointGuardCallback
from trainwright.trainers.grpo.buffer import BUFFER_FILE

pytest.importorskip("datasets")
torch.set_num_threads(1)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A checkpoint at step 2 of a 4-step run (steps_per_generation 4, 2 rows a micro-batch)."""
    run = tmp_path_factory.mktemp("run")
    grpo_trainer(run, callbacks=[StopAt(2)]).train()
    return run / "checkpoint-2"


def _resume(tmp_path, checkpoint, **overrides):
    trainer = grpo_trainer(tmp_path / "resumed", **overrides)
    with pytest.warns(UserWarning) as record:
        trainer.train(resume_from_checkpoint=str(checkpoint))
    return trainer, [str(w.message) for w in record]


def _schema_warnings(messages):
    return [m for m in messages if BUFFER_FILE.format(rank=0) in m and "does not fit this run" in m]


def test_resume_with_another_steps_per_generation_regenerates_the_round(tmp_path, checkpoint):
    """Round 0 of the resumed run spans 8 micro-steps; the saved one (same key) holds 4: slot 4 was an
    ``IndexError``, and slots 2-3 trained on rows of the old round's cut."""
    trainer, messages = _resume(tmp_path, checkpoint, steps_per_generation=8, max_steps=8)
    (warning,) = _schema_warnings(messages)
    assert "holds 4 micro-batches" in warning and "steps_per_generation is 8" in warning
    assert trainer.state.global_step == 8 and trainer.generation_backend.calls == 1


def test_resume_with_another_batch_size_regenerates_instead_of_training_on_old_rows(tmp_path, checkpoint):
    rows_seen = []

    def reward(completion_ids, **kwargs):  # type: ignore[no-untyped-def]
        rows_seen.append(len(completion_ids))
        return [float(sum(ids) % 7) for ids in completion_ids]

    trainer, messages = _resume(tmp_path, checkpoint, per_device_train_batch_size=4, reward=reward)
    (warning,) = _schema_warnings(messages)
    assert "2 rows" in warning and "per_device_train_batch_size is 4" in warning
    assert trainer.state.global_step == 4 and rows_seen == [16]  # one fresh round of 4 micro-batches x 4 rows


def _damage(source, target, change):
    state = torch.load(source / BUFFER_FILE.format(rank=0), weights_only=True)
    change(state["micro_batches"])
    target.mkdir()
    for item in source.iterdir():
        (target / item.name).write_bytes(item.read_bytes())
    torch.save(state, target / BUFFER_FILE.format(rank=0))
    CheckpointGuardCallback().mark_complete(target, 2)  # a foreign checkpoint brings its own marker
    return target


def _rename(parts):
    for part in parts:
        part["ids"] = part.pop("completion_ids")


def _vocab(parts):
    parts[2]["completion_ids"][0, 0] = 10**6


def _inverse(parts):
    parts[2]["prompt_inverse"][:] = 7


def _nan(parts):
    parts[3]["advantages"][0] = float("nan")


def _shape(parts):
    parts[2]["completion_mask"] = parts[2]["completion_mask"][:, :1].contiguous()


@pytest.mark.parametrize(
    "change, why",
    [
        (_rename, "lacks completion_ids"),
        (_vocab, "token ids outside the vocabulary"),
        (_inverse, "prompt_inverse"),
        (_nan, "non-finite advantages"),
        (_shape, "completion_mask has shape"),
    ],
)
def test_foreign_buffer_of_tensors_only_is_checked_before_use(tmp_path, checkpoint, change, why):
    damaged = _damage(checkpoint, tmp_path / "checkpoint-2", change)
    trainer, messages = _resume(tmp_path, damaged)
    (warning,) = _schema_warnings(messages)
    assert why in warning and "regenerated" in warning
    assert trainer.state.global_step == 4 and trainer.generation_backend.calls == 1
