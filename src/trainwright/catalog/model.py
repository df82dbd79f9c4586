"""Typed, immutable records of the catalogue: signatures, call sites, methods, events, guidance.

Why frozen dataclasses: the catalogue is shared, cached data (``load_catalog()`` returns one object per
process); immutability lets the linter and the CLI hand these records around without defensive copies.
Nothing here imports torch or transformers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

# Parameter kinds, named exactly as ``inspect.Parameter.kind.name`` so live introspection compares 1:1.
POSITIONAL_ONLY = "POSITIONAL_ONLY"
POSITIONAL_OR_KEYWORD = "POSITIONAL_OR_KEYWORD"
VAR_POSITIONAL = "VAR_POSITIONAL"
KEYWORD_ONLY = "KEYWORD_ONLY"
VAR_KEYWORD = "VAR_KEYWORD"
PARAM_KINDS: tuple[str, ...] = (
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_POSITIONAL,
    KEYWORD_ONLY,
    VAR_KEYWORD,
)

METHOD_KINDS: tuple[str, ...] = ("method", "property", "staticmethod", "classmethod")
VERDICTS: tuple[str, ...] = ("override", "callback", "argument", "avoid")


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a definition; ``default`` is the default's source text (``None``: no default)."""

    name: str
    kind: str
    default: str | None = None

    @property
    def has_default(self) -> bool:
        return self.default is not None


def _render(params: tuple[Param, ...]) -> str:
    """Render parameters the way ``inspect.Signature`` prints them, without annotations."""
    parts: list[str] = []
    saw_star = False
    for i, p in enumerate(params):
        if p.kind == KEYWORD_ONLY and not saw_star:
            parts.append("*")
            saw_star = True
        if p.kind == VAR_POSITIONAL:
            parts.append("*" + p.name)
            saw_star = True
        elif p.kind == VAR_KEYWORD:
            parts.append("**" + p.name)
        else:
            parts.append(p.name if p.default is None else f"{p.name}={p.default}")
        is_last_posonly = p.kind == POSITIONAL_ONLY and (
            i + 1 == len(params) or params[i + 1].kind != POSITIONAL_ONLY
        )
        if is_last_posonly:
            parts.append("/")
    return "(" + ", ".join(parts) + ")"


@dataclass(frozen=True, slots=True)
class Signature:
    """A definition signature (annotations dropped).

    ``bound`` says whether the first parameter receives the instance (``self``/``cls``): true for
    methods, properties and classmethods, false for staticmethods. ``accepts`` never counts it.
    """

    params: tuple[Param, ...]
    bound: bool = True

    @property
    def text(self) -> str:
        return _render(self.params)

    def __str__(self) -> str:
        return self.text

    @property
    def call_params(self) -> tuple[Param, ...]:
        """The parameters a caller fills in (the instance parameter removed)."""
        return self.params[1:] if self.bound and self.params else self.params

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def accepts(
        self,
        n_positional: int,
        keywords: Iterable[str] = (),
        star_args: bool = False,
        star_kwargs: bool = False,
    ) -> bool:
        """Could a call with ``n_positional`` positional arguments and these keyword names bind?

        ``star_args``/``star_kwargs`` mean the call also unpacks ``*x``/``**y`` of unknown content; the
        answer is then "can bind for some content" (missing required parameters may come from them).
        Mirrors Python's binding rules: too many positionals, an unknown keyword, a keyword for a
        parameter already filled positionally, or a required parameter left empty all fail.
        """
        params = self.call_params
        positional = [p for p in params if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
        has_var_pos = any(p.kind == VAR_POSITIONAL for p in params)
        has_var_kw = any(p.kind == VAR_KEYWORD for p in params)
        if n_positional < 0:
            raise ValueError(f"n_positional must be >= 0, got {n_positional}")
        if n_positional > len(positional) and not has_var_pos:
            return False
        bound = {p.name for p in positional[:n_positional]}
        by_name = {p.name: p for p in params if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}
        seen: set[str] = set()
        for kw in keywords:
            if kw in seen:
                return False
            seen.add(kw)
            target = by_name.get(kw)
            if target is None:
                if not has_var_kw:
                    return False
                continue
            if kw in bound:
                return False  # "got multiple values for argument"
            bound.add(kw)
        for p in params:
            if p.name in bound or p.has_default or p.kind in (VAR_POSITIONAL, VAR_KEYWORD):
                continue
            if p.kind == POSITIONAL_ONLY and star_args:
                continue
            if p.kind == POSITIONAL_OR_KEYWORD and (star_args or star_kwargs):
                continue
            if p.kind == KEYWORD_ONLY and star_kwargs:
                continue
            return False
        return True


@dataclass(frozen=True, slots=True)
class CallSite:
    """How the library itself calls a method: from ``caller``, with this argument shape (self not counted)."""

    caller: str
    n_positional: int
    keywords: tuple[str, ...] = ()
    star_args: bool = False
    star_kwargs: bool = False

    def describe(self) -> str:
        parts = [f"{self.n_positional} positional"]
        if self.keywords:
            parts.append("keywords " + ", ".join(self.keywords))
        if self.star_args:
            parts.append("*args")
        if self.star_kwargs:
            parts.append("**kwargs")
        return f"{self.caller}: " + "; ".join(parts)


@dataclass(frozen=True, slots=True)
class MethodInfo:
    """A method of a Trainer class at one release."""

    name: str
    owner: str
    library: str
    private: bool
    signature: Signature
    call_sites: tuple[CallSite, ...]
    called: bool
    kind: str = "method"


@dataclass(frozen=True, slots=True)
class MethodHistory:
    """A method across every covered release (``last`` is ``None`` while it is still in the newest)."""

    name: str
    owner: str
    private: bool
    first: str
    last: str | None
    signatures: tuple[tuple[str, str | None, Signature], ...]
    never_called: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class EventInfo:
    """A ``TrainerCallback`` event: firing order within ``train()``, when it fires, kwargs it receives."""

    name: str
    order: int
    fires: str
    kwargs: tuple[str, ...]
    since: str
    until: str | None


@dataclass(frozen=True, slots=True)
class Guidance:
    """Hand-written advice for a commonly overridden method or an event: subclass, callback or argument."""

    name: str
    verdict: str
    summary: str
    events: tuple[str, ...] = ()
    public_methods: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()
    callbacks: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()


# ------------------------------------------------------------------- facts for the linter (lazily loaded)


@dataclass(frozen=True, slots=True)
class StatementOwner:
    """A catalogued method whose body has a given statement, and the releases it is there in.

    ``cls`` is the canonical dotted class that defines the method (``transformers.trainer.Trainer``);
    ``last`` is ``None`` while the statement is still in the newest covered release.
    """

    cls: str
    method: str
    first: str
    last: str | None

    @property
    def short_cls(self) -> str:
        """``Trainer`` for ``transformers.trainer.Trainer``."""
        return self.cls.rpartition(".")[2]

    @property
    def qualname(self) -> str:
        """``Trainer._inner_training_loop``."""
        return f"{self.short_cls}.{self.method}"


class ReleaseMatch(NamedTuple):
    """The covered release an override's statements are closest to (``UpstreamFingerprints.best_release``).

    ``matching`` of the ``total`` distinct statements given are in that release's method; the other
    ``total - matching`` are the user's own (changed or added).
    """

    version: str
    matching: int
    total: int


@dataclass(frozen=True, slots=True)
class ClassInfo:
    """A class of the library at one release: canonical dotted name, direct bases, public aliases."""

    name: str
    bases: tuple[str, ...]
    exported_as: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        return self.name.rpartition(".")[0]

    @property
    def short_name(self) -> str:
        return self.name.rpartition(".")[2]


@dataclass(frozen=True, slots=True)
class ArgumentField:
    """One dataclass field of an arguments/config class (``TrainingArguments``, ``GRPOConfig``, ...).

    Param-like: ``name``, ``default`` (source text, ``None`` when required or when ``default_factory``
    gives it) and ``kind``. ``owner`` is the canonical class whose body declares it; ``init`` false
    means ``__init__`` does not take it.
    """

    name: str
    default: str | None
    default_factory: str | None = None
    init: bool = True
    owner: str = ""

    @property
    def has_default(self) -> bool:
        return self.default is not None or self.default_factory is not None

    @property
    def kind(self) -> str:
        return POSITIONAL_OR_KEYWORD


@dataclass(frozen=True, slots=True)
class Rename:
    """A removed or deprecated argument with a replacement (``evaluation_strategy`` -> ``eval_strategy``).

    ``new_since``: first covered release with the new name (``None`` if no covered release has it);
    ``old_until``: last covered release in which passing the old name still works (a field, a parameter
    or a deprecation shim), ``None`` while it still works in the newest. ``exact``: the old name's value
    can be passed unchanged under the new name (a one-to-one rename); otherwise ``evidence`` says how.
    ``cls`` is the canonical class the rename belongs to. ``exact_since``: see the field.
    """

    old: str
    new: str
    new_since: str | None
    old_until: str | None
    exact: bool = True
    evidence: str = ""
    cls: str = ""
    # first covered release where the old value means the same under the new name: where the shim that
    # maps it appeared (``warmup_steps`` existed long before it took ``warmup_ratio``'s fraction, in 5.0);
    # ``None``: wherever the new name exists
    exact_since: str | None = None


class ReleaseClasses(Protocol):
    """What ``upstream`` needs of one release's view (``loader.VersionView``): its class graph."""

    def mro(self, cls: str) -> tuple[str, ...]: ...


class CatalogReleases(Protocol):
    """What the lazily loaded fact tables (``structure``, ``upstream``) need of a ``Catalog``: its
    library, its releases and the range lookup over them. A protocol, so that those modules do not
    import the loader that loads them."""

    library: str
    versions: tuple[str, ...]
    _index: dict[str, int]

    def _find(self, spans: list[list[Any]], index: int) -> list[Any] | None: ...

    def resolve_version(self, version: str | None = None) -> str: ...

    def resolve_class(self, cls: str, version: str | None = None) -> str | None: ...

    def at(self, version: str | None = None) -> ReleaseClasses: ...
