"""The behaviour oracle's public API: ``run_spec(Spec(...)) -> Record`` and ``compare(a, b)``.

    from trainwright.testing.oracle import Spec, compare, run_spec

    before = run_spec(Spec(module=Path("train_before.py")))
    after = run_spec(Spec(module=Path("train_after.py"), callbacks=("StepTimerCallback()",)))
    for difference in compare(before, after):
        print(difference)        # ga2/train.steps[0].loss: 5.61 != 11.22

The user's module is imported in a fresh interpreter (``trainwright.testing._runner``) in an empty
working directory; its Trainer subclass (the one it defines, or ``spec.trainer``; plain ``Trainer``
when it defines none) trains a 1-layer Qwen2 (causal LM, or a 2-label classifier) for 4 steps with
``gradient_accumulation_steps`` 1 and 2, evaluating and saving a checkpoint every 2 steps, then
``save_model()``, and a second Trainer resumes from ``checkpoint-2``. The record holds per-step loss
and gradient norm, ``log_history``, the control flags after each step, every callback event in order,
the user's printed and logged lines (tagged with the step), a hash of the final parameters, every file
written (normalised content hash) and any exception. Time is virtual: a training forward takes 0.1 s,
an evaluation forward 0.7 s and an optimiser step 0.3 s, exactly, so timers are compared too.

``spec.release`` names a folder holding another transformers release (``releases.ensure``), put first
on the child's ``PYTHONPATH``; ``None`` runs the installed one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import trainwright
from trainwright.testing.compare import ACROSS_RELEASES, Difference, compare
from trainwright.testing.records import Phase, Record, Step, record_from_json
from trainwright.testing.releases import datasets_importable

TIMEOUT_VARIABLE = "TRAINWRIGHT_ORACLE_TIMEOUT_S"


def program_timeout() -> float:
    """Seconds one program may take: ``$TRAINWRIGHT_ORACLE_TIMEOUT_S``, else 600. A project that forks
    workers which deadlock costs this much per program, so a long matrix may want less."""
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return 600.0
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise ValueError(f"${TIMEOUT_VARIABLE} must be a positive number of seconds, not {text!r}")
    return seconds


@dataclass(frozen=True)
class Spec:
    """What to run: the user's file and how its Trainer and callbacks are put together."""

    module: Path
    trainer: str | None = None  # the Trainer subclass's name (default: the one the module defines)
    callbacks: tuple[str, ...] = ()  # expressions in the module's namespace: ``Trainer(callbacks=[...])``
    register: tuple[str, ...] = ()  # statements run with ``trainer`` bound: ``trainer.add_callback(X())``
    trainer_kwargs: str = ""  # an expression giving extra keyword arguments (``toy_tokenizer`` is bound)
    task: str = "causal-lm"  # or "classification" (2 labels, ``labels`` one int per row)
    grad_accum: tuple[int, ...] = (1, 2)
    resume: bool = True
    release: Path | None = None  # a ``pip install --target`` folder holding another transformers
    # the project ``module`` belongs to: it is imported by its dotted name, inside its package
    # (``trainwright.testing._importer``), so relative and package imports work
    root: Path | None = None
    # how long one program may train before its record says it timed out (``_deadline``)
    timeout_s: float = field(default_factory=program_timeout)


def _environment(spec: Spec) -> dict[str, str]:
    src = str(Path(trainwright.__file__).resolve().parent.parent)
    paths = [str(spec.release)] if spec.release is not None else []
    paths += [src, os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ)
    if spec.release is not None:  # 4.x loads its own checkpoints with torch.load's old default
        env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    env.update(
        PYTHONPATH=os.pathsep.join(p for p in paths if p),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        OMP_NUM_THREADS="1",
        PYTHONHASHSEED="0",
        CUDA_VISIBLE_DEVICES="",
        WANDB_DISABLED="true",
    )
    return env


def run_spec(spec: Spec) -> Record:
    """Train the program ``spec`` describes in a subprocess and return what it did.

    Never raises for the program's own failures: an exception in set-up or in a phase is part of the
    record (``Record.error`` / ``Phase.error``), as is a child that died or ran past ``timeout_s``."""
    return run_specs([spec])[0]


def run_specs(specs: Sequence[Spec]) -> list[Record]:
    """``run_spec`` for several programs, those of one release in one child process each.

    Why: importing torch and transformers takes most of a run's time on a small CI machine; the
    programs still train in their own working directories, with their own modules, seeds and models.
    What a program patches in the libraries is put back after it (``_library_guard``), and a program
    whose stand-ins a library module keeps ends its child (``_run_child``)."""
    records: dict[int, Record] = {}
    groups: dict[Path | None, list[int]] = {}
    for i, spec in enumerate(specs):
        if not Path(spec.module).is_file():
            raise FileNotFoundError(f"oracle: no such module file {spec.module}")
        groups.setdefault(spec.release, []).append(i)
    for indexes in groups.values():
        for i, record in zip(indexes, _run_child([specs[i] for i in indexes])):
            records[i] = record
    return [records[i] for i in range(len(specs))]


def _run_child(specs: Sequence[Spec]) -> list[Record]:
    """The records of ``specs``, trained in one child; where the child stops early (a program left
    library modules holding its stand-ins: ``_runner.main``), the rest in another."""
    done = _one_child(specs)
    if 0 < len(done) < len(specs):
        done += _run_child(specs[len(done) :])
    return done


def _one_child(specs: Sequence[Spec]) -> list[Record]:
    with tempfile.TemporaryDirectory(prefix="tw-oracle-") as tmp:
        work = Path(tmp) / "run"
        work.mkdir()
        data = [
            {
                **asdict(spec),
                "module": str(Path(spec.module).resolve()),
                "root": str(Path(spec.root).resolve()) if spec.root is not None else None,
                "release": None,
                "block": ["datasets"] if spec.release and not datasets_importable(spec.release) else [],
            }
            for spec in specs
        ]
        (Path(tmp) / "specs.json").write_text(json.dumps(data, default=str))
        out = Path(tmp) / "records.json"
        command = [
            sys.executable,
            "-m",
            "trainwright.testing._runner",
            str(Path(tmp) / "specs.json"),
            str(out),
        ]
        timeout = sum(s.timeout_s for s in specs)
        try:
            done = subprocess.run(
                command,
                check=False,
                cwd=work,
                env=_environment(specs[0]),
                capture_output=True,
                text=True,
                timeout=timeout,
                start_new_session=True,  # a group of its own: ``_deadline.end_group`` ends it whole
            )
        except subprocess.TimeoutExpired:
            return [Record(release="?", error=f"timed out after {timeout:.0f} s")] * len(specs)
        if not out.is_file():
            said = done.stderr.strip().splitlines()
            raised = [
                line for line in said if line[:1].isalpha() and ("Error" in line or "Exception" in line)
            ]
            tail = " | ".join((raised or said)[-1:] + said[-3:])  # the exception first: a reason's first line
            return [Record(release="?", error=f"the oracle's child exited {done.returncode}: {tail}")] * len(
                specs
            )
        return [record_from_json(r) for r in json.loads(out.read_text())]


__all__ = [
    "ACROSS_RELEASES",
    "Difference",
    "Phase",
    "Record",
    "Spec",
    "Step",
    "compare",
    "run_spec",
    "run_specs",
]
