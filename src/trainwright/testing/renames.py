"""Stand-in programs for a keyword rename at a call site (TW304's fix), so the oracle can judge it.

Why: TW304's fix renames one keyword of a call the project's own script makes (``Trainer(tokenizer=tok)``
to ``processing_class=tok``; ``TrainingArguments(warmup_ratio=0.1)`` to ``warmup_steps=0.1``) and changes
nothing else. That script needs the project's data and models, so the oracle cannot run it; but what the
fix changes is only what the keyword means to the callee, on each release. A stand-in makes exactly that
call inside the oracle's own training: a Trainer subclass (of the callee, or of the Trainer the arguments
go to) whose ``__init__`` passes the keyword, with the call site's literal value, where the oracle's run
would pass its own. The two stand-ins (old keyword, new keyword) train as the project would before and
after the fix, as far as the keyword goes. Both keywords are first removed from the oracle's own
arguments (in the stand-ins and in their plain twin), so the keyword alone decides their value: a rename whose new name means something else on
some release (``warmup_steps=0.1`` is a ratio from 5.x, a tenth of a step on 4.x) trains differently there.

A value that is not a literal (``tokenizer=tok``) is only allowed for the processing-class keywords: the
stand-in passes the oracle's own tokenizer. Any other non-literal value cannot be stood in for.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwright.catalog.loader import load_catalog

#: Keywords whose value the oracle supplies itself (its tokenizer), whatever the call site passed.
PROCESSING = frozenset({"tokenizer", "processing_class"})


class NoStandIn(ValueError):
    """The rename cannot be stood in for: a value only the project has, or a callee not understood."""


@dataclass(frozen=True)
class Rename:
    """``callee(old=value)`` becomes ``callee(new=value)``. ``callee`` is dotted from its library
    (``transformers.TrainingArguments``, ``trl.SFTConfig``, ``transformers.Trainer``); ``value`` is the
    call site's source text of the value."""

    callee: str
    old: str
    new: str
    value: str

    @property
    def arguments(self) -> bool:
        """The callee builds arguments (``TrainingArguments``, a TRL ``...Config``), not a Trainer."""
        name = self.callee.rsplit(".", 1)[-1]
        return name.endswith(("Arguments", "Config"))

    def literal(self) -> str:
        """The value as a literal the stand-in can write, or ``NoStandIn``."""
        if self.old in PROCESSING and self.new in PROCESSING:
            return "processing_class"  # the oracle's own tokenizer, bound in ``__init__``
        try:
            ast.literal_eval(self.value)
        except (ValueError, SyntaxError) as error:
            raise NoStandIn(f"`{self.old}={self.value}`: a value only the project has") from error
        return self.value


def stand_in_values(rename: Rename) -> list[tuple[str, str]]:
    """``(value, what it stands for)`` for each stand-in pair of ``rename``: the call's own literal
    (``""``); else each literal the expression can evaluate to (both branches of ``a if c else b``, the
    operands of ``a or b``); else, with none, the new keyword's default in the catalogue's newest
    release. Why several: TW304 marks a rename safe only where the new name takes the old one's value
    unchanged, whatever it is, so the rename may be judged at any value; the values the call can take
    are the ones that matter. ``NoStandIn`` when the callee's catalogue has no default either."""
    try:
        return [(rename.literal(), "")]
    except NoStandIn:
        pass
    try:
        tree = ast.parse(rename.value, mode="eval").body
    except SyntaxError as error:
        raise NoStandIn(f"`{rename.old}={rename.value}`: not an expression") from error
    found = list(dict.fromkeys(_literals(tree)))
    if found:
        return [(v, f"a literal of `{rename.value}`") for v in found]
    default = _catalogue_default(rename)
    if default is None:
        raise NoStandIn(f"`{rename.old}={rename.value}`: a value only the project has, and no default")
    return [(default, f"`{rename.value}` unknown: the default of `{rename.new}=` in the catalogue")]


def _literals(node: ast.expr) -> list[str]:
    """The literal values ``node`` can evaluate to, as source: the branches of a conditional and of
    ``or``/``and``, recursively; nothing for any other non-literal."""
    if isinstance(node, ast.IfExp):
        return _literals(node.body) + _literals(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [v for value in node.values for v in _literals(value)]
    try:
        ast.literal_eval(node)
    except ValueError:
        return []
    return [ast.unparse(node)]


def _catalogue_default(rename: Rename) -> str | None:
    """The default (source text) of ``rename.new`` on ``rename.callee`` in its library's newest
    catalogued release; ``None`` when the catalogue does not know it."""
    library, _, name = rename.callee.partition(".")
    catalog = load_catalog(library)
    base = load_catalog("transformers").versions[-1] if library != "transformers" else None
    field = catalog.at(catalog.versions[-1]).argument_fields(name.rsplit(".", 1)[-1], base_version=base)
    found = field.get(rename.new)
    if found is None or found.default is None:
        return None
    try:
        ast.literal_eval(found.default)
    except (ValueError, SyntaxError):
        return None
    return found.default


_TRAINER = '''"""Stand-in for `{callee}({keyword}=...)` at a call site (trainwright.testing.renames)."""

from {module} import {name} as _Base


class StandInTrainer(_Base):
    def __init__(self, *args, processing_class=None, **kwargs):
        super().__init__(*args, **{{"{keyword}": {value}}}, **kwargs)
'''

_PLAIN_TRAINER = '''"""Plain twin of the stand-ins for `{callee}(...)` (trainwright.testing.renames)."""

from {module} import {name} as _Base


class StandInTrainer(_Base):
    pass
'''

_ARGUMENTS = '''"""{title} (trainwright.testing.renames)."""

import dataclasses

from {trainer_module} import {trainer} as _Base

_GONE = ({old!r}, {new!r})  # the oracle's own values of both keywords are dropped: the call's alone decides


class StandInTrainer(_Base):
    def __init__(self, *args, **kwargs):
        given = kwargs["args"]
        values = {{f.name: getattr(given, f.name) for f in dataclasses.fields(given) if f.init and f.name not in _GONE}}
        kwargs["args"] = type(given)(**values, **{given})
        super().__init__(*args, **kwargs)
'''

# The Trainer each arguments class goes to in the oracle's run (its family's trainer).
_TRAINER_OF = {
    "transformers.TrainingArguments": "transformers.Trainer",
    "transformers.Seq2SeqTrainingArguments": "transformers.Seq2SeqTrainer",
    "trl.SFTConfig": "trl.SFTTrainer",
    "trl.DPOConfig": "trl.DPOTrainer",
    "trl.RewardConfig": "trl.RewardTrainer",
    "trl.GRPOConfig": "trl.GRPOTrainer",
    "trl.KTOConfig": "trl.KTOTrainer",
}


def write_stand_ins(rename: Rename, folder: Path) -> tuple[Path, Path]:
    """The original's and the fixed program's stand-ins for ``rename``, written under ``folder``;
    ``NoStandIn`` when the value or the callee cannot be stood in for. A third, ``plain_<old>.py``,
    is the plain twin: across releases (the original fails on the newer one) each side is taken relative
    to it there, so what the library's own release changed (TRL 0.17's and 1.16's SFT losses, 0.17's
    printed tables) does not count against the rename.

    The twin differs from the stand-ins only by the renamed keyword being absent: it drops the oracle's
    own values of both names as they do, so each release's default stands where the call's value would.
    Why not keep the oracle's own value there: the ratio then measures the call's value against the
    oracle's (``max_length=2048`` against a truncating ``32``), and two releases that weigh truncated
    tokens differently showed a 0.5 % difference the rename did not make. Nor the call's value under the
    name each release takes: on the newer release that twin is the fixed program itself, so the ratio is
    1 whatever the rename did (circular). A default that differs between the releases shows as a
    difference, never hides one."""
    value = rename.literal()
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for side, keyword in (("original", rename.old), ("fixed", rename.new), ("plain", None)):
        path = folder / f"{side}_{rename.old}.py"
        path.write_text(_source(rename, keyword, value), encoding="utf-8")
        out.append(path)
    return out[0], out[1]


def _source(rename: Rename, keyword: str | None, value: str) -> str:
    module, _, name = rename.callee.rpartition(".")
    if not rename.arguments:
        if keyword is None:  # the oracle passes its tokenizer under the name the release takes
            return _PLAIN_TRAINER.format(callee=rename.callee, module=module, name=name)
        return _TRAINER.format(callee=rename.callee, keyword=keyword, value=value, module=module, name=name)
    trainer = _TRAINER_OF.get(rename.callee)
    if trainer is None:
        raise NoStandIn(f"`{rename.callee}`: no Trainer the oracle trains with it")
    trainer_module, _, trainer_name = trainer.rpartition(".")
    # the plain twin drops both keywords too and passes neither: it differs from the stand-ins only by
    # the renamed keyword being absent (each release's own default stands for both sides)
    if keyword is None:
        title, given = f"Plain twin of the stand-ins for `{rename.callee}(...)`: neither keyword", "{}"
    else:
        title = f"Stand-in for `{rename.callee}({keyword}=...)` at a call site"
        given = f'{{"{keyword}": {value}}}'
    return _ARGUMENTS.format(
        title=title,
        given=given,
        old=rename.old,
        new=rename.new,
        trainer_module=trainer_module,
        trainer=trainer_name,
    )


_RENAME = re.compile(r"Rename the argument `(\w+)=` to `(\w+)=`")
_CALLEE = re.compile(r"is not accepted by `([\w.]+)`")


def renames_in(findings: Sequence[dict[str, Any]], source: str) -> list[Rename]:
    """The keyword renames of TW304's safe fixes among ``findings`` (the linter's JSON records of one
    file), each with the value its call site passes (read from ``source`` at the keyword's position)."""
    keywords = {
        (k.lineno, k.col_offset + 1): ast.get_source_segment(source, k.value) or ""
        for k in ast.walk(ast.parse(source))
        if isinstance(k, ast.keyword) and k.arg is not None
    }
    out = []
    for f in findings:
        fix = f.get("fix") or {}
        rename, callee = _RENAME.search(fix.get("message", "")), _CALLEE.search(f.get("message", ""))
        if f.get("code") != "TW304" or fix.get("applicability") != "safe" or not rename or not callee:
            continue
        where = (f["location"]["row"], f["location"]["column"])
        name = callee.group(1)
        out.append(
            Rename(
                callee=name if "." in name else f"transformers.{name}",
                old=rename.group(1),
                new=rename.group(2),
                value=keywords.get(where, ""),
            )
        )
    return out
