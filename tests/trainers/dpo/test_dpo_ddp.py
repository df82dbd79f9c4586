"""Two CPU processes under ``accelerate launch`` (see ``tests/conftest.py``): losses, metrics and the update equal one process on the full batch."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent


@pytest.mark.slow
@pytest.mark.parametrize("share_prompts", [False, True], ids=["plain", "shared-prompt"])
def test_dpo_two_process_run_matches_single_process(
    tmp_path, launch_two_processes, share_prompts, monkeypatch
) -> None:
    (tmp_path / "ddp").mkdir()
    share = ["share"] if share_prompts else []
    launch_two_processes(str(HERE / "ddp_worker.py"), str(tmp_path / "ddp"), *share)
    ddp_log = next(e for e in json.loads((tmp_path / "ddp" / "log_history.json").read_text()) if "loss" in e)
    ddp_weights = torch.load(tmp_path / "ddp" / "weights.pt")

    sys.path.insert(0, str(HERE))
    from ddp_worker import N_PAIRS, build_and_train

    if share_prompts:
        from trainwright.trainers.common import logprobs

        monkeypatch.setattr(logprobs, "CALL_OVERHEAD_PARAMETER_TOKENS", 0)  # restored after the test
        monkeypatch.setattr(logprobs, "WEIGHT_GRADIENT_TOKENS", 0)
    single = build_and_train(tmp_path / "single", per_device_batch=N_PAIRS)
    single_log = next(e for e in single.state.log_history if "loss" in e)
    for key in ("loss", "rewards/chosen", "rewards/rejected", "rewards/margins", "rewards/accuracies",
                "logps/chosen", "logps/rejected", "logits/chosen", "logits/rejected", "num_tokens", "grad_norm"):  # fmt: skip
        assert ddp_log[key] == pytest.approx(single_log[key], rel=1e-5, abs=1e-6), key
    assert single_log["loss"] != pytest.approx(0.693147, abs=1e-3)  # policy != reference: a real loss
    for name, value in single.model.state_dict().items():
        assert torch.allclose(ddp_weights[name], value, atol=1e-6), name
