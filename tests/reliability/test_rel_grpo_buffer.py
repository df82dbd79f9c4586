"""The GRPO generation buffer file: written atomically, and a torn one is treated like a missing one.

The audit: 6 of 15 kills aimed at the buffer write left an empty ``grpo_buffer_rank0.pt`` next to a
complete ``trainer_state.json``, and the resume crashed with ``EOFError``.
"""

from __future__ import annotations

import os
import random
import signal
import stat
import time

import pytest
import torch
from kill_harness import EventStream
from rel_trainers import StopAt, grpo_trainer

from trainwright.trainers.grpo.buffer import BUFFER_FILE, RoundBuffer


def _buffer(size: int = 4) -> RoundBuffer:
    return RoundBuffer(
        key=(0, 3),
        micro_batches=[{"input_ids": torch.arange(size).reshape(1, -1), "advantages": torch.ones(1)}],
    )


def test_save_load_round_trip_leaves_no_temporary_file(tmp_path):
    path = _buffer().save(str(tmp_path), rank=1)
    assert os.path.basename(path) == BUFFER_FILE.format(rank=1)
    loaded = RoundBuffer.load(str(tmp_path), rank=1)
    assert loaded is not None and loaded.key == (0, 3)
    torch.testing.assert_close(loaded.micro_batches[0]["input_ids"], torch.arange(4).reshape(1, -1))
    assert sorted(os.listdir(tmp_path)) == [BUFFER_FILE.format(rank=1)]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask  # not mkstemp's 0o600


def test_missing_buffer_is_none_without_warning(tmp_path, recwarn):
    assert RoundBuffer.load(str(tmp_path), rank=0) is None
    assert not recwarn.list


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbage"])
def test_torn_buffer_is_treated_as_missing(tmp_path, damage):
    path = _buffer(size=2000).save(str(tmp_path), rank=0)
    with open(path, "rb") as handle:
        data = handle.read()
    content = {"empty": b"", "truncated": data[: len(data) // 2], "garbage": b"\x00not a torch file" * 10}[
        damage
    ]
    with open(path, "wb") as handle:
        handle.write(content)
    with pytest.warns(UserWarning, match="the generation round will be regenerated") as record:
        assert RoundBuffer.load(str(tmp_path), rank=0) is None
    message = str(record[0].message)
    assert path in message and f"({len(content)} bytes;" in message


# --------------------------------------------------------------------------------------------------
# Real kills during real buffer writes
# --------------------------------------------------------------------------------------------------

WRITER_CHILD = """
import torch
from kill_child import emit, output_dir
from trainwright.trainers.grpo.buffer import BUFFER_FILE, RoundBuffer

buffer = RoundBuffer(key=(0, 1), micro_batches=[{"x": torch.randn(1_500_000)} for _ in range(2)])  # ~12 MB
path = output_dir() + "/" + BUFFER_FILE.format(rank=0)
emit("RESUMED", "None")
for step in range(1000):
    emit("SAVING", step)
    if PLAIN:
        torch.save(buffer.state_dict(), path)  # what the buffer did before: the audit's torn files
    else:
        buffer.save(output_dir(), 0)
    emit("SAVED", step)
"""


@pytest.mark.slow
@pytest.mark.parametrize("plain", [False, True], ids=["atomic", "plain-torch-save"])
def test_kill_during_buffer_write(zygote, tmp_path, plain):
    """SIGKILL at random moments during buffer writes: the atomic write always leaves a readable file;
    the control (a plain ``torch.save``, what the buffer did before) shows the kills do tear files."""
    folder = tmp_path / "checkpoint-1"
    folder.mkdir()
    rng = random.Random(7)
    torn = 0
    for trial in range(8):
        events = EventStream(tmp_path / f"events-{trial}.fifo")
        pid = zygote.spawn(
            WRITER_CHILD.replace("PLAIN", str(plain)),
            events.path,
            folder,
            tmp_path / f"child-{trial}.log",
            None,
        )
        seen = []
        while len([e for e in seen if e[0] == "SAVED"]) < 2:  # two whole writes: the file exists
            event = events.next(60.0)
            assert event is not None, (tmp_path / f"child-{trial}.log").read_text()[-3000:]
            seen.append(event)
        write_ms = (seen[-1][2] - seen[-2][2]) * 1000
        while (event := events.next(60.0)) is not None and event[0] != "SAVING":
            pass
        time.sleep(rng.uniform(0, write_ms) / 1000)
        os.kill(pid, signal.SIGKILL)
        assert zygote.wait(pid)["signal"] == signal.SIGKILL
        events.close()
        try:
            state = torch.load(folder / BUFFER_FILE.format(rank=0), weights_only=True)
            assert state["key"] == (0, 1)
        except (EOFError, RuntimeError) as error:
            torn += 1
            assert plain, f"trial {trial}: the atomic write left a torn file: {error}"
            with pytest.warns(UserWarning, match="regenerated"):
                assert RoundBuffer.load(str(folder), 0) is None  # and the reader copes
    print(f"{'plain torch.save' if plain else 'atomic save'}: {torn} of 8 kills left a torn file")
    if plain:
        assert torn >= 1, "no kill tore a plain torch.save: the kills did not land inside writes"
    else:
        leftovers = [name for name in os.listdir(folder) if name != BUFFER_FILE.format(rank=0)]
        assert all(name.endswith(".tmp") and name.startswith(".") for name in leftovers)


# --------------------------------------------------------------------------------------------------
# End to end: a GRPO resume from a checkpoint whose buffer file is empty
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_grpo_resume_with_a_torn_buffer_regenerates_the_round(tmp_path, damage):
    pytest.importorskip("datasets")
    run = tmp_path / "run"
    grpo_trainer(run, callbacks=[StopAt(2)]).train()
    buffer_file = run / "checkpoint-2" / BUFFER_FILE.format(rank=0)
    data = buffer_file.read_bytes()
    buffer_file.write_bytes(b"" if damage == "empty" else data[: len(data) // 3])

    resumed = grpo_trainer(run)
    with pytest.warns(UserWarning) as record:
        resumed.train(resume_from_checkpoint=str(run / "checkpoint-2"))
    messages = [str(w.message) for w in record]
    assert any(str(buffer_file) in m and "will be regenerated" in m for m in messages), messages
    assert any("regenerating this round" in m for m in messages), messages  # GRPOTrainer.training_step
    assert resumed.state.global_step == 4
    assert resumed.generation_backend.calls == 1  # steps 3-4 come from one regenerated round
