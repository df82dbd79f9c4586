"""CheckpointExtrasCallback: extra files land in every real checkpoint folder."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from transformers import PreTrainedTokenizerFast

from trainwright.callbacks import CheckpointExtrasCallback, ControlScheduleCallback


@dataclass
class RunInfo:
    name: str
    seed: int


def test_extras_are_written_into_each_checkpoint(make_trainer, tmp_path, tokenizer):
    out = tmp_path / "extras"

    def step_metadata(folder, state):
        return {
            "global_step": state.global_step,
            "folder": folder.name,
            "has_weights": (folder / "model.safetensors").is_file(),
        }

    def writes_itself(folder, state):
        (folder / "custom.txt").write_text(f"step {state.global_step}")

    extras = CheckpointExtrasCallback(
        {
            "run/config.json": {"lr": 1e-2, "layers": 1},
            "NOTES.md": "tiny run",
            "run_info.json": RunInfo("tiny", 0),
            "chat_tokenizer": tokenizer,
            "step.json": step_metadata,
            "custom.txt": writes_itself,
        }
    )
    trainer = make_trainer(
        callbacks=[extras], output_dir=out, max_steps=4, save_strategy="steps", save_steps=2
    )
    trainer.train()
    for step in (2, 4):
        folder = out / f"checkpoint-{step}"
        assert json.loads((folder / "run" / "config.json").read_text()) == {"lr": 1e-2, "layers": 1}
        assert (folder / "NOTES.md").read_text() == "tiny run"
        assert json.loads((folder / "run_info.json").read_text()) == {"name": "tiny", "seed": 0}
        assert json.loads((folder / "step.json").read_text()) == {
            "global_step": step,
            "folder": f"checkpoint-{step}",
            "has_weights": True,  # on_save runs after the Trainer wrote the checkpoint
        }
        assert (folder / "custom.txt").read_text() == f"step {step}"
        reloaded = PreTrainedTokenizerFast.from_pretrained(folder / "chat_tokenizer")
        assert reloaded("hello world")["input_ids"] == tokenizer("hello world")["input_ids"]


def test_extras_follow_schedule_driven_saves_and_resume(make_trainer, tmp_path):
    out = tmp_path / "resume"
    extras = {"meta.json": lambda folder, state: {"step": state.global_step}}
    make_trainer(
        callbacks=[CheckpointExtrasCallback(extras)],
        output_dir=out,
        max_steps=4,
        save_strategy="steps",
        save_steps=2,
    ).train()
    # resumed: the checkpoint's save_steps=2 still applies, plus an extra save at step 5 from a schedule
    trainer = make_trainer(
        callbacks=[ControlScheduleCallback(save=[5]), CheckpointExtrasCallback(extras)],
        output_dir=out,
        max_steps=6,
        save_strategy="steps",
        save_steps=2,
    )
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    for step in (4, 5, 6):
        assert json.loads((out / f"checkpoint-{step}" / "meta.json").read_text()) == {"step": step}


def test_bad_names_and_contents_are_named(make_trainer, tmp_path):
    with pytest.raises(ValueError, match=r"file name '\.\./escape\.txt' must be a relative path"):
        CheckpointExtrasCallback({"../escape.txt": "x"})
    with pytest.raises(ValueError, match="non-empty mapping"):
        CheckpointExtrasCallback({})
    trainer = make_trainer(
        callbacks=[CheckpointExtrasCallback({"weird.bin": object()})],
        output_dir=tmp_path / "bad",
        max_steps=1,
        save_strategy="steps",
        save_steps=1,
    )
    with pytest.raises(TypeError, match="cannot write object to 'weird.bin'"):
        trainer.train()


def test_an_extra_that_cannot_be_written_is_a_warning(make_trainer, tmp_path):
    out = tmp_path / "extras_io"
    extras = CheckpointExtrasCallback({"blocked/inner.txt": "never written", "fine.txt": "written"})

    def block(folder, state):  # a file where the extra needs a folder: fails for root too
        (folder / "blocked").write_text("a file")

    trainer = make_trainer(
        callbacks=[CheckpointExtrasCallback({"setup": block}), extras],
        output_dir=out,
        max_steps=2,
        save_strategy="steps",
        save_steps=2,
    )
    with pytest.warns(
        UserWarning, match=r"could not write 'blocked/inner.txt' into .*checkpoint-2 .*lacks it"
    ):
        trainer.train()
    assert trainer.state.global_step == 2
    assert (out / "checkpoint-2" / "fine.txt").read_text() == "written"
    assert not [p.name for p in (out / "checkpoint-2").iterdir() if p.name.endswith(".tmp")]
