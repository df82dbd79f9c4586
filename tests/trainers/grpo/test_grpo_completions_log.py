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


def test_grpo_completions_log_on_a_full_disk_warns_once_and_keeps_going(tmp_path):
    """Issue 38 item 2: ENOSPC on the completions table is a warning, never the end of the run; the
    streak is counted and reported once more when writing works again."""
    import warnings

    args = SimpleNamespace(output_dir=str(tmp_path), report_to=[])
    callback = CompletionsLogCallback(path="/dev/full")  # every write fails with ENOSPC
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for step in (1, 2, 3):
            callback.add_rows([{"prompt": "p", "completion": "c"}, {"prompt": "q", "completion": "d"}])
            callback.on_log(args, _state(step), TrainerControl(), logs={})
        messages = [str(w.message) for w in record]
        assert len(messages) == 1
        assert "could not write the 2 completion rows of step 1 to /dev/full" in messages[0]
        assert "Training continues" in messages[0] and "OSError" in messages[0]
        assert callback.rows_lost == 6 and callback.rows_written == 0 and callback.pending == []
        callback.path = str(tmp_path / "completions.jsonl")  # the disk is back
        callback.add_rows([{"prompt": "r", "completion": "e"}])
        callback.on_log(args, _state(4), TrainerControl(), logs={})
        assert "works again at step 4; 6 completion rows (steps 1-3) are missing" in str(record[-1].message)
    assert [
        json.loads(line)["step"] for line in (tmp_path / "completions.jsonl").read_text().splitlines()
    ] == [4]


def test_grpo_completions_log_failing_to_the_end_is_reported_at_train_end(tmp_path):
    import warnings

    args = SimpleNamespace(output_dir=str(tmp_path), report_to=[])
    callback = CompletionsLogCallback(path="/dev/full")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        callback.add_rows([{"prompt": "p"}])
        callback.on_log(args, _state(1), TrainerControl(), logs={})
        callback.on_train_end(args, _state(1), TrainerControl())
    assert "1 completion row (step 1) could not be written to /dev/full" in str(record[-1].message)
