"""The oracle's child process: train a user's Trainer on a tiny model and write what happened as JSON.

Run as ``python -m trainwright.testing._runner SPEC.json OUT.json`` in an empty working directory (the
parent, ``trainwright.testing.oracle``, does this). Every output directory is relative to that
directory, so paths written into checkpoints are the same from run to run.

Per ``gradient_accumulation_steps`` value of the spec: a ``train`` phase (4 optimiser steps, logs every
step, evaluation and a checkpoint every 2 steps, then ``trainer.save_model()``) and a ``resume`` phase
(a fresh model and Trainer resumed from ``checkpoint-2``). Known delays are injected on a virtual clock
(``_clock``) in the model's forward and the optimiser step, so timers read exact, comparable spans.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import io
import json
import logging
import os
import re
import sys
import traceback
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.version import Version

from trainwright.testing import _clock, _deadline, companions

CLOCK = _clock.VirtualClock()
_clock.install(CLOCK)  # before torch, transformers and the user's module bind the clocks
companions.on_path()  # packages a project imports that the venv lacks, last on the path

import torch

from trainwright.testing import (
    _construct,
    _digest,
    _importer,
    _library_guard,
    _project_args,
    families,
    reasons,
    standins,
)

MAX_STEPS = 4
EVERY = 2  # evaluation and checkpoint interval
_LIBRARY_LOGGERS = (
    "transformers",
    "torch",
    "accelerate",
    "huggingface_hub",
    "urllib3",
    "filelock",
    "py.warnings",
)


class Lines(io.TextIOBase):
    """Collects printed text and log messages as ``@step text`` lines, normalised."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.trainer: Any = None  # the step is read from its state when a line is written
        self._partial = ""

    @property
    def step(self) -> int:
        state = getattr(self.trainer, "state", None)
        return int(getattr(state, "global_step", 0) or 0)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._partial += text
        *done, self._partial = self._partial.split("\n")
        self.lines += [f"@{self.step} {_digest.normalise_text(line)}" for line in done if line.strip()]
        return len(text)

    def take(self) -> list[str]:
        self.write("\n")
        out, self.lines = self.lines, []
        return out


class _LogHandler(logging.Handler):
    def __init__(self, lines: Lines) -> None:
        super().__init__(logging.NOTSET)
        self.sink = lines

    def emit(self, record: logging.LogRecord) -> None:
        if not record.name.startswith(_LIBRARY_LOGGERS):
            self.sink.write(f"[{record.levelname}] {record.getMessage()}\n")


def _error(exc: BaseException) -> str:
    return reasons.error_line(exc, _digest.normalise_text)


def _failed(error: str) -> dict[str, Any]:
    """The record of a program that never got to train."""
    return {"release": "?", "phases": [], "files": {}, "error": error}


def _recorder(transformers: Any, phase: dict[str, Any], lines: Lines) -> Any:
    """A callback (registered last) that records every event, and the control flags after each step."""

    def event(name: str) -> Any:
        def handler(self: Any, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            phase["events"].append(f"{name}@{state.global_step}")
            if name == "on_step_end":
                flags = ("should_log", "should_evaluate", "should_save", "should_training_stop")
                phase["controls"].append(
                    f"{state.global_step}:" + ",".join(str(int(getattr(control, f))) for f in flags)
                )

        return handler

    names = [n for n in dir(transformers.TrainerCallback) if n.startswith("on_")]
    return type("OracleRecorder", (transformers.TrainerCallback,), {n: event(n) for n in names})()


def _block(transformers: Any, names: Any) -> None:
    """Hide optional packages the release cannot load (``datasets`` built for a newer
    huggingface_hub): transformers then runs as if they were not installed."""
    for name in names:
        sys.modules[name] = None  # type: ignore[assignment]
        flags = transformers.utils.import_utils
        if hasattr(flags, f"_{name}_available"):
            setattr(flags, f"_{name}_available", False)


def _bare(cls: Any) -> bool:
    """Whether ``cls()`` binds: its ``__init__`` has no required parameter."""
    try:
        inspect.signature(cls).bind()
    except TypeError:
        return False
    return True


def _trl_before(version: str) -> bool:
    """Whether the TRL this child imports is older than ``version`` (False without TRL). Read from
    the first ``trl-*.dist-info`` on the path: the release folder's, before the venv's."""
    try:
        return Version(metadata.version("trl")) < Version(version)
    except metadata.PackageNotFoundError:
        return False


class Setup:
    """The user's module, the transformers release and the tiny model's ingredients (built once)."""

    def __init__(self, spec: dict[str, Any], module_name: str, stand_ins: standins.StandIns) -> None:
        import transformers

        from trainwright.toy import build_tokenizer  # its extras check runs before ``_block``

        _block(transformers, spec.get("block", ()))
        remember_library_lists(transformers)
        self.spec = spec
        self.transformers = transformers
        path = Path(spec["module"])
        if spec.get("root"):  # inside its project: relative and package imports work
            root = Path(spec["root"])
            self.module = stand_ins.importing(lambda: _importer.import_in_project(path, root))
        else:
            self.module = stand_ins.importing(lambda: _importer.import_file(path, module_name))
        self.trainer_class = self._trainer_class(spec.get("trainer"))
        self.tokenizer = build_tokenizer()
        self.arguments = _construct.arguments_class(self.trainer_class, transformers.TrainingArguments)
        self.family = families.detect(self.trainer_class, self.arguments)
        if self.family.arguments and self.arguments is transformers.TrainingArguments:
            self.arguments = getattr(transformers, self.family.arguments)
        self.own_arguments = ""  # the project's own arguments class, when the Trainer reads its fields
        if spec.get("root"):
            found = _project_args.project_arguments(self.module, Path(spec["root"]), self.arguments)
            if found is not None:
                self.arguments, self.own_arguments = found
        if self.family.trl:  # TRL's trainers tokenise and collate their own columns
            self.train_rows, self.eval_rows = families.datasets_for(self.family, 12, 4)
            if self.family is families.REWARD and _trl_before("0.12"):  # ... from 0.12 on
                self.train_rows, self.eval_rows = (
                    families.tokenised_pairs(rows, self.tokenizer)
                    for rows in (self.train_rows, self.eval_rows)
                )
            return
        gen = torch.Generator().manual_seed(0)
        n, length = 16, 8
        ids = torch.randint(SPECIAL, len(self.tokenizer), (n, length), generator=gen)
        if spec.get("task") == "classification":
            labels = [torch.tensor(i % 2) for i in range(n)]
        else:
            labels = list(ids)
        self.train_rows = [
            {"input_ids": ids[i], "attention_mask": torch.ones(length, dtype=torch.long), "labels": labels[i]}
            for i in range(12)
        ]
        self.eval_rows = [
            {"input_ids": ids[i], "attention_mask": torch.ones(length, dtype=torch.long), "labels": labels[i]}
            for i in range(12, n)
        ]

    def _trainer_class(self, name: str | None) -> Any:
        if name:
            return getattr(self.module, name)
        base = self.transformers.Trainer
        own = [
            v
            for v in vars(self.module).values()
            if isinstance(v, type) and issubclass(v, base) and v.__module__ == self.module.__name__
        ]
        leaves = [c for c in own if not any(o is not c and issubclass(o, c) for o in own)]
        if len(leaves) > 1:
            raise ValueError(
                f"several Trainer subclasses ({', '.join(c.__name__ for c in leaves)}): name one"
            )
        return leaves[0] if leaves else base

    def callbacks(self) -> list[Any]:
        """The spec's callbacks; ``"*"`` is every ``TrainerCallback`` subclass the module defines that
        can be constructed without arguments (one that takes the trainer is registered by its code)."""
        namespace = vars(self.module)
        out = []
        for expression in self.spec.get("callbacks", ()):
            if expression != "*":
                out.append(eval(expression, namespace))
                continue
            base = self.transformers.TrainerCallback
            out += [
                v()
                for v in namespace.values()
                if isinstance(v, type)
                and issubclass(v, base)
                and v.__module__ == self.module.__name__
                and _bare(v)
            ]
        return out

    def model(self, seed: int = 0) -> Any:
        t = self.transformers
        t.set_seed(seed)
        config = t.Qwen2Config(
            vocab_size=len(self.tokenizer),
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=2,
            max_position_embeddings=64,
            pad_token_id=self.tokenizer.pad_token_id,
            tie_word_embeddings=False,
            num_labels=self.family.labels or 2,
        )
        if self.spec.get("task") == "classification" or self.family.labels:
            model = t.Qwen2ForSequenceClassification(config)
        else:
            model = t.Qwen2ForCausalLM(config)
        model.register_forward_pre_hook(
            lambda m, a: CLOCK.advance(_clock.FORWARD_S if m.training else _clock.EVAL_FORWARD_S)
        )
        return model


SPECIAL = 4  # token ids below this are the toy tokenizer's special tokens


def _arguments(setup: Setup, output_dir: str, ga: int) -> Any:
    """The run's arguments, as the ``TrainingArguments`` subclass the Trainer's ``__init__`` names
    (TRL's ``DPOConfig``), else ``TrainingArguments``."""
    t = setup.transformers
    fields = t.TrainingArguments.__dataclass_fields__
    eval_key = "eval_strategy" if "eval_strategy" in fields else "evaluation_strategy"
    values = dict(
        output_dir=output_dir,
        max_steps=MAX_STEPS,
        per_device_train_batch_size=2,
        per_device_eval_batch_size=4,
        gradient_accumulation_steps=ga,
        learning_rate=1e-2,
        logging_steps=1,
        save_strategy="steps",
        save_steps=EVERY,
        eval_steps=EVERY,
        report_to=[],
        seed=0,
        data_seed=0,
        use_cpu=True,
        disable_tqdm=True,
        dataloader_num_workers=0,
        **{eval_key: "steps"},
        **setup.family.settings,
    )
    return _construct.build_arguments(setup.arguments, values)


def _tokenizer_keyword(cls: Any, base: Any) -> str:
    """``processing_class`` or ``tokenizer``: the one the class's own ``__init__`` names (a subclass
    written for 4.x that takes ``tokenizer`` and passes it on), else the one the Trainer takes."""
    for init in (cls.__init__, base.__init__):
        params = inspect.signature(init).parameters
        for name in ("processing_class", "tokenizer"):
            if name in params:
                return name
    return "tokenizer"


# the Trainer refusing a second processing class: the subclass passes its own on (``super().__init__(
# *args, tokenizer=tok, **kwargs)``) and the oracle passed one too
_TWICE = re.compile(
    r"multiple values for keyword argument '(tokenizer|processing_class)'|Both `tokenizer` and `processing_class` are set"
)


def _trainer(setup: Setup, args: Any) -> Any:
    t = setup.transformers
    namespace = vars(setup.module)
    kwargs: dict[str, Any] = {
        "model": setup.model(),
        "args": args,
        "train_dataset": setup.train_rows,
        "eval_dataset": setup.eval_rows,
        "callbacks": setup.callbacks(),
        **families.extras(setup.family, setup.model),
    }
    if not setup.family.trl:
        kwargs["data_collator"] = t.default_data_collator
    keyword = _tokenizer_keyword(setup.trainer_class, t.Trainer)
    kwargs[keyword] = setup.tokenizer
    if setup.spec.get("trainer_kwargs"):
        kwargs.update(eval(setup.spec["trainer_kwargs"], {**namespace, "toy_tokenizer": setup.tokenizer}))
    accepted, dropped = _construct.fit(setup.trainer_class, kwargs)
    try:
        trainer = setup.trainer_class(**accepted)
    except (TypeError, ValueError) as error:  # the Trainer's keyword check, before it set anything up
        if not _TWICE.search(str(error)):
            raise
        accepted.pop(keyword, None)  # it passes its own (a tokenizer under another name, or none)
        trainer = setup.trainer_class(**accepted)
    for callback in dropped.get("callbacks", ()):  # an ``__init__`` without ``callbacks``: added after
        trainer.add_callback(callback)
    _quiet_printer(trainer, t.trainer_callback.PrinterCallback)
    for statement in setup.spec.get("register", ()):
        exec(statement, {**namespace, "trainer": trainer})  # noqa: S102 - a suggestion's registration line
    return trainer


def _quiet_printer(trainer: Any, printer: type) -> None:
    """Keep ``PrinterCallback`` where the Trainer put it (``disable_tqdm=True``), printing nothing.

    Why kept: its ``on_log`` pops ``total_flos`` from the ``logs`` every callback after it receives, so a
    moved callback that rebuilt the train summary from ``logs`` wrote another record than the override
    did; with the callback removed, the oracle found the two equal. Why silenced: it prints each log
    whole, run times included, which no two runs share (the oracle's lines are compared)."""

    def on_log(self: Any, *args: Any, **kwargs: Any) -> Any:  # the release's own, its print sent nowhere
        with contextlib.redirect_stdout(io.StringIO()):
            return printer.on_log(self, *args, **kwargs)  # type: ignore[attr-defined]

    quiet = type("QuietPrinterCallback", (printer,), {"on_log": on_log})
    callbacks = trainer.callback_handler.callbacks
    for i, callback in enumerate(callbacks):
        if type(callback) is printer:
            callbacks[i] = quiet()


def _steps(log_history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per optimiser step: the loss and the gradient norm (before clipping) the Trainer logged."""
    return [
        {"step": e["step"], "loss": e["loss"], "grad_norm": e.get("grad_norm")}
        for e in log_history
        if "loss" in e and "step" in e
    ]


def run_phase(setup: Setup, ga: int, resume: bool, lines: Lines) -> dict[str, Any]:
    """One ``train()`` (fresh, then ``save_model()``; or resumed from the fresh run's ``checkpoint-2``)."""
    name = f"ga{ga}/{'resume' if resume else 'train'}"
    phase: dict[str, Any] = {"name": name, "events": [], "controls": []}
    lines.trainer = None
    trainer = None
    try:
        trainer = lines.trainer = _trainer(setup, _arguments(setup, name, ga))
        trainer.add_callback(_recorder(setup.transformers, phase, lines))
        trainer.train(resume_from_checkpoint=f"ga{ga}/train/checkpoint-{EVERY}" if resume else None)
        if not resume:
            trainer.save_model()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the program's failure is what the oracle records
        phase["error"] = _error(exc)
        traceback.print_exc(file=sys.__stderr__)
    if trainer is not None:
        history = [_digest.plain(e, digits=8) for e in trainer.state.log_history]
        phase["log_history"] = history
        phase["steps"] = _steps(trainer.state.log_history)
        phase["params_hash"], phase["param_norms"] = _digest.params_digest(trainer.model)
    phase["lines"] = lines.take()
    return phase


def _touched(stand_ins: standins.StandIns, seen: int, where: dict[str, Any]) -> None:
    """Fail ``where`` (a phase, or the record's set-up) when the program touched a stand-in after the
    first ``seen`` touches and its own ``except`` swallowed the error: it ran a path no run on that
    release could take."""
    if len(stand_ins.touched) > seen and not where.get("error"):
        what = stand_ins.touched[seen]
        where["error"] = _error(standins.OracleStandInUsed(f"uses `{what}` (its own code caught the error)"))


#: the library's lists that imported code mutates, as they were before the first program (owner, items)
_PRISTINE: list[tuple[Any, list[str]]] = []


def remember_library_lists(transformers: Any) -> None:
    """Keep, once, what the lists :func:`restore_library_lists` puts back hold before any program.

    Why: TRL 0.17's ``grpo_config`` appends ``model_init_kwargs`` to transformers 4.46's module-level
    ``training_args._VALID_DICT_FIELDS`` when imported; every ``TrainingArguments`` built after it in the
    same interpreter then fails (``no attribute 'model_init_kwargs'``). A program that imports it (the
    dev split's R1-V, once stand-ins let it import) broke every later program in the child."""
    module = transformers.training_args
    for owner in (module, module.TrainingArguments):
        items = vars(owner).get("_VALID_DICT_FIELDS")
        if isinstance(items, list) and all(o is not owner for o, _ in _PRISTINE):
            _PRISTINE.append((owner, list(items)))


def restore_library_lists() -> None:
    """Put back what :func:`remember_library_lists` kept (in place: importers hold the same lists)."""
    for owner, items in _PRISTINE:
        vars(owner)["_VALID_DICT_FIELDS"][:] = items


_frozen = False  # the libraries' objects are frozen once per child, after the first program's imports


def _pristine(spec: dict[str, Any]) -> Any:
    """The libraries' attributes before the program imports anything of its own
    (``_library_guard``): the Trainer's and the toy model's modules are imported first, so a patch of
    them by the program is put back after it, even by the child's first program."""
    import transformers

    import trainwright.toy  # noqa: F401 - before ``_block``, as ``Setup`` (its extras check)

    _block(transformers, spec.get("block", ()))
    import transformers.models.qwen2.modeling_qwen2
    import transformers.trainer  # imported for the snapshot

    global _frozen
    if not _frozen:
        # The libraries' objects live as long as the child: out of the collector's sight, each of the
        # ``gc.collect()`` calls accelerate makes as a run ends (``free_memory``) scans only what the
        # programs made. Those calls were two thirds of a phase's time (the records are the same).
        gc.freeze()
        _frozen = True
    return _library_guard.take()


def run_program(spec: dict[str, Any], index: int, lines: Lines) -> dict[str, Any]:
    """The record of one program, trained in the current working directory; ``stand_ins`` lists the
    names its release lacks that it imports (``trainwright.testing.standins``), ``arguments`` the
    project's own arguments class it was given (``_project_args``)."""
    record: dict[str, Any] = {"release": "?", "phases": [], "files": {}}
    # what an earlier program printed and never handed to a phase (it failed while importing) is not
    # this one's: its first phase would report another project's import-time lines
    lines.take()
    lines.trainer = None
    stand_ins = standins.StandIns()
    pristine = _pristine(spec)
    before = set(sys.modules)
    own = Path(spec["root"] or Path(spec["module"]).parent).resolve()
    try:
        setup = Setup(spec, f"oracle_user_{index}", stand_ins)
        record["release"] = setup.transformers.__version__
        record["arguments"] = setup.own_arguments
        _touched(stand_ins, 0, record)
        for ga in spec.get("grad_accum", (1, 2)) if not record.get("error") else ():
            for resume in (False, True) if spec.get("resume", True) else (False,):
                seen = len(stand_ins.touched)
                record["phases"].append(run_phase(setup, ga, resume, lines))
                _touched(stand_ins, seen, record["phases"][-1])
        record["files"] = _digest.tree_digests(Path.cwd())
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a set-up failure is recorded, never a lost record
        record["error"] = _error(exc)
        traceback.print_exc(file=sys.__stderr__)
    finally:
        record["stand_ins"] = list(stand_ins.names)
        record["tainted"] = stand_ins.held_elsewhere(before, own) if stand_ins.names else []
        stand_ins.remove()
        restore_library_lists()
        record["patched"] = _library_guard.restore(pristine)
        if spec.get("root"):
            try:
                _importer.forget(Path(spec["root"]))
            except Exception:  # noqa: BLE001 - a module that will not be forgotten costs nothing here
                traceback.print_exc(file=sys.__stderr__)
    return record


def main(argv: list[str]) -> int:
    """``SPECS.json OUT.json``: each spec (a list) runs in its own sub-directory ``0/``, ``1/`` ...;
    the records are written as a list, in order. It stops after a program whose stand-ins library
    modules still hold (``StandIns.held_elsewhere``): the parent runs the rest in a fresh child."""
    spec_path, out_path = Path(argv[0]), Path(argv[1])
    specs = json.loads(spec_path.read_text())
    torch.set_num_threads(1)
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    register_optimizer_step_pre_hook(lambda *_: CLOCK.advance(_clock.OPTIMIZER_S))
    lines = Lines()
    logging.getLogger().addHandler(_LogHandler(lines))
    records: list[dict[str, Any]] = []
    real_stdout, top = sys.stdout, Path.cwd()
    sys.stdout = lines

    def stuck(reason: str) -> None:  # a clean-up after the deadline never ended: keep what was recorded
        record = _failed(f"{_deadline.ProgramTimedOut.__name__}: {reason}")
        out_path.write_text(json.dumps([*records, record], indent=1, default=str))
        _deadline.end_group()

    timed_out = False

    try:
        for index, spec in enumerate(specs):
            work = top / str(index)
            work.mkdir(exist_ok=True)
            os.chdir(work)
            try:
                with _deadline.deadline(float(spec.get("timeout_s", 600.0)), stuck):
                    records.append(run_program(spec, index, lines))
            except BaseException as exc:  # one program's escape never loses the others' records
                if isinstance(exc, KeyboardInterrupt):
                    raise
                traceback.print_exc(file=sys.__stderr__)
                records.append(_failed(_error(exc)))
                timed_out = isinstance(exc, _deadline.ProgramTimedOut)
                if timed_out:  # its processes may hold locks: stop here
                    break
            sys.stdout = lines  # a program that replaced it does not take the next one's lines
            if records[-1].get("tainted"):  # library modules hold its stand-ins: the rest run afresh
                break
    finally:
        sys.stdout = real_stdout
        os.chdir(top)
    out_path.write_text(json.dumps(records, indent=1, default=str))
    if timed_out:
        _deadline.end_group()  # what the program's clean-up forked after the deadline goes with the child
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
