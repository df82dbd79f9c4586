"""Two CPU processes under ``accelerate launch``: advantages come from the rewards of both processes.

``accelerate launch --cpu --num_processes 2`` starts ONE process (accelerate's simple launcher; several
CPU processes need an MPI hostfile), so we launch through the multi-process launcher (torchrun) with
``ACCELERATE_USE_CPU=1``: two real processes on CPU with the gloo backend.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from trainwright.trainers.grpo.advantages import compute_advantages

SCRIPT = Path(__file__).with_name("grpo_two_process_script.py")


@pytest.mark.slow
def test_grpo_two_processes_normalise_with_gathered_rewards(tmp_path, launch_two_processes):
    launch_two_processes(str(SCRIPT), str(tmp_path))
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
