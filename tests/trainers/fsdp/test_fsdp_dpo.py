"""DPOTrainer under accelerate's FSDP2, 2 CPU processes (gloo), against one process on the same global batch.

One launch of ``dpo_fsdp_worker.py`` with ``examples/accelerate/fsdp2_cpu.yaml`` (see its docstring), then
the same runs in this process without FSDP.

Tolerance (losses, metrics, grad norms: rel 1e-5 / abs 1e-6; weights: 1e-6): FSDP reduce-scatters the
gradients (each rank's mean over its pairs, averaged over the ranks) and clips with a norm summed from the
shards, where one process sums in another order. In float32 (eps 1.2e-7) that reorders sums of a few
hundred terms, so values agree to a few 1e-7 relative; the test leaves a factor of 10. Resuming is
compared exactly: the checkpoint holds the gathered float32 weights and optimizer state, and the resumed
steps run the same operations on the same values.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent
CPU_CONFIG = HERE.parents[2] / "examples" / "accelerate" / "fsdp2_cpu.yaml"
WORKER = HERE / "dpo_fsdp_worker.py"
STEP_KEYS = (
    "loss", "grad_norm", "learning_rate", "rewards/chosen", "rewards/rejected", "rewards/accuracies",
    "rewards/margins", "logps/chosen", "logps/rejected", "logits/chosen", "logits/rejected", "num_tokens",
)  # fmt: skip


def steps(log: list[dict]) -> dict[int, dict]:
    return {entry["step"]: entry for entry in log if "loss" in entry}


def assert_logs_close(got: list[dict], expected: list[dict]) -> None:
    got_steps, expected_steps = steps(got), steps(expected)
    assert sorted(got_steps) == sorted(expected_steps)
    for step, entry in expected_steps.items():
        for key in STEP_KEYS:
            assert got_steps[step][key] == pytest.approx(entry[key], rel=1e-5, abs=1e-6), (step, key)


def assert_weights_close(got: dict[str, torch.Tensor], expected: dict[str, torch.Tensor]) -> None:
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        assert got[name].shape == value.shape, name  # gathered: whole tensors, not one rank's shard
        torch.testing.assert_close(got[name], value.detach().cpu(), rtol=0, atol=1e-6, msg=name)


@pytest.fixture(scope="module")
def fsdp_run(tmp_path_factory, launch_two_processes):
    out = tmp_path_factory.mktemp("dpo_fsdp")
    launch_two_processes(str(WORKER), str(out), config_file=str(CPU_CONFIG), timeout=300)
    return out, json.loads((out / "result.json").read_text())


@pytest.fixture(scope="module")
def worker():
    sys.path.insert(0, str(HERE))
    import dpo_fsdp_worker

    return dpo_fsdp_worker


@pytest.mark.slow
def test_dpo_fsdp2_equals_one_process_with_a_sharded_tr_dpo_reference(fsdp_run, worker, tmp_path) -> None:
    out, result = fsdp_run
    assert result["distributed_type"] == "DistributedType.FSDP"  # not the silent DDP fallback
    assert result["policy_type"].startswith("FSDP") and result["ref_type"].startswith("FSDP")
    for name in ("policy_numel", "ref_numel_before_train"):  # each rank holds about half of each model
        local, full = result[name]
        assert local <= 0.55 * full, (name, local, full)

    single = worker.build(tmp_path / "single", per_device_batch=2)
    single.train()
    assert_logs_close(result["full_log"], single.state.log_history)
    assert_weights_close(torch.load(out / "full_policy.pt"), single.model.state_dict())
    # TR-DPO synced the sharded reference 3 times, shard by shard: the blended reference equals one process's
    assert_weights_close(torch.load(out / "full_reference.pt"), single.ref_model.state_dict())
    # ... and the checkpoint holds it whole (gathered from both ranks), as one process writes it
    saved = torch.load(out / "full" / "checkpoint-1" / "reference_sync.pt")
    expected = torch.load(tmp_path / "single" / "checkpoint-1" / "reference_sync.pt")
    assert saved["num_syncs"] == expected["num_syncs"] == 1
    assert_weights_close(saved["state_dict"], expected["state_dict"])

    # the checks can fail: the policy is not its reference (a real loss at step 1), and a reference that is not
    # synced (TR-DPO lost, e.g. not restored) gives other numbers from step 2 on
    assert steps(single.state.log_history)[1]["loss"] != pytest.approx(math.log(2), abs=1e-3)
    unsynced = worker.build(
        tmp_path / "unsynced", per_device_batch=2, sync_ref_model=False, save_strategy="no"
    )
    unsynced.train()
    assert steps(unsynced.state.log_history)[3]["loss"] != pytest.approx(
        steps(result["full_log"])[3]["loss"], rel=1e-3
    )
    # the reference kept whole on each rank (TRAINWRIGHT_FSDP_REFERENCE=replicate) trains the same
    assert result["replicated_ref_type"] == "Qwen2ForCausalLM"
    assert_logs_close(result["replicated_log"], unsynced.state.log_history)


@pytest.mark.slow
def test_dpo_fsdp2_checkpoint_resumes_bit_identically(fsdp_run) -> None:
    out, result = fsdp_run
    full, resumed = steps(result["full_log"]), steps(result["resumed_log"])
    for step in (2, 3):
        assert resumed[step] == full[step], step
    assert result["resumed_syncs"] == 3  # 1 restored from reference_sync.pt + 2 after resuming
    for kind in ("policy", "reference"):
        a, b = torch.load(out / f"full_{kind}.pt"), torch.load(out / f"resumed_{kind}.pt")
        assert a.keys() == b.keys()
        for name in a:
            assert torch.equal(a[name], b[name]), (kind, name)


@pytest.mark.slow
def test_dpo_fsdp2_refuses_what_cannot_work(fsdp_run) -> None:
    _, result = fsdp_run
    assert "TRAINWRIGHT_FSDP_REFERENCE=replicate" in result["replicate_with_sync"]
    assert "sync_ref_model" in result["replicate_with_sync"]
    assert "fsdp_version" in result["fsdp1"] and "2" in result["fsdp1"]
