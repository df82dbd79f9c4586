"""Which data a Trainer subclass reads, and the toy run's data and arguments for it (issue 32).

Why: TRL's trainers (and the project classes built on them) do not train on the oracle's tensor rows:
``DPOTrainer`` tokenises ``prompt``/``chosen``/``rejected`` strings itself and needs a
``datasets.Dataset`` to ``map`` over, ``GRPOTrainer`` generates completions for a ``prompt`` column
and scores them with ``reward_funcs``, ``DistillationTrainer`` needs a teacher. Before this module
every such case was "not runnable", so no fix on a TRL trainer was ever judged.

The family is read from the class itself, never from a repository's name: the names of the classes
in its MRO (a project's ``class MyTrainer(DPOTrainer)`` and TRL's own copy exported from a snapshot
both have ``DPOTrainer`` there; ``issubclass`` against the installed TRL would miss the copy), then
the config class its ``__init__`` annotates ``args`` with, then its ``__init__``'s parameters
(``reward_funcs``, ``teacher_model``, ``ref_model``).

Detection is pure Python; the data builders import ``datasets`` only when called (the child side),
so importing this module costs nothing on the lint side.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Family:
    """A trainer family: the dataset columns it reads and the extra constructor arguments it needs."""

    name: str
    columns: tuple[str, ...] = ()  # empty: the oracle's tensor rows (``input_ids``, ``labels``)
    extras: tuple[str, ...] = ()  # constructor arguments the toy run builds (``reward_funcs``)
    settings: dict[str, Any] = field(default_factory=dict)  # config fields the toy run needs
    labels: int = 0  # a sequence classifier with this many outputs (a reward model: 1); 0 a causal LM
    # the transformers ``TrainingArguments`` subclass it reads fields of, when its ``__init__`` does not
    # annotate one (``Seq2SeqTrainer`` reads ``args.predict_with_generate``, annotated ``TrainingArguments``)
    arguments: str | None = None

    @property
    def trl(self) -> bool:
        return bool(self.columns)


_SMALL = {"max_length": 32, "bf16": False}  # TRL's configs default bf16 on
# beta 0: no reference model, which TRL would otherwise load by the model's (absent) hub name
_GENERATING = {**_SMALL, "max_completion_length": 4, "num_generations": 2, "temperature": 1.0, "beta": 0.0}

TRAINER = Family("trainer")
SEQ2SEQ = Family("seq2seq", arguments="Seq2SeqTrainingArguments")
# TRL 0.11 (the 4.45 folder's) keeps ``max_prompt_length`` (default 128) of the prompt and gives the
# completion ``max_length`` less that: 32 - 128 left no completion token, a zero loss gradient
_PREFERENCE = {**_SMALL, "max_prompt_length": 16}
PREFERENCE = Family("preference", ("prompt", "chosen", "rejected"), ("ref_model",), _PREFERENCE)
# TPO: a preference triple plus the gold ``reference`` completion
TRIPLE = Family("triple preference", ("prompt", "chosen", "rejected", "reference"), (), _SMALL)
REWARD = Family("reward", ("chosen", "rejected"), (), _SMALL, labels=1)
PROMPT = Family("prompt", ("prompt",), ("reward_funcs",), _GENERATING)
# TRL 0.11 has no default text column (0.17 and 1.16 default to "text")
SFT = Family("sft", ("text",), (), {**_SMALL, "dataset_text_field": "text"})
KTO = Family("kto", ("prompt", "completion", "label"), ("ref_model",), _SMALL)
DISTILLATION = Family("distillation", ("prompt",), ("teacher_model",), _GENERATING)

#: class (or config) names in a class's MRO -> its family; the first name found wins
_BY_NAME: dict[str, Family] = {
    **dict.fromkeys(
        ("DPOTrainer", "CPOTrainer", "ORPOTrainer", "DPOConfig", "CPOConfig", "ORPOConfig"), PREFERENCE
    ),
    **dict.fromkeys(("RewardTrainer", "RewardConfig"), REWARD),
    **dict.fromkeys(
        ("GRPOTrainer", "RLOOTrainer", "AsyncGRPOTrainer", "GRPOConfig", "RLOOConfig", "AsyncGRPOConfig"),
        PROMPT,
    ),
    **dict.fromkeys(("TPOTrainer", "TPOConfig"), TRIPLE),
    **dict.fromkeys(("SFTTrainer", "SFTConfig"), SFT),
    "Seq2SeqTrainer": SEQ2SEQ,
    **dict.fromkeys(("KTOTrainer", "KTOConfig"), KTO),
    **dict.fromkeys(
        (
            "DistillationTrainer",
            "AsyncDistillationTrainer",
            "GKDTrainer",
            "DistillationConfig",
            "AsyncDistillationConfig",
            "GKDConfig",
        ),
        DISTILLATION,
    ),
}

#: an ``__init__`` parameter -> the family it implies, for classes that name no TRL base
_BY_PARAMETER: tuple[tuple[str, Family], ...] = (
    ("reward_funcs", PROMPT),
    ("teacher_model", DISTILLATION),
    ("ref_model", PREFERENCE),
)


def _names(cls: type) -> list[str]:
    return [c.__name__ for c in getattr(cls, "__mro__", (cls,))]


def detect(cls: type, arguments: type | None = None) -> Family:
    """The family of the Trainer subclass ``cls`` (``arguments``: the config class its ``__init__``
    annotates ``args`` with, when known); ``TRAINER`` (the oracle's tensor rows) when nothing says."""
    for name in _names(cls) + (_names(arguments) if arguments is not None else []):
        if name in _BY_NAME:
            return _BY_NAME[name]
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return TRAINER
    for parameter, family in _BY_PARAMETER:
        if parameter in params:
            return family
    return TRAINER


# Short sentences the toy tokenizer was trained on (``trainwright.toy.DEFAULT_CORPUS``'s words), so
# every string is a handful of real BPE tokens.
_PROMPTS = (
    "Question: what is two plus two?",
    "A helpful assistant answers",
    "The quick brown fox",
    "Good answers are",
    "hello world thanks",
    "user assistant system",
    "Question: what is 3 plus 4?",
    "Bad answers are",
)
_GOOD = ("four.", "questions clearly.", "jumps over the dog.", "short and kind.")
_BAD = ("rude or wrong.", "no maybe", "the lazy", "wrong answer")


def rows(family: Family, n: int) -> list[dict[str, Any]]:
    """``n`` rows of ``family``'s columns, deterministic (row ``i`` is the same in every run)."""
    out = []
    for i in range(n):
        prompt, good, bad = _PROMPTS[i % len(_PROMPTS)], _GOOD[i % len(_GOOD)], _BAD[i % len(_BAD)]
        values: dict[str, Any] = {
            "prompt": prompt,
            "chosen": f" {good}" if "prompt" in family.columns else f"{prompt} {good}",
            "rejected": f" {bad}" if "prompt" in family.columns else f"{prompt} {bad}",
            "completion": f" {good if i % 2 == 0 else bad}",
            "reference": f" {_GOOD[(i + 1) % len(_GOOD)]}",
            "label": i % 2 == 0,
            "text": f"{prompt} {good}",
        }
        out.append({c: values[c] for c in family.columns})
    return out


def datasets_for(family: Family, n_train: int, n_eval: int) -> tuple[Any, Any]:
    """``(train, eval)`` as ``datasets.Dataset``s of ``family``'s rows (imports ``datasets``)."""
    from datasets import Dataset  # the child side only: this module is imported torch-free

    return Dataset.from_list(rows(family, n_train)), Dataset.from_list(
        rows(family, n_train + n_eval)[n_train:]
    )


def tokenised_pairs(dataset: Any, tokenizer: Any) -> Any:
    """``dataset``'s ``chosen``/``rejected`` texts as the token columns TRL before 0.12 reads
    (``input_ids_chosen``, ``attention_mask_chosen``, ``..._rejected``). Why: TRL 0.11's
    ``RewardTrainer`` (the 4.45 folder's) tokenises nothing itself, as its users did, while 0.12 and
    later tokenise the text columns; the same rows then train on every release."""

    def pair(row: dict[str, Any]) -> dict[str, Any]:
        chosen, rejected = tokenizer(row["chosen"]), tokenizer(row["rejected"])
        return {
            "input_ids_chosen": chosen["input_ids"],
            "attention_mask_chosen": chosen["attention_mask"],
            "input_ids_rejected": rejected["input_ids"],
            "attention_mask_rejected": rejected["attention_mask"],
        }

    return dataset.map(pair, remove_columns=list(REWARD.columns))


def length_reward(completions: list[Any], **_: Any) -> list[float]:
    """The toy reward for generating trainers: a completion's length in characters (deterministic,
    and different across a group, so advantages are not all zero)."""
    return [float(len(c if isinstance(c, str) else str(c))) for c in completions]


def extras(family: Family, model: Callable[[int], Any]) -> dict[str, Any]:
    """The constructor arguments ``family`` needs beyond the Trainer's, built from the toy model
    (``model(seed)``): ``reward_funcs`` (``length_reward``), ``teacher_model`` (a second toy model with
    other weights: a teacher equal to the student would give a zero loss and train nothing)."""
    built: dict[str, Any] = {}
    if "reward_funcs" in family.extras:
        built["reward_funcs"] = [length_reward]
    if "ref_model" in family.extras:
        built["ref_model"] = model(0)
    if "teacher_model" in family.extras:
        built["teacher_model"] = model(1)
    return built
