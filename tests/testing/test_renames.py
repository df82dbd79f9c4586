"""TW304's call-site renames judged on stand-ins (``trainwright.testing.renames``): the oracle's own training
passing the call's keyword and value, before and after the rename. The stand-ins found the one unsafe
rename TW304 offered as safe (``warmup_ratio=0.1`` -> ``warmup_steps=0.1`` raises on 4.x)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from trainwright.testing.renames import NoStandIn, Rename, renames_in, stand_in_values, write_stand_ins

ARGS = "transformers.TrainingArguments"


def test_the_renames_and_values_are_read_from_the_linters_findings() -> None:
    source = (
        'args = TrainingArguments(output_dir="o", evaluation_strategy="epoch")\nt = Trainer(tokenizer=tok)\n'
    )
    findings = [
        {
            "code": "TW304",
            "message": "`evaluation_strategy=` is not accepted by `TrainingArguments` in transformers 5.24.0",
            "location": {"row": 1, "column": 42},
            "fix": {
                "applicability": "safe",
                "message": "Rename the argument `evaluation_strategy=` to `eval_strategy=`",
            },
        },
        {
            "code": "TW304",
            "message": "`tokenizer=` is not accepted by `trl.SFTTrainer` in trl 1.16.0",
            "location": {"row": 2, "column": 13},
            "fix": {
                "applicability": "safe",
                "message": "Rename the argument `tokenizer=` to `processing_class=`",
            },
        },
        {
            "code": "TW304",
            "message": "`x=` is not accepted by `Trainer`",
            "location": {"row": 2, "column": 1},
        },
    ]
    assert renames_in(findings, source) == [
        Rename(ARGS, "evaluation_strategy", "eval_strategy", '"epoch"'),
        Rename("trl.SFTTrainer", "tokenizer", "processing_class", "tok"),
    ]


def test_a_value_only_the_project_has_gets_no_stand_in_of_its_own(tmp_path: Path) -> None:
    with pytest.raises(NoStandIn, match="a value only the project has"):
        write_stand_ins(Rename(ARGS, "evaluation_strategy", "eval_strategy", "cfg.strategy"), tmp_path)
    original, fixed = write_stand_ins(
        Rename("transformers.Trainer", "tokenizer", "processing_class", "t"), tmp_path
    )
    assert (
        '"tokenizer": processing_class' in original.read_text()
        and '"processing_class": processing_class' in fixed.read_text()
    )


@pytest.mark.slow
def test_the_stand_ins_tell_a_same_value_rename_from_one_that_is_not(
    tmp_path: Path, installed_release
) -> None:
    pytest.importorskip("transformers")
    from trainwright.testing.compare import compare
    from trainwright.testing.oracle import Spec, run_specs

    old = installed_release("4.46.3")
    pairs = [
        write_stand_ins(Rename(ARGS, "evaluation_strategy", "eval_strategy", '"steps"'), tmp_path / "eval"),
        write_stand_ins(Rename(ARGS, "warmup_ratio", "warmup_steps", "0.1"), tmp_path / "warmup"),
    ]
    specs = [
        Spec(p, trainer="StandInTrainer", release=old, grad_accum=(1,), resume=False)
        for pair in pairs
        for p in pair
    ]
    same_original, same_fixed, warm_original, warm_fixed = run_specs(specs)
    assert not same_original.failed and compare(same_original, same_fixed) == []
    assert not warm_original.failed and warm_fixed.failed  # 4.x: "warmup_steps must be ... an integer"
    assert compare(warm_original, warm_fixed) != []


def test_the_plain_twin_drops_both_keywords_as_the_stand_ins_do(tmp_path: Path) -> None:
    """The twin differs from the stand-ins only by the renamed keyword being absent: it drops the
    oracle's own value of both names too (it kept ``max_length=32`` and measured 2048 against 32)."""
    write_stand_ins(Rename("trl.SFTConfig", "max_seq_length", "max_length", "2048"), tmp_path)
    twin = (tmp_path / "plain_max_seq_length.py").read_text()
    gone = next(
        n.value
        for n in ast.parse(twin).body
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "_GONE"
    )
    assert ast.literal_eval(gone) == ("max_seq_length", "max_length")
    assert "type(given)(**values, **{})" in twin


@pytest.mark.slow
def test_a_rename_across_trl_releases_is_judged_against_a_twin_without_the_keyword(
    tmp_path: Path,
    installed_release,
) -> None:
    """pristinawang/table_qa's ``SFTConfig(max_seq_length=2048)`` -> ``max_length=``: the original fails
    on TRL 1.16, so the fixed program there is judged against the original on 4.46.3/TRL 0.17, each
    relative to its twin. The toy rows are 25 to 48 tokens: 2048 and the twin's default (1024 on both
    TRL releases) leave them whole, so the twin trains exactly as the stand-in on each release and the
    rename is equal for that reason; a planted fix that passes another value (16 -> 24) differs."""
    pytest.importorskip("transformers")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import oracle_matrix

    from trainwright.testing.compare import compare

    releases = {"4.46.3": installed_release("4.46.3"), oracle_matrix.PINNED: None}
    cases = [
        case
        for value in ("2048", "16")
        for case in oracle_matrix.stand_in_cases(
            value,
            [Rename("trl.SFTConfig", "max_seq_length", "max_length", value)],
            tmp_path / value,
            ">=4.44",
        )
    ]
    planted = cases[1].fixed.with_name("planted.py")
    planted.write_text(cases[1].fixed.read_text().replace('"max_length": 16', '"max_length": 24'))
    cases[1].fixed = planted
    # BELLE's RewardConfig(evaluation_strategy="steps"): the twin does not evaluate; TRL 0.17 prints a
    # table at each evaluation and TRL 1.16 does not, which is the library's, not the rename's
    evaluates = Rename("trl.RewardConfig", "evaluation_strategy", "eval_strategy", '"steps"')
    cases += oracle_matrix.stand_in_cases("rm", [evaluates], tmp_path / "rm", ">=4.44")
    records = oracle_matrix._records(cases, releases, "causal-lm")
    for case in cases:
        oracle_matrix.judge(case, records, list(releases))
    same, wrong, reward = cases
    assert reward.verdicts == {"4.46.3": "equal", "5.24.0": "equal"}, reward.differences
    assert same.verdicts == {"4.46.3": "equal", "5.24.0": "equal"}, same.differences
    assert same.references == {"5.24.0": "4.46.3"}  # judged across releases: the original fails on 1.16
    original, fixed, twin = oracle_matrix.programs(same) + (oracle_matrix.plain_program(same),)
    assert compare(records[(original, "4.46.3")], records[(twin, "4.46.3")]) == []
    assert compare(records[(fixed, "5.24.0")], records[(twin, "5.24.0")]) == []
    assert wrong.verdicts == {"4.46.3": "different", "5.24.0": "different"}


def test_a_non_literal_value_is_stood_in_for_by_its_literals_else_the_catalogue_default() -> None:
    """locuslab/tofu and LianjiaTech/BELLE pass `evaluation_strategy=` a value only the project has:
    each literal a conditional can take stands in, else `eval_strategy=`'s default ('no' in 5.24.0)."""
    branches = '"steps" if cfg.eval_while_train else "no"'
    assert stand_in_values(Rename(ARGS, "evaluation_strategy", "eval_strategy", branches)) == [
        ("'steps'", f"a literal of `{branches}`"),
        ("'no'", f"a literal of `{branches}`"),
    ]
    assert stand_in_values(Rename(ARGS, "evaluation_strategy", "eval_strategy", "args.s or 'epoch'")) == [
        ("'epoch'", "a literal of `args.s or 'epoch'`")
    ]
    (only,) = stand_in_values(Rename(ARGS, "evaluation_strategy", "eval_strategy", "script_args.strategy"))
    assert only == (
        "'no'",
        "`script_args.strategy` unknown: the default of `eval_strategy=` in the catalogue",
    )
    (trl,) = stand_in_values(Rename("trl.SFTConfig", "max_seq_length", "max_length", "cfg.n"))
    assert trl[0] == "1024"  # TRL 1.16's SFTConfig
    assert stand_in_values(Rename(ARGS, "evaluation_strategy", "eval_strategy", '"epoch"')) == [
        ('"epoch"', "")
    ]
    with pytest.raises(NoStandIn, match="no default"):
        stand_in_values(Rename(ARGS, "evaluation_strategy", "no_such_keyword", "cfg.s"))
