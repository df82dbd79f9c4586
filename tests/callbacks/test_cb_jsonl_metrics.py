"""JSONLMetricsCallback: the JSONL file mirrors state.log_history, reads as one run after resume, and
I/O errors or a torn last line never stop training."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trainwright.callbacks import JSONLMetricsCallback, StepTimerCallback, attach


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_log_line_is_written(make_trainer, tmp_path):
    out = tmp_path / "jsonl"
    trainer = make_trainer(
        callbacks=[JSONLMetricsCallback()],
        output_dir=out,
        with_eval=True,
        max_steps=4,
        eval_strategy="steps",
        eval_steps=2,
    )
    attach(trainer, StepTimerCallback())  # values it adds are in the file too: it runs before the writer
    trainer.train()
    lines = _lines(out / "metrics.jsonl")
    assert len(lines) == len(trainer.state.log_history)  # 4 training + 2 eval + 1 summary
    for line, entry in zip(lines, trainer.state.log_history):
        assert line.pop("time") > 0
        assert line == entry
    assert sum("eval_loss" in line for line in lines) == 2
    assert all("perf/step_time_s" in line for line in lines if "loss" in line)


def test_non_finite_values_stay_strict_json(make_trainer, tmp_path):
    import torch
    from transformers import TrainerCallback

    class Poison(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            with torch.no_grad():
                model.lm_head.weight.fill_(float("nan"))

    path = tmp_path / "sub" / "m.jsonl"
    trainer = make_trainer(
        callbacks=[Poison(), JSONLMetricsCallback(path)], max_steps=2, logging_nan_inf_filter=False
    )
    trainer.train()
    raw = path.read_text()
    assert "NaN" not in raw
    assert _lines(path)[1]["loss"] == "nan"


def test_resume_drops_the_abandoned_tail(make_trainer, tmp_path):
    out = tmp_path / "resume"
    make_trainer(
        callbacks=[JSONLMetricsCallback()], output_dir=out, max_steps=4, save_strategy="steps", save_steps=2
    ).train()
    assert [line["step"] for line in _lines(out / "metrics.jsonl")] == [1, 2, 3, 4, 4]  # + summary
    trainer = make_trainer(callbacks=[JSONLMetricsCallback()], output_dir=out, max_steps=4)
    trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    steps = [line["step"] for line in _lines(out / "metrics.jsonl")]
    assert steps == [1, 2, 3, 4, 4]
    assert "train_runtime" in _lines(out / "metrics.jsonl")[-1]


def test_bad_path_type():
    with pytest.raises(TypeError, match="path must be a str or Path, got int"):
        JSONLMetricsCallback(3)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------
# I/O failures never stop training; a torn last line never blocks a resume.
# Root ignores permissions, so the failures come from paths that fail for root too: a path under a
# regular file (ENOTDIR / EEXIST) and /dev/full (every write: ENOSPC, the full-disk error).
# ---------------------------------------------------------------------------------------------------


def _messages(record, needle):
    return [str(w.message) for w in record if needle in str(w.message)]


def test_path_under_a_file_warns_and_training_finishes(make_trainer, tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")
    path = blocker / "metrics.jsonl"
    callback = JSONLMetricsCallback(path)
    trainer = make_trainer(callbacks=[callback], max_steps=3)
    with pytest.warns(UserWarning) as record:
        trainer.train()
    assert trainer.state.global_step == 3
    assert callback.lines_lost == 4  # 3 training lines + the summary
    assert len(_messages(record, f"cannot prepare {path}")) == 1
    first = _messages(record, "could not write the log line")
    assert len(first) == 1  # later failures of the streak are counted, not repeated
    assert f"step 1 to {path}" in first[0]
    assert "FileExistsError" in first[0] or "NotADirectoryError" in first[0]
    assert "lost from the file" in first[0] and "still in trainer.state.log_history" in first[0]
    (end,) = _messages(record, "until the end of training")
    assert "4 log lines (steps 1-3) could not be written" in end
    assert blocker.read_text() == "not a folder"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_full_disk_warns_and_training_finishes(make_trainer):
    callback = JSONLMetricsCallback("/dev/full")  # every write fails with ENOSPC, for root too
    trainer = make_trainer(callbacks=[callback], max_steps=2)
    with pytest.warns(UserWarning) as record:
        trainer.train()
    assert trainer.state.global_step == 2
    assert callback.lines_lost == 3
    (first,) = _messages(record, "could not write the log line of step 1 to /dev/full")
    assert "No space left on device" in first
    assert len(_messages(record, "3 log lines (steps 1-2) could not be written to /dev/full")) == 1


def test_writing_resumes_when_the_path_works_again(make_trainer, tmp_path):
    from cb_support import Recorder

    blocker = tmp_path / "logs"
    blocker.write_text("in the way")  # "logs" is a file: the folder cannot be created

    def clear_the_way(args, state, control, **kwargs):
        if state.global_step == 3 and blocker.is_file():
            blocker.unlink()

    callback = JSONLMetricsCallback(blocker / "metrics.jsonl")
    trainer = make_trainer(callbacks=[Recorder("on_step_end", clear_the_way), callback], max_steps=4)
    with pytest.warns(UserWarning) as record:
        trainer.train()
    (again,) = _messages(record, "works again")
    assert "works again at step 3; 2 log lines (steps 1-2) are missing from the file" in again
    assert not _messages(record, "until the end of training")
    assert [line["step"] for line in _lines(blocker / "metrics.jsonl")] == [3, 4, 4]
    assert callback.lines_lost == 2


@pytest.mark.parametrize("truncate_on_resume", [True, False])
def test_torn_last_line_is_ignored_on_resume(make_trainer, tmp_path, truncate_on_resume):
    out = tmp_path / "torn"
    make_trainer(
        callbacks=[JSONLMetricsCallback()], output_dir=out, max_steps=4, save_strategy="steps", save_steps=2
    ).train()
    path = out / "metrics.jsonl"
    with path.open("ab") as handle:  # what a kill in the middle of a write leaves
        handle.write(b'{"step": 4, "epoch": 0.5, "loss": 3.1')
    trainer = make_trainer(
        callbacks=[JSONLMetricsCallback(truncate_on_resume=truncate_on_resume)], output_dir=out, max_steps=4
    )
    with pytest.warns(UserWarning, match=r"the last line of .*metrics.jsonl was torn .* is ignored"):
        trainer.train(resume_from_checkpoint=str(out / "checkpoint-2"))
    steps = [line["step"] for line in _lines(path)]  # every line parses
    assert steps == ([1, 2, 3, 4, 4] if truncate_on_resume else [1, 2, 3, 4, 4, 3, 4, 4])
    assert not list(out.glob(".metrics.jsonl.*.tmp"))  # the atomic rewrite left no temporary file


def test_whole_record_without_newline_is_kept(make_trainer, tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_bytes(b'{"step": 0, "note": "earlier"}\n{"step": 0, "note": "no newline"}')
    make_trainer(callbacks=[JSONLMetricsCallback(path)], max_steps=1).train()
    notes = [line.get("note") for line in _lines(path)]
    assert notes[:2] == ["earlier", "no newline"] and len(notes) == 4


def test_garbage_lines_are_dropped_on_resume(make_trainer, tmp_path):
    out = tmp_path / "garbage"
    make_trainer(
        callbacks=[JSONLMetricsCallback()], output_dir=out, max_steps=2, save_strategy="steps", save_steps=1
    ).train()
    path = out / "metrics.jsonl"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(lines[0] + b"\n" + b'{"step": 1, "lo{"step": 2}\n' + b"\n".join(lines[1:]))
    trainer = make_trainer(callbacks=[JSONLMetricsCallback()], output_dir=out, max_steps=2)
    with pytest.warns(UserWarning, match=r"line 2 of .*metrics.jsonl is not a JSON object and is dropped"):
        trainer.train(resume_from_checkpoint=str(out / "checkpoint-1"))
    assert [line["step"] for line in _lines(path)] == [1, 2, 2]


def test_a_failed_append_is_cut_back(tmp_path):
    """A real partial write: RLIMIT_FSIZE lets ``write`` store 50 bytes, then fails with EFBIG."""
    pytest.importorskip("resource")
    path = tmp_path / "m.jsonl"
    path.write_bytes(b'{"step": 1}\n')
    io_module = Path(__file__).resolve().parents[2] / "src" / "trainwright" / "storage" / "atomic.py"
    script = f"""
import importlib.util, os, resource
spec = importlib.util.spec_from_file_location("tw_io", {str(io_module)!r})
io = importlib.util.module_from_spec(spec); spec.loader.exec_module(io)
path = {str(path)!r}
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + 50, resource.RLIM_INFINITY))
try:
    io.append_bytes(path, b'{{"step": 2, "pad": "' + b"x" * 200 + b'"}}\\n')
except OSError as error:
    print("failed", error.errno)
"""
    result = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == f"failed {errno.EFBIG}", result.stderr
    assert path.read_bytes() == b'{"step": 1}\n'  # the 50 bytes that made it were cut back
