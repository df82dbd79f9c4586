"""Two processes under ``accelerate launch --cpu``: losses, metrics and the update equal one process on the full batch."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_dpo_two_process_run_matches_single_process(tmp_path) -> None:
    accelerate = shutil.which("accelerate", path=os.path.dirname(sys.executable)) or shutil.which(
        "accelerate"
    )
    if accelerate is None:
        pytest.skip("accelerate CLI not installed")
    # accelerate 1.15: `launch --cpu --num_processes 2` silently runs ONE process unless mpirun is set up
    # (simple_launcher). The torchrun launcher behind --multi_gpu runs 2 CPU processes with gloo
    # (the worker sets use_cpu=True and asserts that it sees 2 processes).
    cmd = [
        accelerate, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
        "--main_process_port", str(free_port()), str(HERE / "ddp_worker.py"), str(tmp_path / "ddp"),
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    (tmp_path / "ddp").mkdir()
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ddp_log = next(e for e in json.loads((tmp_path / "ddp" / "log_history.json").read_text()) if "loss" in e)
    ddp_weights = torch.load(tmp_path / "ddp" / "weights.pt")

    sys.path.insert(0, str(HERE))
    from ddp_worker import N_PAIRS, build_and_train

    single = build_and_train(tmp_path / "single", per_device_batch=N_PAIRS)
    single_log = next(e for e in single.state.log_history if "loss" in e)
    for key in ("loss", "rewards/chosen", "rewards/rejected", "rewards/margins", "rewards/accuracies",
                "logps/chosen", "logps/rejected", "logits/chosen", "logits/rejected", "num_tokens", "grad_norm"):  # fmt: skip
        assert ddp_log[key] == pytest.approx(single_log[key], rel=1e-5, abs=1e-6), key
    assert single_log["loss"] != pytest.approx(0.693147, abs=1e-3)  # policy != reference: a real loss
    for name, value in single.model.state_dict().items():
        assert torch.allclose(ddp_weights[name], value, atol=1e-6), name
