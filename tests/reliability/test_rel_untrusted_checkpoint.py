"""A checkpoint from someone else: its ``.pt`` files carry a real ``__reduce__`` payload; resuming runs none.

The audit: a crafted ``grpo_buffer_rank0.pt`` whose pickle reduces to ``os.system(...)`` ran the command on
``train(resume_from_checkpoint=True)``; the completion marker records sizes only, and a foreign checkpoint
brings its own. Every payload here would create a marker file; a control proves it does when unpickled the
unsafe way, so a test that finds no marker file shows the payload was refused, not that it was a dud.
"""

from __future__ import annotations

import ast
import os
import shlex
from pathlib import Path

import pytest
import torch
from rel_trainers import StopAt, grpo_trainer, precomputed_dpo_trainer

from trainwright.callbacks import CheckpointGuardCallback
from trainwright.callbacks.reference_sync import ReferenceSyncCallback
from trainwright.toy import build_tiny_causal_lm, build_tokenizer
from trainwright.trainers.grpo.buffer import BUFFER_FILE, RoundBuffer

SRC = Path(__file__).resolve().parents[2] / "src" / "trainwright"


class Payload:
    """Unpickling this runs ``os.system("touch <marker>")``: the issue's attack, verbatim."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {shlex.quote(str(self.marker))}",))


def plant(path: Path, content: object, marker: Path) -> None:
    """Write ``content`` to ``path`` with ``torch.save`` and prove its payload is live (the control)."""
    torch.save(content, path)
    torch.load(path, weights_only=False)  # what the buffer's reader did before: the payload runs
    assert marker.exists(), "the control failed: the payload does not run when unpickled"
    marker.unlink()


def test_buffer_with_a_reduce_payload_is_refused_and_never_run(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / BUFFER_FILE.format(rank=0)
    plant(path, {"key": (0, 1), "micro_batches": [{"input_ids": Payload(marker)}]}, marker)
    with pytest.warns(UserWarning, match="the generation round will be regenerated") as record:
        assert RoundBuffer.load(str(tmp_path), rank=0) is None
    message = str(record[0].message)
    assert "holds objects other than tensors and plain data" in message
    assert "system" in message and "not loaded" in message
    assert "weights_only=False" not in message  # torch's advice is exactly what must not be done here
    assert not marker.exists()


@pytest.mark.parametrize(
    "state, why",
    [
        ([1, 2], "not a dict"),
        ({"key": "oops", "micro_batches": []}, "not an (epoch, round) pair"),
        ({"key": (0, 1), "micro_batches": {"a": 1}}, "not a list"),
        ({"key": (0, 1), "micro_batches": [{"input_ids": [1, 2]}]}, "not a dict of named tensors"),
    ],
)
def test_buffer_of_the_wrong_structure_is_refused(tmp_path, state, why):
    torch.save(state, tmp_path / BUFFER_FILE.format(rank=0))
    with pytest.warns(UserWarning, match="regenerated") as record:
        assert RoundBuffer.load(str(tmp_path), rank=0) is None
    assert why in str(record[0].message)


def test_grpo_resume_from_a_foreign_checkpoint_runs_no_code(tmp_path):
    """The issue's attack end to end: a real checkpoint, its buffer swapped for the payload and re-marked
    complete (a foreign checkpoint brings its own marker), then ``train(resume_from_checkpoint=True)``."""
    pytest.importorskip("datasets")
    run = tmp_path / "run"
    grpo_trainer(run, callbacks=[StopAt(2)]).train()
    checkpoint = run / "checkpoint-2"
    marker = tmp_path / "pwned"
    buffer_file = checkpoint / BUFFER_FILE.format(rank=0)
    saved = torch.load(buffer_file, weights_only=True)
    saved["micro_batches"][0]["input_ids"] = Payload(marker)
    plant(buffer_file, saved, marker)
    CheckpointGuardCallback().mark_complete(checkpoint, 2)  # the attacker's own completion marker

    resumed = grpo_trainer(run)
    with pytest.warns(UserWarning) as record:
        resumed.train(resume_from_checkpoint=True)
    assert not marker.exists(), "resuming ran the checkpoint's payload"
    messages = [str(w.message) for w in record]
    assert any(str(buffer_file) in m and "holds objects other than tensors" in m for m in messages), messages
    assert resumed.state.global_step == 4
    assert resumed.generation_backend.calls == 1  # the refused round was regenerated


def test_tr_dpo_reference_with_a_reduce_payload_is_refused(tmp_path):
    tokenizer = build_tokenizer()
    reference = build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=1)
    before = [p.detach().clone() for p in reference.parameters()]
    marker = tmp_path / "pwned"
    payload = {"state_dict": reference.state_dict(), "num_syncs": Payload(marker)}
    plant(tmp_path / ReferenceSyncCallback.CHECKPOINT_FILE, payload, marker)
    callback = ReferenceSyncCallback(reference)
    with pytest.warns(UserWarning, match="has a foreign .*system.*not loaded") as record:
        assert callback.load_checkpoint(str(tmp_path)) is False
    assert "continues from the reference it was built with" in str(record[0].message)
    assert not marker.exists()
    assert callback.num_syncs == 0
    assert all(torch.equal(a, b) for a, b in zip(before, reference.parameters()))


def test_dpo_reference_cache_with_a_reduce_payload_is_refused(tmp_path):
    """The DPO reference log-prob cache lives in the output folder too: a planted one runs nothing."""
    pytest.importorskip("datasets")
    precomputed_dpo_trainer(tmp_path / "out")
    (cache,) = (tmp_path / "out" / "ref_logps_cache").glob("*.pt")
    marker = tmp_path / "pwned"
    plant(cache, {"chosen": Payload(marker), "rejected": torch.zeros(4)}, marker)
    with pytest.raises(RuntimeError, match="holds objects other than tensors.*delete it to recompute"):
        precomputed_dpo_trainer(tmp_path / "out")
    assert not marker.exists()


def test_nothing_under_src_unpickles_outside_the_tensor_loader():
    """Every ``torch.load`` / ``pickle.load(s)`` of the runtime library goes through
    ``tensor_files.load_tensor_file`` (``weights_only=True``), so no new reader can slip one in."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value.id if isinstance(node.func.value, ast.Name) else ""
                called = f"{owner}.{node.func.attr}"
                if called in ("torch.load", "pickle.load", "pickle.loads", "dill.load", "dill.loads"):
                    offenders.append(f"{path.relative_to(SRC)}: {called}")
    assert offenders == ["storage/tensor_files.py: torch.load"], offenders  # the one in load_tensor_file


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_plain_pickle_payload_is_called_foreign_not_torn(tmp_path, protocol):
    """Issue 38 item 13: a plain ``pickle.dump`` payload (not torch's zip) is refused on an opcode before
    torch names its global; the message called it "probably torn by a crash" and repeated torch's advice
    to retry with ``weights_only=False``. The payload is shown live first (the control)."""
    import pickle

    marker = tmp_path / "pwned"
    path = tmp_path / BUFFER_FILE.format(rank=0)
    with open(path, "wb") as handle:
        pickle.dump({"key": (0, 1), "micro_batches": [{"x": Payload(marker)}]}, handle, protocol=protocol)
    with open(path, "rb") as handle:
        pickle.load(handle)
    assert marker.exists(), "the control failed: the payload does not run when unpickled"
    marker.unlink()
    with pytest.warns(UserWarning, match="regenerated") as record:
        assert RoundBuffer.load(str(tmp_path), rank=0) is None
    (message,) = [str(w.message) for w in record if "regenerated" in str(w.message)]
    assert "holds objects other than tensors and plain data" in message and "system" in message
    assert "torn" not in message and "weights_only=False" not in message
    assert not marker.exists()


def test_torn_buffer_message_omits_torch_advice(tmp_path):
    path = tmp_path / BUFFER_FILE.format(rank=0)
    torch.save({"key": (0, 1), "micro_batches": [{"x": torch.zeros(3000)}]}, path)
    path.write_bytes(path.read_bytes()[:4000])
    with pytest.warns(UserWarning, match="probably torn by a crash") as record:
        assert RoundBuffer.load(str(tmp_path), rank=0) is None
    assert "weights_only" not in str(record[0].message)
