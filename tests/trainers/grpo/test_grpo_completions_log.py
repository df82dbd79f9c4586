"""The completions-table callback writes JSONL rows at log events, on the main process only."""

from __future__ import annotations

import json
from types import SimpleNamespace

from transformers import TrainerControl, TrainerState

from trainwright.callbacks.completions_log import CompletionsLogCallback


def _state(step, main=True):
    state = TrainerState()
    state.global_step = step
    state.is_world_process_zero = main
    return state


def test_grpo_completions_log_writes_rows_at_each_log(tmp_path):
    args = SimpleNamespace(output_dir=str(tmp_path), report_to=[])
    callback = CompletionsLogCallback()
    callback.add_rows([{"prompt": "p", "completion": "c", "rewards": {"f": 1.0}, "advantage": 0.5}])
    callback.on_log(args, _state(3), TrainerControl(), logs={})
    callback.on_log(args, _state(4), TrainerControl(), logs={})  # nothing pending: nothing written
    callback.add_rows([{"prompt": "q", "completion": "d", "rewards": {"f": None}, "advantage": 0.0}])
    callback.on_log(args, _state(5), TrainerControl(), logs={})
    rows = [json.loads(line) for line in (tmp_path / "completions.jsonl").read_text().splitlines()]
    assert rows == [
        {"step": 3, "prompt": "p", "completion": "c", "rewards": {"f": 1.0}, "advantage": 0.5},
        {"step": 5, "prompt": "q", "completion": "d", "rewards": {"f": None}, "advantage": 0.0},
    ]
    assert callback.rows_written == 2


def test_grpo_completions_log_only_main_process_writes(tmp_path):
    args = SimpleNamespace(output_dir=str(tmp_path), report_to=[])
    callback = CompletionsLogCallback(path=str(tmp_path / "sub" / "table.jsonl"), max_rows_per_log=1)
    callback.add_rows([{"prompt": "p"}])
    callback.on_log(args, _state(1, main=False), TrainerControl(), logs={})
    assert not (tmp_path / "sub" / "table.jsonl").exists() and callback.pending == []
    callback.add_rows([{"prompt": "a"}, {"prompt": "b"}])
    callback.on_log(args, _state(2), TrainerControl(), logs={})
    assert (tmp_path / "sub" / "table.jsonl").read_text().count("\n") == 1  # capped by max_rows_per_log
