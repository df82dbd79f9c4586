"""Two CPU processes under ``accelerate launch``: advantages come from the rewards of both processes.

``accelerate launch --cpu --num_processes 2`` starts ONE process (accelerate's simple launcher; several
CPU processes need an MPI hostfile), so we launch through the multi-process launcher (torchrun) with
``ACCELERATE_USE_CPU=1``: two real processes on CPU with the gloo backend.
"""

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

from trainwright.trainers.grpo_loss import compute_advantages

SCRIPT = Path(__file__).with_name("grpo_two_process_script.py")


@pytest.mark.slow
def test_grpo_two_processes_normalise_with_gathered_rewards(tmp_path):
    accelerate = shutil.which("accelerate", path=os.path.dirname(sys.executable))
    if accelerate is None:
        pytest.skip("accelerate CLI not installed")
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "TQDM_DISABLE": "1",
        "ACCELERATE_USE_CPU": "1",
    }
    with socket.socket() as probe:  # a free port for the process group
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cmd = [
        accelerate,
        "launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(port),
        str(SCRIPT),
        str(tmp_path),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert [r["num_processes"] for r in ranks] == [2, 2]
    # the group of 4 copies of one prompt is split 2 + 2 across the processes, which sample differently
    assert len(set(ranks[0]["prompt_index"] + ranks[1]["prompt_index"])) == 1
    assert ranks[0]["rewards"] != ranks[1]["rewards"]
    all_rewards = torch.tensor(ranks[0]["rewards"] + ranks[1]["rewards"])
    # by hand: A = (R - mean of the 4) / (sample std of the 4 + 1e-4)
    expected = (all_rewards - all_rewards.mean()) / (all_rewards.std() + 1e-4)
    torch.testing.assert_close(torch.tensor(ranks[0]["advantages"] + ranks[1]["advantages"]), expected)
    torch.testing.assert_close(expected, compute_advantages(all_rewards, 4).advantages)
    # local-only normalisation (2 rewards per process) would give different advantages
    local = torch.cat([compute_advantages(torch.tensor(r["rewards"]), 2).advantages for r in ranks])
    assert not torch.allclose(local, expected)
    # both processes log the same (gathered) reward
    assert ranks[0]["reward_logged"] == pytest.approx(ranks[1]["reward_logged"])
