"""Which upstream callers of an override still run for a class, and the catalogue facts that decide it.

TW301 (an override that cannot take what its callers pass) and TW305 (a public contract the override
breaks) both ask the same question of every call site the catalogue records: does its caller still run
for this class? A caller the project overrides without delegating to ``super()`` does not, nor one reached
only through such callers. The answer is computed once per class and release point through the fact
store (``LIVE``, ``LIVE_CALLER``) and shared by both rules; it reads only the class's context
(``CallerContext``), never a rule.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol, TypeVar

from trainwright_lint.analysis.facts import CLASS, SharedFact
from trainwright_lint.analysis.release_facts import Fact, library_class_fact, library_fact, trainer_fact
from trainwright_lint.analysis.workspace import Workspace
from trainwright_lint.project.summary import MethodSummary

if TYPE_CHECKING:
    from trainwright.catalog import CallSite, Catalog, MethodInfo, Signature, VersionView

T = TypeVar("T")


class CallerContext(Protocol):
    """What the caller analysis reads of a class at one release point (``rules.base.ClassContext``)."""

    key: str
    users: tuple[str, ...]
    workspace: Workspace
    catalog: Catalog | None
    catalog_cls: str | None
    library_catalog: Catalog | None
    library_cls: str | None
    library_view: VersionView | None

    @property
    def target(self) -> str | None: ...

    def fact(self, fact: SharedFact[T], key: Hashable, compute: Callable[[], T]) -> T: ...

    def trainer_method(self, name: str) -> MethodInfo | None: ...

    def library_method(self, name: str) -> MethodInfo | None: ...


# The class's shared facts (``analysis.facts``), the same at every release point: the upstream methods
# it replaces, with the project's text (key: None).
REPLACED: SharedFact[tuple[set[str], list[str]]] = SharedFact("replaced upstream methods", CLASS)
# The project's own text calls an upstream caller (key: the caller's name); the same at every release.
SUPER_CALL: SharedFact[bool] = SharedFact("super() calls the caller", CLASS, (REPLACED,))
SELF_REFERENCE: SharedFact[bool] = SharedFact("self.<caller> in the project", CLASS, (REPLACED,))
LIVE_CALLER: SharedFact[bool] = SharedFact(
    "upstream caller runs", CLASS, (REPLACED, SUPER_CALL, SELF_REFERENCE)
)  # key: (release point, library, caller)
LIVE: SharedFact[LiveCallers] = SharedFact(
    "live callers", CLASS, (REPLACED, LIVE_CALLER)
)  # key: the release point


def call_site_reads(ctx: CallerContext, method: MethodSummary) -> tuple[Fact, ...]:
    """The catalogue facts that decide the upstream checks of ``method``: its own and those of every
    method that may call it (whether a call still runs), on each side that has, in some covered
    release, a call site the override cannot bind. None: the checks fail at every release alike."""
    return _call_site_reads(
        ctx.catalog, ctx.catalog_cls, ctx.library_catalog, ctx.library_cls, method.name, method.signature
    )


@lru_cache(maxsize=4096)
def _call_site_reads(
    catalog: Catalog | None,
    catalog_cls: str | None,
    library_catalog: Catalog | None,
    library_cls: str | None,
    name: str,
    signature: Signature,
) -> tuple[Fact, ...]:
    """``call_site_reads`` from what it depends on alone: the catalogues and the override's name and
    signature, which many classes share (432 asks, 147 distinct on TRL's source)."""
    reads: list[Fact] = []
    sides = ((catalog, catalog_cls, trainer_fact), (library_catalog, library_cls, library_fact))
    for side_catalog, cls, fact in sides:
        if side_catalog is None or cls is None or not side_catalog.ever_defined(name, cls=cls):
            continue
        if all(
            signature.accepts(s.n_positional, s.keywords, s.star_args, s.star_kwargs)
            for _first, _last, sites in side_catalog.call_history(name, cls=cls)
            for s in sites
        ):
            continue
        callers = [name, *side_catalog.caller_closure(name, cls=cls)]
        for (_caller, callee), passers in _HANDED_ON.items():  # their liveness decides too
            if callee == name:
                callers += [n for p in passers for n in (p, *side_catalog.caller_closure(p, cls=cls))]
        reads += [fact(cls, n) for n in dict.fromkeys(callers)]
        if fact is library_fact:
            reads.append(library_class_fact(cls))
    return tuple(reads)


def live_callers(ctx: CallerContext) -> LiveCallers:
    """The live callers at ``ctx``'s release point, shared by the class's methods judged there."""
    point = (ctx.target, ctx.library_view.version if ctx.library_view is not None else None)
    return ctx.fact(LIVE, point, lambda: LiveCallers(ctx, point))


# Methods the Trainer hands on as a value instead of calling them: ``get_train_dataloader`` passes
# ``sampler_fn=self._get_train_sampler`` to ``_get_dataloader``, which calls ``sampler_fn(dataset)``. The
# catalogue records that call under ``_get_dataloader`` (which every dataloader getter reaches), but it
# runs only while a method that hands the value on runs: a class whose own ``get_train_dataloader`` calls
# ``self._get_train_sampler()`` never gets the dataset passed. (caller, callee) -> the methods handing it on.
_HANDED_ON: dict[tuple[str, str], tuple[str, ...]] = {
    ("_get_dataloader", "_get_train_sampler"): ("get_train_dataloader",),
    ("_get_dataloader", "_get_eval_sampler"): ("get_eval_dataloader", "get_test_dataloader"),
}


# Callers in another module that only callback events run, with those events and the upstream method that
# fires them: the SIGTERM checkpoint of ``enable_jit_checkpoint`` saves (``_save_checkpoint(model,
# trial=None)``) only from ``JITCheckpointCallback.on_step_begin/on_pre_optimizer_step/on_step_end/
# on_epoch_end``, which fire in the training loop (``_inner_training_loop``, and ``_run_epoch`` that only it
# calls) on every release that has it. A class whose own ``train()`` replaces the loop and fires none of the
# events never takes that path; one whose loop fires them does.
_EVENT_DRIVEN: dict[str, tuple[tuple[str, ...], str]] = {
    "trainer_jit_checkpoint.CheckpointManager.execute_jit_checkpoint": (
        ("on_step_begin", "on_pre_optimizer_step", "on_step_end", "on_epoch_end"),
        "_inner_training_loop",
    ),
}


class LiveCallers:
    """Which upstream callers still run for this class: a caller the project overrides without
    delegating to ``super()`` does not, nor one reached only through such callers (a class whose own
    ``train()`` replaces the loop never reaches the Trainer's ``_inner_training_loop``). Callers from
    other modules (``integrations.deepspeed...``) and entry points (nothing upstream calls them) do,
    except one that only callback events drive (``_EVENT_DRIVEN``), which runs while they fire."""

    def __init__(self, ctx: CallerContext, point: tuple[str | None, str | None]) -> None:
        self.ctx = ctx
        self.point = point
        self.replaced, self.texts = ctx.fact(REPLACED, None, lambda: _replaced_methods(ctx))

    def transformers(self, caller: str) -> bool:
        return self._live("transformers", caller, set())

    def transformers_calling(self, callee: str) -> Callable[[str], bool]:
        """``transformers`` for the call sites of ``callee``: a call through a value that another method
        hands on (``_HANDED_ON``) runs only while one of those methods does."""

        def live(caller: str) -> bool:
            passers = _HANDED_ON.get((caller, callee))
            if passers is not None:
                return any(self.transformers(p) for p in passers)
            return self.transformers(caller)

        return live

    def trl(self, caller: str) -> bool:
        return self._live("trl", caller, set())

    def _live(self, library: str, caller: str, seen: set[str]) -> bool:
        if "." in caller:  # another module of the library calls it with the trainer object
            driven = _EVENT_DRIVEN.get(caller)
            return driven is None or self._fired(library, *driven, seen)
        return self.ctx.fact(
            LIVE_CALLER, (self.point, library, caller), lambda: self._judge(library, caller, seen)
        )

    def _fired(self, library: str, events: tuple[str, ...], firer: str, seen: set[str]) -> bool:
        """Whether one of ``events`` still fires for this class: the upstream method that fires them runs,
        or the project's own code dispatches one (``self.callback_handler.on_step_end(...)`` in a loop of
        its own)."""
        if self._live(library, firer, seen):
            return True
        return any(f".{event}(" in text for text in self.texts for event in events)

    def _judge(self, library: str, caller: str, seen: set[str]) -> bool:
        ctx, texts = self.ctx, self.texts
        if ctx.fact(SUPER_CALL, caller, lambda: _calls_upstream(texts, caller)):
            result = True  # ``super().<caller>(...)`` somewhere in the project runs the upstream method
        elif caller in self.replaced:
            result = False
        elif ctx.fact(SELF_REFERENCE, caller, lambda: _references(texts, caller)):
            result = True  # the project's own code calls (or hands on) the upstream method
        elif not caller.startswith("_"):
            result = True  # public API: users call it (``trainer.push_to_hub()``), whoever else does
        elif caller in seen:
            result = False  # a cycle in the call graph
        else:
            info = (
                self.ctx.trainer_method(caller)
                if library == "transformers"
                else self.ctx.library_method(caller)
            )
            sites = info.call_sites if info is not None else ()
            if not sites:
                result = True  # an entry point (the user calls it) or not a catalogued method
            else:
                result = any(self._live(library, s.caller, seen | {caller}) for s in sites)
        return result


def _replaced_methods(ctx: CallerContext) -> tuple[set[str], list[str]]:
    """Methods the class or a project class of its MRO (a mixin: of its users') overrides without
    calling ``super().<same>`` (the upstream version of those never runs), and the source of those
    classes, where ``self.<name>`` keeps an upstream method live even when its upstream caller is
    replaced (ProLong's own ``train()`` hands ``self._inner_training_loop`` to
    ``find_executable_batch_size``, so the Trainer's loop, and its ``compute_loss`` call, stay live).
    Substring scans, not regular expressions: this runs for every method of every class."""
    keys = list(ctx.workspace.project_mro(ctx.key))
    for user in ctx.users:
        keys += ctx.workspace.project_mro(user)
    replaced: set[str] = set()
    delegating: set[str] = set()
    texts: list[str] = []
    for key in keys:
        found = ctx.workspace.class_of(key)
        if found is None:
            continue
        unit, cls = found
        texts.append(unit.text(cls.line, cls.end_line))
        for m in cls.methods.values():
            if m.name in delegating or m.name in replaced:
                continue
            if _calls_super_of(unit.text(m.line, m.end_line), m.name):
                delegating.add(m.name)
            else:
                replaced.add(m.name)
    return replaced, texts


def _calls_super_of(text: str, name: str) -> bool:
    """``super().<name>`` or ``super(Cls, self).<name>`` somewhere in ``text``."""
    return any("super(" in line_before for line_before in _lines_before(text, f".{name}"))


def _calls_upstream(texts: list[str], name: str) -> bool:
    """``super().<name>(`` or ``super(Cls, self).<name>(`` in any of ``texts``: the upstream method runs
    even where the project overrides ``name`` itself (a loop that calls ``super().get_train_dataloader()``)."""
    needle = f".{name}("
    for text in texts:
        start = text.find(needle)
        while start != -1:
            before = text[text.rfind("\n", 0, start) + 1 : start].rstrip()
            if before.endswith(")") and "super(" in before:
                return True
            start = text.find(needle, start + len(needle))
    return False


def _references(texts: list[str], name: str) -> bool:
    """``self.<name>`` (the whole name) in any of ``texts``."""
    return any(True for text in texts for _ in _lines_before(text, f"self.{name}"))


def _lines_before(text: str, needle: str) -> Iterator[str]:
    """For each occurrence of ``needle`` not followed by a name character: its line up to it."""
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        if end == len(text) or not (text[end].isalnum() or text[end] == "_"):
            yield text[text.rfind("\n", 0, start) + 1 : start]
        start = text.find(needle, end)


def first_incompatible(
    signature: Signature, sites: Sequence[CallSite], live: Callable[[str], bool]
) -> CallSite | None:
    """The first call site ``signature`` cannot bind among those whose caller still runs."""
    for site in sites:
        if not live(site.caller):
            continue
        if not signature.accepts(site.n_positional, site.keywords, site.star_args, site.star_kwargs):
            return site
    return None
