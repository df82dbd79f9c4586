"""The oracle catches each planted difference, and finds none between two spellings of one program."""

from __future__ import annotations

from trainwright.testing.oracle import Record, compare


def _where(a: Record, b: Record) -> list[str]:
    return [d.where for d in compare(a, b)]


def test_reference_program_trains_and_is_recorded(oracle_records: dict[str, Record]) -> None:
    base = oracle_records["base"]
    assert base.error is None and not base.failed, base
    assert [p.name for p in base.phases] == ["ga1/train", "ga1/resume", "ga2/train", "ga2/resume"]
    train = base.phase("ga2/train")
    assert train is not None
    assert [s.step for s in train.steps] == [1, 2, 3, 4]
    assert all(s.loss and s.grad_norm for s in train.steps)
    assert train.controls == ("1:1,0,0,0", "2:1,1,1,0", "3:1,0,0,0", "4:1,1,1,1")
    assert train.events.index("on_evaluate@2") < train.events.index("on_save@2")
    # Virtual time: one training forward is 0.1 s, two micro-batches per step at GA=2.
    assert train.lines.count("@0 micro-batch took 0.1s") == 2
    assert "@2 evaluating at step 2" in train.lines
    assert "ga2/train/notes.txt" in base.files and "ga2/train/checkpoint-2/notes.txt" in base.files
    resumed = base.phase("ga2/resume")
    assert resumed is not None and resumed.events[0] == "on_train_begin@2"
    assert resumed.params_hash == train.params_hash  # resuming from step 2 ends where training did


def test_same_behaviour_written_differently_is_equal(oracle_records: dict[str, Record]) -> None:
    assert compare(oracle_records["base"], oracle_records["same"]) == []


def test_catches_changed_loss_scaling(oracle_records: dict[str, Record]) -> None:
    differences = compare(oracle_records["base"], oracle_records["loss_scaling"])
    where = [d.where for d in differences]
    assert any(w.startswith("ga2/train.steps[0].loss") for w in where), where
    assert not any(w.startswith("ga1/train.steps") for w in where), where  # GA=1: same scaling
    loss = next(d for d in differences if d.where == "ga2/train.steps[0].loss")
    assert abs(loss.b / loss.a - 2) < 0.05  # the accumulation division skipped: twice the loss


def test_catches_print_moved_to_other_steps(oracle_records: dict[str, Record]) -> None:
    where = _where(oracle_records["base"], oracle_records["moved_print"])
    assert any(w.startswith("ga1/train.lines") for w in where), where
    assert not any(".steps" in w or w.startswith("files") for w in where), where


def test_catches_timer_measuring_another_span(oracle_records: dict[str, Record]) -> None:
    differences = compare(oracle_records["base"], oracle_records["timer_span"])
    lines = [d for d in differences if d.where.startswith("ga2/train.lines")]
    assert lines, differences
    assert "micro-batch took 0.5s" in str(lines)  # two forwards and the optimiser step, not one forward
    assert not any(".steps" in d.where for d in differences)


def test_catches_file_missing_after_final_save(oracle_records: dict[str, Record]) -> None:
    where = _where(oracle_records["base"], oracle_records["final_save"])
    assert "files.ga1/train/notes.txt" in where, where
    assert not any("checkpoint-2/notes.txt" in w for w in where)


def test_catches_callback_that_crashes_when_registered(oracle_records: dict[str, Record]) -> None:
    crash = oracle_records["crash"]
    train = crash.phase("ga1/train")
    assert train is not None and train.error is not None and train.error.startswith("AttributeError")
    assert "ga1/train.error" in _where(oracle_records["base"], crash)


def test_catches_a_record_rebuilt_from_logs_a_callback_before_it_changed(
    oracle_records: dict[str, Record],
) -> None:
    kept, rebuilt = oracle_records["log_record_kept"], oracle_records["log_record_recomputed"]
    assert kept.error is None and rebuilt.error is None, (kept.error, rebuilt.error)
    where = _where(kept, rebuilt)
    assert "files.ga1/train/log.jsonl" in where, where  # the summary's `total_flos`, popped by the printer
    assert not any(".steps" in w or "log_history" in w for w in where), where
