"""The oracle trains TRL-shaped classes on their own data (issues 32 and 33).

Before ``trainwright.testing.families`` the toy data was a list of tensor rows, so every TRL trainer
failed before its first step ("needs a `datasets.Dataset`") and no fix or move on one was judged.
Now the family is read from the class (its bases, its config, its ``__init__``), and the run gets a
``datasets.Dataset`` of that family's columns and the constructor arguments TRL needs, built from the
toy model; a 4.x release folder carries its own ``datasets``.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from trainwright.testing import families

PROGRAMS = Path(__file__).parent / "programs"


class DPOTrainer:  # a base named like TRL's (TRL's own copy exported from a snapshot is not ``trl``'s)
    pass


class ProjectTrainer(DPOTrainer):
    pass


class GRPOConfig:
    pass


class ConfiguredTrainer:
    def __init__(self, model: object, args: GRPOConfig | None = None) -> None: ...


class OwnRewards:
    def __init__(self, model: object, reward_funcs: list[object]) -> None: ...


class Plain:
    def __init__(self, model: object, args: object = None) -> None: ...


def test_the_family_is_read_from_bases_config_and_signature() -> None:
    assert families.detect(ProjectTrainer) is families.PREFERENCE
    assert families.detect(ConfiguredTrainer, GRPOConfig) is families.PROMPT
    assert families.detect(OwnRewards) is families.PROMPT
    assert families.detect(Plain) is families.TRAINER
    assert not families.TRAINER.trl and families.PROMPT.trl


def test_detection_imports_neither_torch_nor_datasets() -> None:
    code = "import sys, trainwright.testing.families; print(sorted({'torch', 'datasets', 'trl'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_rows_have_the_columns_each_family_reads() -> None:
    preference = families.rows(families.PREFERENCE, 3)
    assert [sorted(r) for r in preference] == [["chosen", "prompt", "rejected"]] * 3
    assert preference[0]["chosen"] != preference[0]["rejected"]
    assert families.rows(families.REWARD, 1)[0]["chosen"].startswith(
        families.rows(families.PROMPT, 1)[0]["prompt"]
    )
    assert {r["label"] for r in families.rows(families.KTO, 4)} == {True, False}
    assert sorted(families.rows(families.TRIPLE, 1)[0]) == ["chosen", "prompt", "reference", "rejected"]
    assert families.rows(families.SFT, 2) == families.rows(families.SFT, 2)  # deterministic
    assert families.length_reward(["ab", "abcd"]) == [2.0, 4.0]


pytest.importorskip("trl")

from trainwright.testing.fixed import fixed_copy, judged_spec
from trainwright.testing.oracle import compare, run_specs


@pytest.mark.slow
def test_trl_trainers_train_on_their_own_data_and_a_planted_change_shows(tmp_path: Path) -> None:
    grpo = PROGRAMS / "trl_grpo_progress.py"
    moved = fixed_copy(grpo, tmp_path / "moved", unsafe=True, select="TW201,TW202")
    assert moved.changed and "class ProgressGRPOTrainerTrainingStepCallback" in moved.path.read_text()
    dpo, doubled, original, after = run_specs(
        [
            judged_spec(PROGRAMS / "trl_dpo.py"),
            judged_spec(PROGRAMS / "trl_dpo_doubled.py"),
            judged_spec(grpo),
            judged_spec(moved.path),
        ]
    )
    for record in (dpo, original):
        assert not record.failed, record
        for phase in record.phases:
            assert len(phase.steps) >= 2 and all(math.isfinite(s.loss) for s in phase.steps), phase
    assert "@0 train data: Dataset" in dpo.phase("ga1/train").lines  # type: ignore[union-attr]
    found = [str(d) for d in compare(dpo, doubled)]
    assert any(".steps[0].loss" in d for d in found), found  # the planted change is reported
    assert "progress.txt" in " ".join(original.files)  # the GRPO run wrote what the override writes
    assert compare(original, after) == []  # TW201's move on a GRPO trainer trains the same


@pytest.mark.slow
def test_a_module_importing_datasets_runs_on_a_4x_release(installed_release) -> None:
    release = installed_release("4.46.3")
    (record,) = run_specs([judged_spec(PROGRAMS / "uses_datasets.py", release=release)])
    assert record.release == "4.46.3" and not record.failed, record
    assert "@0 datasets 4.x" in record.phase("ga1/train").lines  # type: ignore[union-attr]
