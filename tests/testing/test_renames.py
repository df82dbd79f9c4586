"""TW304's call-site renames judged on stand-ins (``trainwright.testing.renames``): the oracle's own training
passing the call's keyword and value, before and after the rename. The stand-ins found the one unsafe
rename TW304 offered as safe (``warmup_ratio=0.1`` -> ``warmup_steps=0.1`` raises on 4.x)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwright.testing.renames import NoStandIn, Rename, renames_in, write_stand_ins

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


def test_a_value_only_the_project_has_gets_no_stand_in(tmp_path: Path) -> None:
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
def test_the_stand_ins_tell_a_same_value_rename_from_one_that_is_not(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from trainwright.testing.compare import compare
    from trainwright.testing.oracle import Spec, run_specs
    from trainwright.testing.releases import ReleaseUnavailable, ensure

    try:
        old = ensure("4.46.3")
    except ReleaseUnavailable as exc:
        if not exc.offline:
            raise
        pytest.skip(f"PyPI unreachable, transformers 4.46.3 not installed under .oracle/: {exc}")
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
