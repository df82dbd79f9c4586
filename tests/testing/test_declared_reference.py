"""Safe fixes whose original runs nowhere are judged all the same (issue 32).

Three of the rule examples' and gallery's safe fixes were "not runnable" on every release, so the oracle
had never judged them:
- TW402's fix adds ``**kwargs`` to an event handler that lacks it. transformers passes every event
  ``model=``, ``optimizer=``, ... on every release, so the original raises at its first call everywhere.
  It is judged against the original whose handlers are given only the arguments they declare
  (``trainwright.testing.declared``), on the same release.
- TW304's example is a script (``TrainingArguments(evaluation_strategy=...)``, ``Trainer(model=None,
  tokenizer=None)``): it is judged as the dev split's call sites are, on stand-ins of each rename.
- A Trainer subclass that passes its own processing class on to ``super().__init__`` (``tokenizer=tok``)
  was refused by every release because the oracle passed one too; the oracle now gives it none.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from trainwright.testing.declared import declared_only, needs_reference

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import oracle_matrix
from trainwright_lint.rules import RULES
from trainwright_lint.rules.tw304_removed_argument import RemovedArgument
from trainwright_lint.rules.tw402_event_without_kwargs import EventWithoutKwargs

PRINTS_LOGS = """
from transformers import TrainerCallback


class LossPrinter(TrainerCallback):
    def on_log(self, args, state, control, logs=None{extra}):
        print("loss", logs.get("loss"){more})
"""

INSIDE_INIT = """
from transformers import Trainer, TrainerCallback


class MyTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)

        class LossPrinter(TrainerCallback):
            def on_log(self, args, state, control, logs=None{extra}):
                print("loss", logs.get("loss"))

        self.add_callback(LossPrinter())
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_handler_is_given_only_the_keywords_it_declares() -> None:
    from transformers import TrainerCallback

    class Narrow(TrainerCallback):
        def on_log(self, args, state, control, logs=None):  # type: ignore[no-untyped-def]
            return logs

    class Wide(TrainerCallback):
        def on_log(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            return kwargs

    namespace = {"__name__": __name__, "Narrow": Narrow, "Wide": Wide}
    with pytest.raises(TypeError, match="unexpected keyword argument 'model'"):
        Narrow().on_log(None, None, None, logs={"loss": 1.0}, model="m")
    declared_only(namespace)
    assert Narrow().on_log(None, None, None, logs={"loss": 1.0}, model="m") == {"loss": 1.0}
    assert Wide().on_log(None, None, None, model="m") == {"model": "m"}  # left as it was
    assert needs_reference("TypeError: LossPrinter.on_log() got an unexpected keyword argument 'model'")
    assert not needs_reference("TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'")


def test_a_callback_that_ran_nowhere_is_judged_against_its_declared_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = _write(tmp_path / "user", "callbacks.py", PRINTS_LOGS.format(extra="", more=""))
    fixed = _write(tmp_path / "fixed", "callbacks.py", PRINTS_LOGS.format(extra=", **kwargs", more=""))
    planted = _write(  # the fix, and a second value printed that the original never printed
        tmp_path / "planted", "callbacks.py", PRINTS_LOGS.format(extra=", **kwargs", more=", state.epoch")
    )
    same = oracle_matrix.Case("same", original, fixed, False, "==5.24.0")
    wrong = oracle_matrix.Case("planted", original, planted, False, "==5.24.0")
    unreached = oracle_matrix.Case(  # the footer cannot reach a class defined inside ``__init__``
        "unreached",
        _write(tmp_path / "inner", "trainer.py", INSIDE_INIT.format(extra="")),
        _write(tmp_path / "inner_fixed", "trainer.py", INSIDE_INIT.format(extra=", **kwargs")),
        False,
        "==5.24.0",
    )
    monkeypatch.setattr(oracle_matrix, "RELEASES", (oracle_matrix.PINNED,))  # no older release to try
    oracle_matrix.run([same, wrong, unreached], {oracle_matrix.PINNED: None})
    assert unreached.verdicts == {"5.24.0": "not runnable"}, (unreached.reasons, unreached.differences)
    assert "cannot reach" in unreached.reasons["5.24.0"]
    assert same.verdicts == {"5.24.0": "equal"}, same.differences
    assert same.references == {"5.24.0": oracle_matrix.DECLARED}
    assert wrong.verdicts == {"5.24.0": "different"}
    assert any("lines" in str(d) for d in wrong.differences["5.24.0"])
    assert f"against {oracle_matrix.DECLARED}" in oracle_matrix.report([same])
    assert sorted(p.name for p in original.parent.iterdir()) == ["callbacks.py"]  # the user's folder


def test_tw402s_rule_example_is_a_case_and_tw304s_a_set_of_stand_ins(tmp_path: Path) -> None:
    cases = {c.name: c for c in oracle_matrix.rule_example_cases(tmp_path)}
    tw402 = RULES[EventWithoutKwargs.code]
    assert tw402.fix_module is not None and f"{EventWithoutKwargs.code} example 0" in cases
    code = RemovedArgument.code
    pinned = sorted(n for n in cases if n.startswith(f"{code} example 0 stand-in"))
    assert len(pinned) == 2, sorted(cases)
    assert "TrainingArguments(evaluation_strategy=" in pinned[1] and "-> `eval_strategy=`" in pinned[1]
    assert "Trainer(tokenizer=None)" in pinned[0] and "-> `processing_class=`" in pinned[0]
    assert all(cases[n].trainer == "StandInTrainer" for n in pinned)


def test_a_trainer_passing_its_own_processing_class_on_is_given_none(tmp_path: Path) -> None:
    from trainwright.testing.fixed import judged_spec
    from trainwright.testing.oracle import run_specs

    own = _write(
        tmp_path,
        "own.py",
        """
        from transformers import Trainer


        class MyTrainer(Trainer):
            def __init__(self, *args, tok=None, **kwargs):
                super().__init__(*args, processing_class=tok, **kwargs)
        """,
    )
    (record,) = run_specs([judged_spec(own)])
    assert not record.failed, (record.error, [p.error for p in record.phases])
