"""Stand-ins for names a release lacks, and the project's own ``TrainingArguments`` (issue 32).

Before them, 30 of the dev split's 66 cases with safe fixes ran on neither 4.46.3 nor 5.24.0: a name
imported at module top that the release lacks (``EvaluationStrategy``, ``transformers.deepspeed``) or a
field of the project's own arguments class stopped original and fixed alike. A stand-in lets such a
program train while it never uses the name, and stops it, naming the name, the moment it does.
"""

from __future__ import annotations

import pickle
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("transformers")

from trainwright.testing import _construct, _project_args, reasons, standins

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).parent / "programs"
STAND_INS = PROGRAMS / "standins"
PLAIN = ROOT / "tests" / "oracle" / "programs" / "plain.py"
sys.path.insert(0, str(ROOT / "scripts"))

import oracle_matrix

PINNED = oracle_matrix.PINNED


def _load(stand_ins: standins.StandIns, folder: Path, text: str) -> ModuleType:
    path = folder / "user_module.py"
    path.write_text(text)
    from trainwright.testing._importer import import_file

    return stand_ins.importing(lambda: import_file(path, "oracle_stand_in_user"))


def test_a_stand_in_raises_on_use_and_is_removed_after(tmp_path: Path) -> None:
    import transformers.trainer_utils

    stand_ins = standins.StandIns()
    try:
        module = _load(
            stand_ins,
            tmp_path,
            "from transformers.trainer_utils import EvaluationStrategy\n"
            "from transformers.deepspeed import is_deepspeed_zero3_enabled\n"
            "from trl.import_utils import is_peft_available\n",
        )
        assert stand_ins.names == [
            "transformers.trainer_utils.EvaluationStrategy",
            "transformers.deepspeed",
            "trl.import_utils.is_peft_available",
        ]
        assert module.is_peft_available() is True  # peft is installed here: answered, not stood in
        for use in (
            lambda: module.EvaluationStrategy.STEPS,
            lambda: module.EvaluationStrategy("steps"),
            lambda: module.is_deepspeed_zero3_enabled(),
            lambda: exec("class Sub(Base): pass", {"Base": module.EvaluationStrategy}),  # noqa: S102
            lambda: isinstance(1, module.EvaluationStrategy),
        ):
            with pytest.raises(standins.OracleStandInUsed, match="which transformers 5.24.0 lacks"):
                use()
        assert stand_ins.touched[0] == "transformers.trainer_utils.EvaluationStrategy"
    finally:
        stand_ins.remove()
    assert not hasattr(transformers.trainer_utils, "EvaluationStrategy")
    assert "transformers.deepspeed" not in sys.modules


def test_an_installed_package_missing_a_name_gets_no_stand_in(tmp_path: Path) -> None:
    stand_ins = standins.StandIns()
    with pytest.raises(ImportError, match="cannot import name 'nothing'"):
        _load(stand_ins, tmp_path, "from json import nothing\n")
    with pytest.raises(ModuleNotFoundError, match="json.no_such_module"):
        _load(stand_ins, tmp_path, "import json.no_such_module\n")  # version skew stays a reason
    assert stand_ins.names == [] and stand_ins.absent == set()


def test_a_package_not_installed_gets_a_stand_in_that_raises_on_use(tmp_path: Path) -> None:
    stand_ins = standins.StandIns()
    try:
        module = _load(
            stand_ins,
            tmp_path,
            "import oracle_absent_pkg.sub.leaf as leaf\n"
            "from oracle_absent_other import helper\n"
            "try:\n    import oracle_absent_caught\nexcept ImportError:\n    CAUGHT = True\n",
        )
        assert stand_ins.names == [
            "oracle_absent_pkg",
            "oracle_absent_pkg.sub",
            "oracle_absent_pkg.sub.leaf",
            "oracle_absent_other",
        ]
        assert module.CAUGHT  # its own ``except`` handled that one: nothing stood in
        with pytest.raises(standins.OracleStandInUsed, match="oracle_absent_other is not installed here"):
            module.helper()
        with pytest.raises(standins.OracleStandInUsed, match="uses `oracle_absent_pkg.sub.leaf.fn`"):
            module.leaf.fn()
        kind = reasons.kind(
            "OracleStandInUsed: uses `oracle_absent_other.helper`, and oracle_absent_other "
            "is not installed here"
        )
        assert kind == "uses a package that is not installed (its stand-in was touched)"
    finally:
        stand_ins.remove()
    assert "oracle_absent_pkg" not in sys.modules and "oracle_absent_pkg.sub" not in sys.modules


def test_a_program_whose_stand_ins_a_library_keeps_ends_its_child() -> None:
    """The test split's colpali: transformers imported ``torchvision`` (stood in for) during the first
    program, so the second in the same child needed no stand-in and touched the first's. The child
    now ends after such a program; each record lists its own stand-ins, whatever ran before."""
    from trainwright.testing.oracle import Spec, run_specs

    spec = Spec(module=STAND_INS / "via_library.py", grad_accum=(1,), resume=False)
    first, second, third = run_specs([spec, spec, spec])
    assert first.stand_ins == second.stand_ins == third.stand_ins == ("oracle_absent_vision",)
    assert not first.failed and not second.failed and not third.failed


def _case(name: str, original: Path, fixed: Path, folder: Path) -> oracle_matrix.Case:
    """A case judged on the pinned release; the fixed side is a copy, as ``trainwright fix`` makes."""
    copy = folder / name / fixed.name
    copy.parent.mkdir(parents=True)
    shutil.copyfile(fixed, copy)
    return oracle_matrix.Case(name, original, copy, False, f"=={PINNED}")


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, oracle_matrix.Case]:
    """Every stand-in case judged in one oracle run (one child process) on the pinned release."""
    folder = tmp_path_factory.mktemp("stand-ins")
    unused = STAND_INS / "unused.py"
    cases = {
        "equal": _case("equal", unused, unused, folder),
        "doubled": _case("doubled", unused, STAND_INS / "doubled.py", folder),
        "called": _case("called", STAND_INS / "called.py", STAND_INS / "called.py", folder),
        "swallowed": _case("swallowed", STAND_INS / "swallowed.py", STAND_INS / "swallowed.py", folder),
        "fix imports one": _case("breaks", PLAIN, STAND_INS / "called.py", folder),
        "fix imports more": _case("more", STAND_INS / "called.py", unused, folder),
        "absent": _case("absent", STAND_INS / "absent_unused.py", STAND_INS / "absent_unused.py", folder),
    }
    oracle_matrix.run(list(cases.values()), {PINNED: None})
    return cases


@pytest.mark.slow
def test_a_program_that_never_uses_the_stand_ins_is_judged_and_named(
    judged: dict[str, oracle_matrix.Case],
) -> None:
    case = judged["equal"]
    assert case.verdicts == {PINNED: "equal"}, case.differences
    assert case.stand_ins[PINNED] == (
        "transformers.deepspeed",
        "transformers.trainer_utils.EvaluationStrategy",
        "trl.import_utils.is_peft_available",
    )
    text = oracle_matrix.report([case])
    assert (
        "with stand-ins for `transformers.deepspeed`, `transformers.trainer_utils.EvaluationStrategy`" in text
    )
    assert (
        f"judged on {PINNED} with stand-ins for names it lacks: 1 (1 fixes), 1 (1 fixes) runnable, "
        "1 (1 fixes) equal" in text
    )


@pytest.mark.slow
def test_packages_not_installed_are_stood_in_for_when_unused(judged: dict[str, oracle_matrix.Case]) -> None:
    case = judged["absent"]
    assert case.verdicts == {PINNED: "equal"}, (case.differences, case.reasons)
    assert case.stand_ins[PINNED] == (
        "oracle_absent_toolkit",
        "oracle_absent_toolkit.chem",
        "oracle_absent_logger",
    )


@pytest.mark.slow
def test_a_planted_difference_behind_stand_ins_is_still_reported(
    judged: dict[str, oracle_matrix.Case],
) -> None:
    case = judged["doubled"]
    assert case.verdicts == {PINNED: "different"}
    found = {d.where for d in case.differences[PINNED]}
    assert "ga2/train.steps[0].loss" in found and "ga1/train.steps[0].grad_norm" in found
    first = next(d for d in case.differences[PINNED] if d.where == "ga1/train.steps[0].loss")
    assert first.b == pytest.approx(2 * first.a, rel=1e-5)


@pytest.mark.slow
def test_a_program_that_uses_a_stand_in_is_not_runnable_and_names_it(
    judged: dict[str, oracle_matrix.Case],
) -> None:
    for name, used in (
        ("called", "transformers.trainer_utils.EvaluationStrategy"),
        ("swallowed", "transformers.deepspeed.is_deepspeed_zero3_enabled"),  # its own `except` caught it
    ):
        case = judged[name]
        assert case.verdicts == {PINNED: "not runnable"}, name
        why = case.reasons[PINNED]
        assert f"OracleStandInUsed: uses `{used}`" in why, why
        assert reasons.kind(why).startswith("uses a name its transformers/TRL release lacks")


@pytest.mark.slow
def test_a_fix_is_never_what_a_stand_in_hides(judged: dict[str, oracle_matrix.Case]) -> None:
    """The fixed program's own new import of a missing name: a difference where the original needed no
    stand-in (it would no longer import), not runnable where the original needed others."""
    breaks = judged["fix imports one"]
    assert breaks.verdicts == {PINNED: "different"}
    assert [d.where for d in breaks.differences[PINNED]][:1] == ["setup.stand_ins"]
    more = judged["fix imports more"]
    assert more.verdicts == {PINNED: "not runnable"}
    assert more.reasons[PINNED].startswith("the fixed program also imports `transformers.deepspeed`")


def _project(root: Path, default: str) -> ModuleType:
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "train.py").write_text(
        "from dataclasses import dataclass, field\nimport transformers\n\n@dataclass\n"
        "class TrainingArguments(transformers.TrainingArguments):\n"
        f"    max_new_tokens: int = {default}\n    tags: list = field(default_factory=list)\n"
    )
    (root / "trainer.py").write_text("def step(self):\n    return self.args.max_new_tokens\n")
    module = ModuleType("trainer")
    module.__file__ = str(root / "trainer.py")
    return module


def test_the_projects_own_arguments_are_read_from_its_source(tmp_path: Path) -> None:
    from transformers import TrainingArguments

    made, said = _project_args.project_arguments(_project(tmp_path, "16"), tmp_path, TrainingArguments)
    args = made(output_dir=str(tmp_path / "out"), report_to=[])
    assert (args.max_new_tokens, args.tags, args.report_to) == (16, [], [])
    assert pickle.loads(pickle.dumps(args)).max_new_tokens == 16  # ``Trainer._save`` pickles it
    assert said == "the project's `TrainingArguments` (scripts/train.py; reads `max_new_tokens`)"
    with pytest.raises(_construct.NotRunnable, match="reads max_new_tokens .* no literal default"):
        _project_args.project_arguments(
            _project(tmp_path / "b", "SIZE * 2"), tmp_path / "b", TrainingArguments
        )


@pytest.mark.slow
def test_a_trainer_reading_its_projects_arguments_trains(tmp_path: Path) -> None:
    from trainwright.testing.oracle import Spec, compare, run_specs

    project = PROGRAMS / "own_args"
    own, plain = run_specs([Spec(project / "trainer.py", root=project), Spec(PLAIN)])
    assert not own.failed, own.error
    assert own.arguments.startswith("the project's `TrainingArguments` (train.py")
    # loss_weight 0.5 * max_new_tokens 16 / 8: the project's defaults scale the loss by exactly 1
    assert [d.where for d in compare(plain, own)] == ["setup.arguments"]


@pytest.mark.slow
def test_a_programs_import_side_effect_on_the_library_does_not_reach_the_next_program(
    installed_release,
) -> None:
    """The dev split's R1-V, once stand-ins let it import on 4.46.3, imported TRL 0.17's ``grpo_config``;
    every program after it in the child then failed (``no attribute 'model_init_kwargs'``)."""
    from trainwright.testing.oracle import Spec, run_specs

    folder = installed_release("4.46.3")
    polluter, plain = run_specs(
        [Spec(STAND_INS / "grpo_config_import.py", release=folder), Spec(PLAIN, release=folder)]
    )
    assert "model_init_kwargs" in (polluter.phases[0].error or ""), polluter
    assert not plain.failed, plain.error or [p.error for p in plain.phases]
