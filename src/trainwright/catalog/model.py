"""Typed, immutable records of the catalogue: signatures, call sites, methods, events, guidance.

Why frozen dataclasses: the catalogue is shared, cached data (``load_catalog()`` returns one object per
process); immutability lets the linter and the CLI hand these records around without defensive copies.
Nothing here imports torch or transformers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

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
