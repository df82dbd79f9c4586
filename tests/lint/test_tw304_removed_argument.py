"""TW304 on the two most common 5.0 breakages at call sites, and its fix run for real on 5.24."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from lint_helpers import fix_text  # noqa: F401  (shared fixer helper)
from trainwright_lint.configuration import LintConfig
from trainwright_lint.configuration.target import resolve_project_target
from trainwright_lint.engine import lint_source

SCRIPT = textwrap.dedent(
    """
    from transformers import Trainer, TrainingArguments


    def build(model, tok, out, data):
        args = TrainingArguments(output_dir=out, evaluation_strategy="steps", eval_steps=5, report_to=[])
        return Trainer(model=model, args=args, tokenizer=tok, eval_dataset=data)
    """
).lstrip()


def findings(version: str, source: str = SCRIPT) -> list[tuple[int, str, str]]:
    config = LintConfig(transformers_version=version, trl_version="1.16.0")
    return [(f.line, f.code, f.message) for f in lint_source(source, "train.py", config) if f.code == "TW304"]


def test_flagged_on_5x_and_not_on_4_45() -> None:
    on_5 = findings("5.24.0")
    assert [(line, code) for line, code, _ in on_5] == [(5, "TW304"), (6, "TW304")]
    assert "`evaluation_strategy=`" in on_5[0][2] and "`eval_strategy=`" in on_5[0][2]
    assert "`tokenizer=`" in on_5[1][2] and "`processing_class=`" in on_5[1][2]
    assert findings("4.45.2") == []


def test_a_range_reports_where_it_breaks() -> None:
    target = resolve_project_target("transformers", None, option=">=4.45,<5.1")
    config = LintConfig(transformers_version=target.newest, transformers_target=target, trl_version="1.16.0")
    msgs = [f.message for f in lint_source(SCRIPT, "train.py", config) if f.code == "TW304"]
    assert len(msgs) == 2
    assert any("breaks on 4.51.0–5.0.0 of the target range" in m for m in msgs), msgs  # evaluation_strategy
    assert any("breaks on 5.0.0 of the target range" in m for m in msgs), (
        msgs
    )  # tokenizer (deprecated 4.46–4.57)


def test_no_fix_when_the_new_name_does_not_exist_on_the_whole_range() -> None:
    """``processing_class`` appeared in 4.46: on a range reaching 4.45 the rename would break there."""
    from lint_helpers import dedent
    from trainwright_lint.driver import relinter
    from trainwright_lint.engine import single_file_workspace
    from trainwright_lint.fixes import fix_bytes

    target = resolve_project_target("transformers", None, option=">=4.44,<5.1")
    config = LintConfig(transformers_version=target.newest, transformers_target=target, trl_version="1.16.0")
    lint = relinter("train.py", config, single_file_workspace("train.py", config))
    by_keyword = {f.message.split("=`", 1)[0].strip("`"): f for f in lint(SCRIPT) if f.code == "TW304"}
    assert by_keyword["tokenizer"].fix is None and "4.44.0" in by_keyword["tokenizer"].fix_note
    outcome = fix_bytes(dedent(SCRIPT).encode(), "train.py", lint)
    assert b"tokenizer=tok" in outcome.fixed  # left alone: processing_class= would fail on 4.44/4.45


def test_the_fixed_code_runs_on_5_24(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from lint_helpers import fix_text as fix

    from trainwright.toy import build_tiny_causal_lm, build_tokenizer

    outcome = fix(SCRIPT, path="train.py", version="5.24.0")
    fixed = outcome.fixed.decode()
    assert 'eval_strategy="steps"' in fixed and "processing_class=tok" in fixed
    assert "evaluation_strategy" not in fixed and "tokenizer=tok" not in fixed
    namespace: dict[str, object] = {}
    exec(compile(fixed, "train.py", "exec"), namespace)  # noqa: S102 - the fixed script, as the user runs it
    tok = build_tokenizer()
    data = [{"input_ids": [1, 2, 3], "labels": [1, 2, 3]}]
    trainer = namespace["build"](build_tiny_causal_lm(tok), tok, str(tmp_path), data)  # type: ignore[operator]
    assert trainer.processing_class is tok and trainer.args.eval_strategy == "steps"


CLASSES_BY_OTHER_NAMES = textwrap.dedent(
    """
    from transformers import Trainer
    from trl import DPOTrainer


    class P(Trainer):
        pass


    class DPOTrainerFedProx(DPOTrainer):
        def __init__(self, global_state, **kwargs):
            super().__init__(**kwargs)


    Q = P


    def build(m, tok):
        a = P(model=m, tokenizer=tok)
        b = Q(model=m, tokenizer=tok)
        c = DPOTrainerFedProx(global_state=1, model=m, tokenizer=tok)
        return a, b, c
    """
).lstrip()


def test_classes_whose_names_do_not_end_in_trainer_are_checked() -> None:
    """Found in OpenFedLLM (`DPOTrainerFedProx(...)`) and tofu: the called name has the word in the
    middle, or none at all (`P`, and `Q = P`)."""
    found = findings("5.24.0", CLASSES_BY_OTHER_NAMES)
    assert [line for line, _, _ in found] == [18, 19, 20]
    # TRL's trainers inherit transformers' rename: the advice (and the fix) is processing_class=.
    assert "`trl.DPOTrainer`" in found[2][2] and "pass `processing_class=` instead" in found[2][2]
    assert "accepted until" not in found[2][2]  # that date is transformers', not TRL's


def test_keywords_a_subclass_pops_from_its_kwargs_are_its_own() -> None:
    """tofu's `CustomTrainerForgetting.__init__(self, *args, **kwargs)` pops `forget_loss` before
    passing the rest on: only what reaches `Trainer.__init__` is checked (`kwargs.get` leaves the key
    in, so `eval_cfg=` still reaches the base and breaks)."""
    source = textwrap.dedent(
        """
        from transformers import Trainer


        class Forgetting(Trainer):
            def __init__(self, *args, **kwargs):
                self.loss_type = kwargs.pop("forget_loss")
                self.cfg = kwargs.get("eval_cfg")
                del kwargs["oracle"]
                super().__init__(*args, **kwargs)


        def build(m, tok):
            return Forgetting(model=m, forget_loss="ga", oracle=m, eval_cfg=None, tokenizer=tok)
        """
    ).lstrip()
    found = findings("5.24.0", source)
    assert [message.split("`")[1] for _, _, message in found] == ["eval_cfg=", "tokenizer="]


WARMUP = 'from transformers import TrainingArguments\n\nargs = TrainingArguments(output_dir="o", warmup_ratio=0.1)\n'


@pytest.mark.parametrize(
    ("option", "safe"),
    [
        (">=4.44,<6", False),  # on 4.x ``warmup_steps`` is a step count: 0.1 raises there
        (">=5.0,<6", True),  # from 5.0 ``warmup_steps`` takes the ratio as a float below 1
    ],
)
def test_a_rename_is_safe_only_where_the_new_name_takes_the_same_value(option: str, safe: bool) -> None:
    """The call-site stand-ins (``trainwright.testing.renames``) found ``warmup_ratio=0.1`` ->
    ``warmup_steps=0.1`` failing on 4.46.3; the rename's value carries over only from 5.0.0."""
    target = resolve_project_target("transformers", None, option=option)
    config = LintConfig(transformers_version=target.newest, transformers_target=target, trl_version="1.16.0")
    (found,) = [f for f in lint_source(WARMUP, "train.py", config) if f.code == "TW304"]
    assert (found.fix is not None) is safe
    if not safe:
        assert "4.44.0–4.57.6" in found.fix_note, found.fix_note
