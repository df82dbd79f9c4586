"""MemoryCallback: full garbage collections at the scheduled steps, peak memory in the logs."""

from __future__ import annotations

import gc

import pytest
import torch
from cb_support import Recorder, train_logs

from trainwright.callbacks import MemoryCallback


def test_collects_every_n_steps_and_logs_peak_memory(make_trainer):
    memory = MemoryCallback(every_n_steps=2)
    trainer = make_trainer(callbacks=[memory], max_steps=6)
    full_collections_at: list[int] = []
    freed_at: dict[int, int] = {}  # step -> objects the full collections of that step found unreachable

    def on_gc(phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        step = trainer.state.global_step
        if phase == "start":
            full_collections_at.append(step)
        else:
            freed_at[step] = freed_at.get(step, 0) + info["collected"] + info["uncollectable"]

    gc.callbacks.append(on_gc)
    gc.disable()  # only explicit collections now: the callback's (and any library's)
    try:
        trainer.train()
    finally:
        gc.enable()
        gc.callbacks.remove(on_gc)
    assert memory.collected_at_steps == [2, 4, 6]
    assert {2, 4, 6} <= set(full_collections_at)
    assert not {1, 3, 5} & set(full_collections_at)
    logs = train_logs(trainer)
    peaks = [entry["memory/peak_rss_mib"] for entry in logs]
    assert all(p > 10 for p in peaks) and peaks == sorted(peaks)  # a high-water mark never falls
    # each log reports what the collections since the previous log freed: 0 at steps 1, 3, 5
    assert [entry["memory/gc_collected"] for entry in logs] == [freed_at.get(step, 0) for step in range(1, 7)]
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        assert all("memory/cuda_peak_allocated_mib" not in entry for entry in logs)


def test_gc_objects_freed_are_counted(make_trainer):
    class Cycle:
        def __init__(self) -> None:
            self.me = self

    def make_garbage(args, state, control, **kwargs):
        if state.global_step == 0:
            for _ in range(500):
                Cycle()  # unreachable reference cycles: only a collection frees them

    memory = MemoryCallback(every_n_steps=2)
    trainer = make_trainer(callbacks=[Recorder("on_step_begin", make_garbage), memory], max_steps=2)
    gc.disable()
    try:
        trainer.train()
    finally:
        gc.enable()
    logs = train_logs(trainer)
    assert logs[0]["memory/gc_collected"] == 0  # no collection by the callback at step 1
    assert logs[1]["memory/gc_collected"] >= 500  # the cycles made in step 1, freed at step 2


def test_bad_interval_is_named():
    with pytest.raises(ValueError, match="every_n_steps must be an integer >= 1"):
        MemoryCallback(every_n_steps=0)
