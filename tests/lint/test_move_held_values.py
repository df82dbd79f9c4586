"""The values a TW2xx move reads from the trainer instead of an argument (``rules/_move.py: HELD``) are
the argument, on the pinned release: a real hyper-parameter search (Optuna, one trial) whose Trainer's
``_save_checkpoint`` records the ``trial`` it gets and whose recording callback records, at ``on_save``,
what the trainer holds. The oracle never searches (``trial`` is ``None`` there), so this is where a real
trial is checked. Needs ``optuna`` (not a dependency of the project: skipped without it)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
optuna = pytest.importorskip("optuna")

from trainwright_lint.rules._move import HELD

from trainwright.toy import build_tiny_causal_lm

PASSED: list[object] = []
SEEN: list[object] = []


class _Recorder(transformers.TrainerCallback):
    """Holds the trainer, as a move's callback does, and reads what ``HELD`` names at ``on_save``."""

    def __init__(self, trainer: transformers.Trainer) -> None:
        self.trainer = trainer

    def on_save(self, args, state, control, **kwargs):
        SEEN.append(getattr(self.trainer, HELD["_save_checkpoint"]["trial"]))


class _TrialTrainer(transformers.Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.add_callback(_Recorder(self))

    def _save_checkpoint(self, model, trial):
        PASSED.append(trial)
        super()._save_checkpoint(model, trial)


def test_the_trial_save_checkpoint_gets_is_the_one_the_trainer_holds_at_on_save(tokenizer, tmp_path) -> None:
    torch.set_num_threads(1)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    ids = torch.randint(5, len(tokenizer), (8, 6), generator=torch.Generator().manual_seed(0))
    data = [{"input_ids": row, "labels": row} for row in ids]
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path), max_steps=4, save_steps=2, per_device_train_batch_size=2,
        report_to=[], use_cpu=True, logging_steps=100, eval_strategy="no",
    )  # fmt: skip
    trainer = _TrialTrainer(
        model_init=lambda trial: build_tiny_causal_lm(tokenizer),
        args=args,
        train_dataset=data,
        eval_dataset=data[:2],
    )
    trainer.hyperparameter_search(
        hp_space=lambda trial: {"learning_rate": trial.suggest_float("learning_rate", 1e-4, 1e-3)},
        compute_objective=lambda metrics: 0.0,
        backend="optuna",
        n_trials=1,
    )
    assert len(PASSED) == 2 and all(isinstance(t, optuna.trial.Trial) for t in PASSED)
    assert SEEN == PASSED  # the same trial object, at each save
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"run-{PASSED[0].number}"
    ]  # `_get_output_dir(trial)`
