"""The FSDP set-up checks that need no second process (trainwright.trainers.common.distributed)."""

from __future__ import annotations

import pytest

pytest.importorskip("accelerate")

from accelerate import PartialState

from trainwright.trainers.common.distributed import (
    REFERENCE_ENV,
    check_launch,
    enable_fsdp_on_cpu,
    fsdp_requested,
    gathered_for_generation,
    reference_mode,
)


def test_a_multi_process_launch_set_up_as_one_process_is_refused(monkeypatch) -> None:
    """What ``accelerate launch`` with an FSDP (or --multi_gpu) config does on a machine without GPUs when
    ACCELERATE_USE_CPU=1 is missing: torchrun starts WORLD_SIZE processes, accelerate makes each one a
    single-process run, and every rank would train alone."""
    assert PartialState().num_processes == 1
    check_launch(None)  # a plain single-process run passes
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="WORLD_SIZE=2.*ACCELERATE_USE_CPU=1"):
        check_launch(None)


def test_fsdp_on_cpu_is_only_set_up_when_asked_for(monkeypatch, tmp_path) -> None:
    from trainwright import DPOConfig

    monkeypatch.delenv("ACCELERATE_USE_FSDP", raising=False)
    args = DPOConfig(output_dir=str(tmp_path), use_cpu=True, report_to="none")
    assert not fsdp_requested(args)
    assert enable_fsdp_on_cpu(args) is False
    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")  # as `accelerate launch` exports it for an FSDP config
    assert fsdp_requested(args)
    assert enable_fsdp_on_cpu(args) is False  # one process: nothing to shard over, accelerate's state is kept


def test_reference_mode_names_the_setting(monkeypatch) -> None:
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    assert reference_mode() == "shard"
    monkeypatch.setenv(REFERENCE_ENV, "Replicate")
    assert reference_mode() == "replicate"
    monkeypatch.setenv(REFERENCE_ENV, "whole")
    with pytest.raises(ValueError, match=f"{REFERENCE_ENV}='whole'.*shard, replicate"):
        reference_mode()


def test_gathering_an_unsharded_model_changes_nothing() -> None:
    from torch import nn

    model = nn.Linear(2, 2)
    with gathered_for_generation(model) as sharded:
        assert sharded is False
