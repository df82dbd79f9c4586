"""Edit descriptions: what the fixer is asked to change, as plain picklable data.

A rule attaches one of these to its finding (``Finding.fix``): the finding carries everything its fix
needs, so the fixer never re-classifies a class. The libcst transformers in ``fixes/`` apply it. Positions are the finding's 1-based
line of the ``def`` / call / attribute; the libcst transformers in this package find the node by that
line and its shape, never by column (ast counts columns in UTF-8 bytes, libcst in characters).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class NewParam:
    """A parameter an ``AddParams`` fix adds to an override's signature."""

    name: str
    default: str  # source text of the default value
    keyword_only: bool = False
    # Index among the base method's positional parameters (self not counted); a super() call already
    # passing that many positional arguments fills it, so it is not forwarded again by keyword.
    position: int | None = None


@dataclass(frozen=True)
class AddParams:
    """TW301: add missing parameters (with defaults) and forward them to ``super().<method>(...)``."""

    method: str
    line: int
    params: tuple[NewParam, ...]
    forward: tuple[NewParam, ...]  # passed on as ``name=name`` in super().<method>(...) calls
    unsafe: bool = False

    def describe(self) -> str:
        text = f"Add {_quoted(f'{p.name}={p.default}' for p in self.params)} to `{self.method}`"
        if self.forward:
            text += f" and pass {_quoted(p.name for p in self.forward)} on to `super().{self.method}()`"
        return text


@dataclass(frozen=True)
class DropArgs:
    """TW302: drop the arguments of ``super().<method>(...)`` the target release cannot accept."""

    method: str
    line: int
    drop_self: bool  # an explicit leading ``self``
    keywords: tuple[str, ...]  # keyword arguments to drop
    keep_positional: int | None  # keep at most this many positional arguments (None: all)
    unsafe: bool = False

    def describe(self) -> str:
        dropped = ["the explicit `self`"] if self.drop_self else []
        if self.keywords:
            dropped.append(_quoted(f"{k}=" for k in self.keywords))
        if self.keep_positional is not None:
            dropped.append(f"positional arguments after the first {self.keep_positional}")
        return f"Remove {' and '.join(dropped) or 'the rejected arguments'} from `super().{self.method}()`"


@dataclass(frozen=True)
class RenameSelfAttribute:
    """TW303: ``self.<old>`` read -> ``self.<new>`` on one line."""

    line: int
    old: str
    new: str
    unsafe: bool = False

    def describe(self) -> str:
        return f"Replace `self.{self.old}` with `self.{self.new}`"


@dataclass(frozen=True)
class AddVarKeyword:
    """TW402: give an event method ``**kwargs``."""

    method: str
    line: int
    unsafe: bool = False

    def describe(self) -> str:
        return f"Add `**kwargs` to `{self.method}`"


@dataclass(frozen=True)
class RenameMethod:
    """TW401 (unsafe: it changes when the code runs): rename a method defined on ``line``."""

    method: str
    line: int
    new: str
    unsafe: bool = True

    def describe(self) -> str:
        return f"Rename `{self.method}` to `{self.new}`"


@dataclass(frozen=True)
class RenameKeyword:
    """TW304: ``f(old=value)`` -> ``f(new=value)`` in the call that starts on ``line``."""

    line: int
    old: str
    new: str
    unsafe: bool = False

    def describe(self) -> str:
        return f"Rename the argument `{self.old}=` to `{self.new}=`"


def _quoted(names: Iterable[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


Edit = AddParams | DropArgs | RenameSelfAttribute | AddVarKeyword | RenameMethod | RenameKeyword
