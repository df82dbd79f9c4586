"""``metrics = super().evaluate(...)`` read after the call moves to ``on_evaluate`` with ``metrics`` bound to
the event's own (``rules/_move.py``: ``RESULT_SEEN``), and the move names the two cases where that is not
the same dict. The planner's facts here; the last test runs a real Trainer to show the named difference is
exactly what happens (and nothing else): one more call with the merged metrics of a dict of eval datasets,
and the memory metrics of ``skip_memory_metrics=False``."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest
from lint_helpers import dedent, fix_text, lint_text
from trainwright_lint.rules._move import RESULT_DIFFERS

LOGGED = """
    import json

    from transformers import Trainer


    class LoggedTrainer(Trainer):
        def evaluate(self, *args, **kwargs):
            metrics = super().evaluate(*args, **kwargs)
            print("metrics", json.dumps(metrics, sort_keys=True))
{left}
            return metrics
"""


def _source(left: str = "") -> str:
    return dedent(LOGGED.replace("{left}", left))


def test_the_evaluate_result_is_read_from_on_evaluate() -> None:
    (finding,) = [f for f in lint_text(_source(), version="5.24.0") if f.code.startswith("TW20")]
    assert finding.fix is not None and RESULT_DIFFERS in finding.fix_note
    fixed = fix_text(_source(), unsafe=True, version="5.24.0").fixed.decode("utf-8")
    ast.parse(fixed)
    assert 'metrics = kwargs.get("metrics")' in fixed and "def on_evaluate(" in fixed
    assert "def evaluate(" not in fixed  # only `return metrics` was left: the override goes


def test_no_move_when_the_code_left_behind_changes_the_result() -> None:
    # the override adds a key after the event fired: the callback would log the dict without it
    changed = _source(" " * 12 + 'metrics["epoch_seen"] = self.state.epoch')
    assert not [f for f in lint_text(changed, version="5.24.0") if f.code.startswith("TW20") and f.fix]


@pytest.mark.slow
def test_the_named_difference_is_all_that_differs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("transformers")
    import torch
    from transformers import TrainingArguments

    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    torch.set_num_threads(1)
    (tmp_path / "original_eval.py").write_text(_source(), encoding="utf-8")
    fixed = fix_text(_source(), unsafe=True, version="5.24.0").fixed.decode("utf-8")
    (tmp_path / "moved_eval.py").write_text(fixed, encoding="utf-8")
    tok = build_tokenizer()
    rows = [{"input_ids": [5, 6, 7], "labels": [5, 6, 7]}, {"input_ids": [8, 9, 10], "labels": [8, 9, 10]}]
    sys.path.insert(0, str(tmp_path))
    try:
        printed = {}
        for name in ("original_eval", "moved_eval"):
            module = __import__(name)
            args = TrainingArguments(
                output_dir=str(tmp_path / name), report_to=[], use_cpu=True, per_device_eval_batch_size=1,
                skip_memory_metrics=False,
            )  # fmt: skip
            model = build_tiny_causal_lm(tok)
            trainer = module.LoggedTrainer(model=model, args=args, eval_dataset={"a": rows, "b": rows[:1]})
            trainer.evaluate()
            out = capsys.readouterr().out
            printed[name] = [
                sorted(json.loads(line.split(" ", 1)[1]))
                for line in out.splitlines()
                if line.startswith("metrics ")
            ]
    finally:
        sys.path.remove(str(tmp_path))
    original, moved = printed["original_eval"], printed["moved_eval"]
    # once per dataset, then once more with both merged: the call the move names as lost
    assert len(original) == 3 and len(moved) == 2
    plain = [{k for k in keys if "_mem_" not in k} for keys in original]
    assert plain[2] == plain[0] | plain[1]
    # per dataset the same keys, but for the memory metrics added after `on_evaluate`
    memory = [[k for k in keys if "_mem_" in k] for keys in original[:2]]
    assert all(memory), original
    assert moved == [[k for k in keys if "_mem_" not in k] for keys in original[:2]]
