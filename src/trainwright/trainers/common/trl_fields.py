"""How a table of TRL 1.16 config fields says what trainwright's configs do with each (the tables themselves:
:mod:`trainwright.trainers.grpo.trl_fields`, :mod:`trainwright.trainers.dpo.trl_fields`; each config class
names its own as ``trl_fields``).

Why a table: a TRL script should run after changing only its import line. Fields we implement are
accepted; fields we do not implement must fail loudly *by name*, with the reason, instead of Python's
``TypeError: __init__() got an unexpected keyword argument`` (or, worse, being silently ignored).
One table drives three things, so they cannot drift apart:

* :func:`refuse_unsupported_trl_options`, called when a config is constructed
  (:class:`trainwright.trainers.common.config_checks.TRLCompatibleConfig`);
* the field tables of ``docs/trainers.md`` (:func:`render_markdown` prints them; a test checks that the
  page holds exactly this rendering);
* a test that introspects TRL's dataclasses and checks every TRL field is listed and is accepted or
  refused as listed.

Statuses: ``supported`` (same meaning and default as TRL), ``different`` (accepted, but the default or
the behaviour differs: the note says how), ``not supported`` (refused with a ``TypeError``).
The table lists every field TRL adds to ``TrainingArguments`` and every ``TrainingArguments`` field
whose default TRL changes; all other ``TrainingArguments`` fields behave as in transformers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

SUPPORTED = "supported"
DIFFERENT = "different"
UNSUPPORTED = "not supported"
STATUSES = (SUPPORTED, DIFFERENT, UNSUPPORTED)


@dataclass(frozen=True)
class TRLField:
    """How one TRL config field maps onto trainwright: a status and a one-line note (the why).

    ``text`` is the note, or a function returning it when the note is derived from a registry that may grow
    (GRPO's ``loss_type`` lists the registered losses).
    """

    status: str
    text: str | Callable[[], str] = ""

    @property
    def note(self) -> str:
        return self.text() if callable(self.text) else self.text


def supported(note: str | Callable[[], str] = "") -> TRLField:
    """A field with TRL's meaning and default (the note, if any, adds a detail)."""
    return TRLField(SUPPORTED, note)


def different(note: str) -> TRLField:
    """A field accepted with another default or behaviour: the note says how."""
    return TRLField(DIFFERENT, note)


def unsupported(note: str) -> TRLField:
    """A field refused by name at construction: the note says why."""
    return TRLField(UNSUPPORTED, note)


# Fields that mean the same in both TRL configs.
COMMON_FIELDS: dict[str, TRLField] = {
    "model_init_kwargs": supported(
        "`from_pretrained` kwargs when a model (policy, reference or reward model) is given as an id or "
        "local folder; `dtype` defaults to float32, as in TRL"
    ),
    "trust_remote_code": supported("passed to every `from_pretrained` (models and tokenizers)"),
    "bf16": different(
        "`TrainingArguments`' default (off) is kept; TRL turns bf16 on whenever fp16 is off, even on CPU"
    ),
    "gradient_checkpointing": different("`TrainingArguments`' default (off) is kept; TRL turns it on"),
    "learning_rate": different(
        "`TrainingArguments`' default (5e-5) is kept; TRL's is 1e-6: set it explicitly when porting a script "
        "that relied on TRL's"
    ),
}


class UnsupportedTRLOptionError(TypeError):
    """A TRL config option that trainwright refuses (a ``TypeError``, like any unknown keyword)."""


def refuse_unsupported_trl_options(
    config_name: str, table: Mapping[str, TRLField], kwargs: Mapping[str, Any]
) -> None:
    """Raise :class:`UnsupportedTRLOptionError` naming every TRL-only option in ``kwargs`` that ``table``
    (``config_name``'s) marks unsupported."""
    refused = [name for name in kwargs if name in table and table[name].status == UNSUPPORTED]
    if not refused:
        return
    reasons = "; ".join(f"{name}: {table[name].note}" for name in refused)
    names = ", ".join(refused)
    raise UnsupportedTRLOptionError(
        f"{config_name} got {names}: TRL {config_name} option(s) that trainwright does not support "
        f"({reasons}). Remove them; docs/trainers.md lists every TRL option and what trainwright does with it."
    )


def render_markdown(table: Mapping[str, TRLField]) -> str:
    """The docs table of a config's fields (``docs/trainers.md`` holds exactly this text)."""
    lines = ["| TRL field | trainwright | why / how |", "|---|---|---|"]
    for name, entry in sorted(table.items()):
        lines.append(f"| `{name}` | {entry.status} | {entry.note} |")
    return "\n".join(lines)


__all__ = [
    "COMMON_FIELDS",
    "DIFFERENT",
    "STATUSES",
    "SUPPORTED",
    "UNSUPPORTED",
    "TRLField",
    "UnsupportedTRLOptionError",
    "different",
    "refuse_unsupported_trl_options",
    "render_markdown",
    "supported",
    "unsupported",
]
