"""GRPOTrainer under accelerate's FSDP2, 2 CPU processes (gloo): generation on the sharded policy, the sharded
reference, a resume in the middle of a round, against one process on the same global batch.

One launch of ``grpo_fsdp_worker.py`` with ``examples/accelerate/fsdp2_cpu.yaml`` (see its docstring).
Tolerances as in test_fsdp_dpo.py (sums reordered by sharding; float32); completions and the resumed run
are compared exactly.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent
CPU_CONFIG = HERE.parents[2] / "examples" / "accelerate" / "fsdp2_cpu.yaml"
WORKER = HERE / "grpo_fsdp_worker.py"
STEP_KEYS = (
    "loss", "grad_norm", "learning_rate", "kl", "reward", "reward_std", "frac_reward_zero_std",
    "completions/mean_length", "completions/min_length", "completions/max_length", "completions/clipped_ratio",
    "clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean",
)  # fmt: skip


def steps(log: list[dict]) -> dict[int, dict]:
    return {entry["step"]: entry for entry in log if "loss" in entry}


@pytest.fixture(scope="module")
def fsdp_run(tmp_path_factory, launch_two_processes):
    out = tmp_path_factory.mktemp("grpo_fsdp")
    launch_two_processes(str(WORKER), str(out), config_file=str(CPU_CONFIG), timeout=300)
    return out, json.loads((out / "result.json").read_text())


@pytest.mark.slow
def test_grpo_fsdp2_generates_and_trains_as_one_process(fsdp_run, tmp_path) -> None:
    out, result = fsdp_run
    assert result["distributed_type"] == "DistributedType.FSDP"
    assert all(name.startswith("FSDP") for name in result["types"])  # policy and reference both sharded

    sys.path.insert(0, str(HERE))
    from grpo_fsdp_worker import RecordingReward, build

    reward = RecordingReward()
    single = build(tmp_path / "single", per_device_batch=8, reward=reward)
    single.train()
    # greedy completions from the sharded policy (gathered for generate) equal one process's, round by round
    assert result["equal_completions"] == reward.calls
    assert len(reward.calls) == 2  # the second round was generated after an optimizer step on the shards
    got, expected = steps(result["equal_log"]), steps(single.state.log_history)
    assert sorted(got) == sorted(expected) == [1, 2]
    for step, entry in expected.items():
        for key in STEP_KEYS:
            assert got[step][key] == pytest.approx(entry[key], rel=1e-5, abs=1e-6), (step, key)
    # the checks can fail: the reference differs from the policy (a wrong reference, e.g. the policy
    # itself, gives kl = 0 at step 1) and the advantages are not all zero (a gradient flows)
    assert expected[1]["kl"] > 1e-3 and expected[1]["grad_norm"] > 1e-3
    weights = torch.load(out / "equal_policy.pt")
    assert weights.keys() == single.model.state_dict().keys()
    for name, value in single.model.state_dict().items():
        assert weights[name].shape == value.shape, name
        torch.testing.assert_close(weights[name], value, rtol=0, atol=1e-6, msg=name)


@pytest.mark.slow
def test_grpo_fsdp2_generation_gathers_once_and_lets_ranks_stop_at_different_lengths(fsdp_run) -> None:
    """Rank 0 asks for 2 new tokens, rank 1 for 7. On the shards every decoding step all-gathers every unit,
    and rank 0 keeps stepping until rank 1 is done (transformers' synced_gpus); gathered once, each unit is
    all-gathered once and each rank stops on its own. Both give the tokens of an unsharded copy, and leave
    the policy sharded with its FSDP settings as they were (the sharded run, like any forward, leaves the
    units accelerate marks ``reshard_after_forward=False`` gathered)."""
    _, result = fsdp_run
    for rank, run in enumerate(result["generation"]):
        assert run["gather"] == run["sharded"] == run["plain"], rank
        assert run["gather_all_gathers"] <= run["units"], rank  # once per FSDP unit at most
        # on the shards: each decoder layer in each of the 7 steps, on rank 0 too (its dummy forwards)
        assert run["sharded_all_gathers"] >= 7 * run["layers"], rank
        assert run["settings_restored"] and run["resharded"], rank
    rank0, rank1 = result["generation"]
    assert {len(ids) for ids in rank0["gather"]} == {2} and max(len(ids) for ids in rank1["gather"]) == 7


@pytest.mark.slow
def test_grpo_fsdp2_resumes_mid_round_from_the_saved_buffer(fsdp_run) -> None:
    out, result = fsdp_run
    assert {"grpo_buffer_rank0.pt", "grpo_buffer_rank1.pt", "pytorch_model_fsdp.bin", "optimizer.bin"} <= set(
        result["checkpoint_files"]
    )
    assert result["full_generate_calls"] == 1
    assert result["resumed_generate_calls"] == 0  # step 2 (slot 1 of the round) came from the buffer
    resumed, full = steps(result["resumed_log"])[2], steps(result["full_log"])[2]
    assert {k: v for k, v in resumed.items() if k != "step_time"} == {  # wall time is not reproducible
        k: v for k, v in full.items() if k != "step_time"
    }
    a, b = torch.load(out / "full_policy.pt"), torch.load(out / "resumed_policy.pt")
    assert a.keys() == b.keys() and all(torch.equal(a[name], b[name]) for name in a)


@pytest.mark.slow
def test_grpo_fsdp2_refuses_dynamic_sampling(fsdp_run) -> None:
    _, result = fsdp_run
    assert "dynamic_sampling" in result["dynamic_sampling"] and "FSDP" in result["dynamic_sampling"]
