"""Edit descriptions: what the fixer is asked to change, as plain picklable data.

``plan`` builds one of these for a fixable finding (a rule may also attach one to ``Finding.fix``
itself); the libcst transformers apply it. Positions are the finding's 1-based
line of the ``def`` / call / attribute; the libcst transformers in this package find the node by that
line and its shape, never by column (ast counts columns in UTF-8 bytes, libcst in characters).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NewParam:
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


@dataclass(frozen=True)
class DropArgs:
    """TW302: drop the arguments of ``super().<method>(...)`` the target release cannot accept."""

    method: str
    line: int
    drop_self: bool  # an explicit leading ``self``
    keywords: tuple[str, ...]  # keyword arguments to drop
    keep_positional: int | None  # keep at most this many positional arguments (None: all)
    unsafe: bool = False


@dataclass(frozen=True)
class RenameSelfAttribute:
    """TW303: ``self.<old>`` read -> ``self.<new>`` on one line."""

    line: int
    old: str
    new: str
    unsafe: bool = False


@dataclass(frozen=True)
class AddVarKeyword:
    """TW402: give an event method ``**kwargs``."""

    method: str
    line: int
    unsafe: bool = False


@dataclass(frozen=True)
class RenameMethod:
    """TW401 (unsafe: it changes when the code runs): rename a method defined on ``line``."""

    method: str
    line: int
    new: str
    unsafe: bool = True


Edit = AddParams | DropArgs | RenameSelfAttribute | AddVarKeyword | RenameMethod
