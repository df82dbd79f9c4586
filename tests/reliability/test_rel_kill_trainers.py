"""``kill -9`` during DPO and GRPO checkpoint saves: every resume comes from the newest complete checkpoint,
and GRPO's resume stays exact when the generation buffer is intact.

The trainers attach ``CheckpointGuardCallback`` themselves (last, after their own ``on_save`` writers:
the TR-DPO reference, the GRPO buffer) and turn ``train(resume_from_checkpoint=True)`` into the newest
*complete* checkpoint (``construction.resolve_resume``). So here each process of the chain (see
``kill_harness``) calls ``trainer.train(resume_from_checkpoint=True)`` and reports, through a spy on
``transformers.Trainer.train``, the folder the trainer really resumed from; the harness checks it
against the events of the killed process, never against the code under test.

Negative controls: after every kill the test also asks plain ``get_last_checkpoint`` (what
``resume_from_checkpoint=True`` does in ``transformers.Trainer``); it lands on a torn folder in some
trials, and a real unguarded resume (``transformers.Trainer.train(trainer, resume_from_checkpoint=True)``)
from a copy of the first such output directory crashes. For GRPO, the parameter digests of every
resumed process are compared with an uninterrupted run of the same seed (distinct at every step, so a
resume from the wrong step cannot match); when a kill left a Trainer-complete folder without its
buffer, a plain resume from it is run too: it regenerates the round and drifts from the reference.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from kill_harness import EventStream, Trial, Zygote, run_kill_chain

TRIALS = 20

_PRELUDE = """
import glob
import os

import torch
import transformers
from datasets import Dataset

from kill_child import ParamDigest, SaveProbe, output_dir, report_resume
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

torch.set_num_threads(1)
# the first process of a chain has nothing to resume from (True would raise: no complete checkpoint)
resume = True if glob.glob(os.path.join(output_dir(), "checkpoint-*")) else None
tokenizer = build_tokenizer()
"""

_TRAIN = """
trainer.add_callback(ParamDigest())  # before SaveProbe: digesting is done before SAVING starts the clock
trainer.add_callback(SaveProbe())  # after the trainer's guard: SAVED means the marker is written
report_resume()
if UNGUARDED:  # the control: what transformers.Trainer does with True (get_last_checkpoint, torn or not)
    transformers.Trainer.train(trainer, resume_from_checkpoint=True)
else:
    trainer.train(resume_from_checkpoint=resume)
"""

DPO_CHILD = (
    _PRELUDE
    + """
from trainwright.trainers.dpo.trainer import DPOTrainer
from trainwright.trainers.dpo.config import DPOConfig

pairs = Dataset.from_list(
    [{"prompt": f"Question {i}: is {chr(97 + i % 26)} good?", "chosen": " yes", "rejected": " no"} for i in range(32)]
)
args = DPOConfig(
    output_dir=output_dir(), per_device_train_batch_size=2, max_steps=1000, SAVE_ARGS,
    logging_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True, seed=0, learning_rate=1e-3,
    # TR-DPO: the blended reference is written by a trainer-owned on_save writer (reference_sync.pt),
    # which the guard must wait for
    sync_ref_model=True, ref_model_sync_steps=2, ref_model_mixup_alpha=0.5,
)
trainer = DPOTrainer(
    build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2),
    args=args, train_dataset=pairs, processing_class=tokenizer,
)
"""
    + _TRAIN
)

GRPO_CHILD = (
    _PRELUDE
    + """
from trainwright.trainers.grpo.trainer import GRPOTrainer
from trainwright.trainers.grpo.config import GRPOConfig


def reward(completion_ids, **kwargs):  # dense, so that every step has a gradient
    return [float(sum(ids) % 7) for ids in completion_ids]


args = GRPOConfig(
    output_dir=output_dir(), per_device_train_batch_size=2, num_generations=2,
    steps_per_generation=4,  # 3 of 4 checkpoints fall inside a generation round: the buffer matters
    max_steps=1000, SAVE_ARGS, max_completion_length=4, learning_rate=5e-3,
    logging_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True, seed=11,
)
trainer = GRPOTrainer(
    build_tiny_causal_lm(tokenizer, hidden_size=16, num_layers=1, num_heads=2, seed=1), reward,
    args=args, train_dataset=Dataset.from_dict({"prompt": [f"Say {i}:" for i in range(24)]}),
    processing_class=tokenizer,
)
"""
    + _TRAIN
)

CHAIN_SAVES = "save_steps=1, save_total_limit=2"


def child(script: str, save_args: str = CHAIN_SAVES, unguarded: bool = False) -> str:
    return script.replace("SAVE_ARGS", save_args).replace("UNGUARDED", str(unguarded))


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------


def run_to_exit(
    zygote: Zygote,
    script: str,
    output_dir: Path,
    workdir: Path,
    name: str,
    stop_after: int | None,
    timeout: float = 120.0,
) -> tuple[dict, list[tuple[str, str]], str]:
    """One child run to its end: ``(exit status, its events, its log)``."""
    events = EventStream(workdir / f"{name}.fifo")
    log = workdir / f"{name}.log"
    pid = zygote.spawn(script, events.path, output_dir, log, stop_after)
    seen: list[tuple[str, str]] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            event = events.next(0.5)
            if event is not None:
                seen.append(event[:2])
                continue
            status = zygote.poll(pid)
            if not status["running"]:
                seen += [e[:2] for e in events.drain()]
                return status, seen, log.read_text(errors="replace")
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                zygote.wait(pid)
                raise AssertionError(f"{name} did not finish in {timeout}s:\n{log.read_text()[-3000:]}")
    finally:
        events.close()


def missing_files(trial: Trial, output_dir: Path) -> str:
    """What the killed save left out, against a complete checkpoint's marker (its list of files)."""
    from trainwright.callbacks.checkpoint_guard import COMPLETE_MARKER, marker_problem

    folder = output_dir / f"checkpoint-{trial.killed_step}"
    complete = [f for f in output_dir.glob("checkpoint-*") if marker_problem(f) is None]
    if not folder.is_dir() or not complete:
        return "(folder absent)" if not folder.is_dir() else "(no complete sibling to compare with)"
    wanted = set(json.loads((complete[0] / COMPLETE_MARKER).read_text())["files"]) | {COMPLETE_MARKER}
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    temporary = sorted(name for name in present - wanted if name.endswith(".tmp"))
    missing = sorted(wanted - present)
    return f"missing {missing}" + (f", temporary {temporary}" if temporary else "")


def rejected_by_trainer(trial: Trial) -> bool:
    return ": rejected by Trainer" in trial.unguarded


class UnguardedControl:
    """After each kill: keep a copy of the first output directory in which plain ``get_last_checkpoint``
    picks a folder that ``wanted`` accepts (by default one the Trainer cannot resume from); later,
    :meth:`assert_crashes` resumes from it the way ``transformers.Trainer`` does."""

    def __init__(
        self, workdir: Path, name: str = "unguarded", wanted: Callable[[Trial], bool] = rejected_by_trainer
    ):
        self.workdir, self.name, self.wanted = workdir, name, wanted
        self.snapshot: Path | None = None
        self.chosen = ""

    def __call__(self, trial: Trial, output_dir: Path) -> None:
        if self.snapshot is None and self.wanted(trial):
            self.snapshot = self.workdir / f"{self.name}-run"
            shutil.copytree(output_dir, self.snapshot)
            self.chosen = trial.unguarded

    def resume(
        self, zygote: Zygote, script: str, stop_after: int = 1
    ) -> tuple[dict, list[tuple[str, str]], str]:
        """The unguarded resume in the copy: ``(exit status, events, log)``; checks it took the chosen folder."""
        assert self.snapshot is not None
        status, events, log = run_to_exit(
            zygote,
            child(script, unguarded=True),
            self.snapshot,
            self.workdir,
            self.name,
            stop_after=stop_after,
        )
        resumed = [value for kind, value in events if kind == "RESUMED"]
        assert resumed and Path(resumed[0]).name == self.chosen.split(":")[0], (
            resumed,
            self.chosen,
            log[-3000:],
        )
        return status, events, log

    def assert_crashes(self, zygote: Zygote, script: str, report) -> str:
        # on a torn folder: how often the Trainer's own resume would have gone wrong
        landed = [
            t for t in report.trials if t.unguarded != "None" and not t.unguarded.endswith(": complete")
        ]
        assert landed, f"get_last_checkpoint never picked a torn folder:\n{report.summary()}"
        assert self.snapshot is not None, f"no kill left a folder the Trainer rejects:\n{report.summary()}"
        status, events, log = self.resume(zygote, script)
        assert status["code"] not in (0, None), (
            f"the unguarded resume from {self.chosen} did not fail:\n{log[-3000:]}"
        )
        assert "Traceback" in log and "SAVED" not in [kind for kind, _ in events], log[-3000:]
        error = [line for line in log.splitlines() if line and not line.startswith(" ")][-1]
        return (
            f"get_last_checkpoint picked a torn folder in {len(landed)} of {len(report.trials)} trials; "
            f"resuming from {self.chosen} crashed: {error}"
        )


def process_logs(workdir: Path) -> dict[int, str]:
    return {int(p.stem.split("-")[1]): p.read_text(errors="replace") for p in workdir.glob("child-*.log")}


def torn_count(report) -> int:
    return len(report.trials) - report.count("complete") - report.count("absent")


def digests(events: list[tuple[str, str]]) -> list[tuple[int, str]]:
    """``(step, parameter digest)`` of the ``PARAMS`` events (``kill_child.ParamDigest``)."""
    return [(int(value.split(":")[0]), value.split(":")[1]) for kind, value in events if kind == "PARAMS"]


def retrained_steps(report) -> str:
    """Steps that a killed process and the one resumed after it both trained: do their parameters agree?"""
    seen: dict[int, list[str]] = {}
    for events in report.extra.values():
        for step, digest in digests(events):
            seen.setdefault(step, []).append(digest)
    twice = [step for step, found in seen.items() if len(found) > 1]
    differ = sorted(step for step in twice if len(set(seen[step])) > 1)
    return f"{len(twice)} steps trained by two processes, {len(differ)} with different parameters {differ}"


# --------------------------------------------------------------------------------------------------
# DPO
# --------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_dpo_survives_kills_during_saves(zygote, tmp_path):
    from trainwright.callbacks.checkpoint_guard import COMPLETE_MARKER, marker_problem

    control = UnguardedControl(tmp_path)
    torn_files: dict[int, str] = {}

    def on_kill(trial: Trial, output_dir: Path) -> None:
        control(trial, output_dir)
        torn_files[trial.index] = missing_files(trial, output_dir)
        for folder in output_dir.glob("checkpoint-*"):  # the guard marked it after the TR-DPO writer
            if marker_problem(folder) is None:
                listed = json.loads((folder / COMPLETE_MARKER).read_text())["files"]
                assert "reference_sync.pt" in listed, f"{folder} is marked without the TR-DPO reference"

    report = run_kill_chain(zygote, child(DPO_CHILD), tmp_path, trials=TRIALS, seed=5, on_kill=on_kill)
    print(report.summary())
    print("\n".join(f"  #{i:2d} {report.trials[i].left[:30]}: {torn_files[i]}" for i in sorted(torn_files)))
    assert len(report.trials) == TRIALS
    assert torn_count(report) >= TRIALS // 4, report.summary()
    for index, log in process_logs(tmp_path).items():  # every resume found its blended reference
        assert "TR-DPO reference (" not in log, f"process {index}:\n{log[-3000:]}"
    print(f"DPO: {retrained_steps(report)}")  # informative: exactness is only required of GRPO here
    print(control.assert_crashes(zygote, DPO_CHILD, report))


# --------------------------------------------------------------------------------------------------
# GRPO
# --------------------------------------------------------------------------------------------------


def buffer_state(folder: Path) -> str:
    """The rank-0 buffer file of ``folder``: "intact <round key>", "missing" or "torn: <why>"."""
    from trainwright.trainers.grpo.buffer import BUFFER_FILE, RoundBuffer

    if not (folder / BUFFER_FILE.format(rank=0)).is_file():
        return "missing"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        buffer = RoundBuffer.load(str(folder), 0)
    if buffer is None or not buffer.micro_batches:
        return f"torn: {[str(w.message)[:120] for w in caught]}"
    return f"intact {buffer.key}"


@pytest.mark.slow
def test_grpo_survives_kills_during_saves_and_resumes_exactly(zygote, tmp_path):
    control = UnguardedControl(tmp_path)
    torn_files: dict[int, str] = {}
    buffers: dict[int, dict[int, str]] = {}  # trial → checkpoint step → its buffer, right after the kill

    def silent_loss(trial: Trial) -> bool:
        """get_last_checkpoint picks a folder the Trainer resumes from, but inside a round and without
        the buffer: the plain resume does not crash, it regenerates the round."""
        step = trial.killed_step
        return (
            trial.unguarded == f"checkpoint-{step}: unmarked, Trainer-complete"
            and buffers[trial.index].get(step) == "missing"
            and step % 4 != 0  # steps_per_generation=4: step+1 is not the first of a round
        )

    lost = UnguardedControl(tmp_path, "buffer-lost", silent_loss)

    def on_kill(trial: Trial, output_dir: Path) -> None:
        torn_files[trial.index] = missing_files(trial, output_dir)
        buffers[trial.index] = {
            int(folder.name.split("-")[1]): buffer_state(folder) for folder in output_dir.glob("checkpoint-*")
        }
        control(trial, output_dir)
        lost(trial, output_dir)

    report = run_kill_chain(zygote, child(GRPO_CHILD), tmp_path, trials=TRIALS, seed=6, on_kill=on_kill)
    print(report.summary())
    print("\n".join(f"  #{i:2d} {report.trials[i].left[:30]}: {torn_files[i]}" for i in sorted(torn_files)))
    assert len(report.trials) == TRIALS
    assert torn_count(report) >= TRIALS // 4, report.summary()

    # the uninterrupted run: same script and seed, no saves, as far as the chain got
    trail = {index: digests(events) for index, events in report.extra.items()}
    last_step = max(step for steps in trail.values() for step, _ in steps)
    status, events, log = run_to_exit(
        zygote,
        child(GRPO_CHILD, save_args='save_strategy="no"'),
        tmp_path / "reference",
        tmp_path,
        "reference",
        stop_after=last_step,
    )
    assert status["code"] == 0, log[-3000:]
    reference = dict(digests(events))
    assert sorted(reference) == list(range(1, last_step + 1))
    assert len(set(reference.values())) == last_step, (
        "two steps with the same parameters: digests prove nothing"
    )
    assert trail[0] and all(reference[s] == d for s, d in trail[0]), (
        "the first process is not the reference run"
    )

    # every resumed process whose checkpoints all had an intact buffer continues bit-identically
    logs = process_logs(tmp_path)
    exact, chain_intact, rows = 0, True, []
    for index in range(1, TRIALS + 1):
        resumed_from = report.trials[index - 1].resumed_from
        state = buffers[index - 1].get(resumed_from, "missing")  # type: ignore[arg-type]
        chain_intact = chain_intact and state.startswith("intact")
        rows.append(f"  process {index:2d} resumed from {resumed_from} (buffer {state})")
        if not chain_intact:
            continue
        wrong = [step for step, digest in trail.get(index, []) if reference[step] != digest]
        assert trail.get(index) and not wrong, (
            f"process {index} resumed from checkpoint-{resumed_from} with an intact buffer but its parameters "
            f"differ from the uninterrupted run at steps {wrong}\n"
            + "\n".join(rows)
            + f"\n{logs[index][-3000:]}"
        )
        assert "regenerating this round" not in logs[index], logs[index][-3000:]
        exact += 1
    print("\n".join(rows))
    print(f"GRPO: {exact} of {TRIALS} resumed processes bit-identical to the uninterrupted run")
    print(f"GRPO: {retrained_steps(report)}")
    assert exact > 0
    print(control.assert_crashes(zygote, GRPO_CHILD, report))

    # when the kills left one: the plain resume from a Trainer-complete folder without the buffer runs,
    # but regenerates the round (the guard's marker is what keeps such folders out of the resume)
    if lost.snapshot is not None:
        status, events, log = lost.resume(zygote, GRPO_CHILD, stop_after=2)
        assert status["code"] == 0, log[-3000:]
        assert "regenerating this round" in log, log[-3000:]
        steps = [(s, d) for s, d in digests(events) if s in reference]
        differ = [s for s, d in steps if reference[s] != d]
        print(
            f"plain resume from {lost.chosen} (no buffer): regenerated the round; parameters differ from the "
            f"uninterrupted run at steps {differ} of {[s for s, _ in steps]}"
        )
    else:
        print("no kill left a Trainer-complete folder without its buffer inside a round")
