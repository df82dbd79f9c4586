"""The files one process has read, and the class-level facts the rules share.

The project model knows classes from summaries; the ``Workspace`` adds what needs the text or the
tree: a method's node, whether some other method of the class hierarchy reads ``self.x`` to compute
something, which attributes hold a time read or count steps. Each fact is computed once per run.
Files are read and parsed once per process (``read_unit``) and kept, so a base class's file that
several subclasses need is parsed once.

``parsed`` may be shared by several workspaces (the flake8 plugin makes one per file, with the same
settings): it holds what is a pure function of a file's text and the enabled rules' text needs (the
source, the tree, the summary), never a fact about classes,
which depends on the modules a workspace's model holds.
"""

from __future__ import annotations

import ast
import re
import warnings
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from trainwright_lint.analysis import kinds as K
from trainwright_lint.analysis.facts import (
    CLASS_CLOCKS,
    CLASS_COUNTERS,
    CLASS_READERS,
    CLOCKS,
    COUNTERS,
    READER_SPANS,
    READERS,
    FactStore,
    SharedFact,
)
from trainwright_lint.analysis.unit import FileUnit
from trainwright_lint.project.model import ProjectModel, split_key
from trainwright_lint.project.summary import ClassSummary, MethodSummary, ModuleSummary, summarise
from trainwright_lint.sourcefile import read_source
from trainwright_lint.syntax import FunctionNode
from trainwright_lint.textscan import LiteralScan

# Attributes the Trainer itself reads on every step: writing them from an override is never only
# observing.
TRAINER_STATE_ATTRIBUTES = frozenset(
    {
        "model", "model_wrapped", "args", "state", "control", "optimizer", "lr_scheduler", "accelerator",
        "callback_handler", "processing_class", "tokenizer", "data_collator", "train_dataset", "eval_dataset",
        "compute_metrics", "is_in_train", "deepspeed", "ref_model", "beta", "temperature", "loss_type",
        "_train_batch_size", "current_gradient_accumulation_steps", "compute_loss_func", "label_smoother",
    }
)  # fmt: skip
_CLOCK_ATTR = re.compile(
    r"self\.(\w+)\s*=\s*(?:time\.(?:time|perf_counter|monotonic)(?:_ns)?|perf_counter|monotonic|"
    r"(?:datetime\.)?datetime\.(?:now|utcnow)|timeit\.default_timer)\s*\("
)
# ``self.x += 1`` (``self\.(\w+)\s*\+=\s*1\b``) is found from its ``+= 1``, then read back to ``self.``:
# a trainer's text says ``self.`` thousands of times, ``+= 1`` a few (``_counters``).
_PLUS_ONE = re.compile(r"\+=\s*1\b")
# What follows ``self.x`` when the mention only writes it: an assignment, or a subscripted or
# attribute-chained container being appended to / cleared (``self._metrics[mode]["x"].append(v)``).
_WRITE_AFTER = re.compile(
    r"(?:\[[^\[\]\n]{0,80}\])*\s*(?:[-+*/|]?=(?!=)|\.(?:append|extend|clear|update|add|setdefault|appendleft|insert)\()"
)


@dataclass(frozen=True, slots=True)
class MethodRef:
    """A method of a project class with the file that holds it, for rules that read another class's
    method (its node or text) without looking the file up again."""

    unit: FileUnit
    cls: ClassSummary
    method: MethodSummary

    def node(self) -> FunctionNode | None:
        return self.unit.method_node(self.cls, self.method)

    def text(self) -> str:
        return self.unit.text(self.method.first_line, self.method.end_line)


def parse_source(source: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours to print
        return ast.parse(source, filename=path)


#: path -> (source, tree, summary) of files already read: shareable across workspaces (see above)
ParsedFiles = dict[str, tuple[str, ast.Module, ModuleSummary]]


class Workspace:
    def __init__(
        self,
        model: ProjectModel,
        words: tuple[str, ...] = (),
        parsed: ParsedFiles | None = None,
        tracked: tuple[str, ...] = (),
    ) -> None:
        self.model = model
        self.words = words
        self.tracked = tracked  # the attributes whose instance stores the enabled rules track
        self.parsed: ParsedFiles = parsed if parsed is not None else {}
        self.units: dict[str, FileUnit] = {}
        self._unreadable: set[str] = set()
        self.facts = FactStore()  # hierarchy facts (``analysis.facts``)
        if model.loader is None:
            model.loader = self.load_summary

    def add(self, unit: FileUnit) -> None:
        """Add a file's unit, or replace it (a fixed file re-linted). A hierarchy fact may read any
        class of the hierarchy, in any file, so new text for a file already read drops them all, as
        the project model drops its class facts: a fix pass must judge the new text, not the old."""
        old = self.parsed.get(unit.path)
        if old is not None and old[0] != unit.source:
            self.facts = FactStore()
        self.units[unit.path] = unit
        self.parsed[unit.path] = (unit.source, unit.tree, unit.summary)
        if self.model.summaries.get(unit.path) is not unit.summary:
            self.model.add(unit.summary)

    def unit(self, path: str) -> FileUnit | None:
        found = self.units.get(path)
        if found is None and path not in self._unreadable:
            found = self.read_unit(path)
            if found is None:
                self._unreadable.add(path)
            else:
                self.units[path] = found
        return found

    def read_unit(self, path: str) -> FileUnit | None:
        known = self.parsed.get(path)
        if known is not None:
            return FileUnit(path, *known)  # a fresh unit: its memos are facts of this workspace only
        source = read_source(path)
        if source is None:
            return None
        try:
            tree = parse_source(source, path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        summary = self.model.summaries.get(path) or summarise(tree, path, source, self.words, self.tracked)
        self.parsed[path] = (source, tree, summary)
        return FileUnit(path, source, tree, summary)

    def load_summary(self, path: str) -> ModuleSummary | None:
        found = self.unit(path)
        return found.summary if found is not None else None

    # -- classes and methods -----------------------------------------------------------------------

    def class_of(self, key: str) -> tuple[FileUnit, ClassSummary] | None:
        split = split_key(key)
        if split is None:
            return None
        unit = self.unit(split[0])
        if unit is None:
            return None
        cls = unit.summary.classes.get(split[1])
        return (unit, cls) if cls is not None else None

    def method(self, key: str, name: str) -> MethodRef | None:
        found = self.class_of(key)
        if found is None or name not in found[1].methods:
            return None
        return MethodRef(found[0], found[1], found[1].methods[name])

    def project_mro(self, key: str) -> list[str]:
        return [k for k in self.model.info(key).mro_keys if split_key(k) is not None]

    def hierarchy(self, key: str) -> list[str]:
        """Project classes whose methods run on an instance of ``key``'s family: its MRO, its
        subclasses, and for a mixin the classes that use it and their MROs."""
        out = dict.fromkeys(self.project_mro(key))
        for sub in self.model.subclasses(key):
            out.setdefault(sub)
        for user in self.model.mixin_users().get(key, ()):
            for k in self.project_mro(user):
                out.setdefault(k)
        return list(out)

    def methods_of(self, keys: Iterable[str]) -> list[MethodRef]:
        refs: list[MethodRef] = []
        for key in keys:
            found = self.class_of(key)
            if found is None:
                continue
            unit, cls = found
            refs.extend(MethodRef(unit, cls, m) for m in cls.methods.values())
        return refs

    # -- shared facts -------------------------------------------------------------------------------

    def _class_text(self, key: str) -> str:
        found = self.class_of(key)
        if found is None:
            return ""
        unit, cls = found
        return unit.text(cls.line, cls.end_line)

    def clock_attributes(self, key: str) -> frozenset[str]:
        """``self.x`` attributes some class of the hierarchy assigns from the clock (``self.t0 =
        time.time()``): a condition on them is a condition on time."""
        return self._in_hierarchy(
            CLOCKS, CLASS_CLOCKS, key, _clock_attributes, ("time", "perf_counter", "monotonic")
        )

    def counters(self, key: str) -> frozenset[str]:
        """``self.x += 1`` attributes of the hierarchy: hand-made step counters."""
        return self._in_hierarchy(COUNTERS, CLASS_COUNTERS, key, _counters, ("+=",))

    def _in_hierarchy(
        self,
        whole: SharedFact[frozenset[str]],
        own: SharedFact[frozenset[str]],
        key: str,
        scan: Callable[[str], frozenset[str]],
        needed: tuple[str, ...],
    ) -> frozenset[str]:
        """What ``scan`` finds in the classes of ``key``'s hierarchy. Each class's text is searched
        once however many subclasses share it, and only when it holds one of the ``needed`` words (a
        literal search is far cheaper than the scan)."""

        def of_class(k: str) -> frozenset[str]:
            text = self._class_text(k)
            hit = any(word in text for word in needed)
            return scan(text) if hit else frozenset()

        def compute() -> frozenset[str]:
            found: set[str] = set()
            for k in self.hierarchy(key):
                mine: frozenset[str] = self.facts.get(own, k, partial(of_class, k))
                found.update(mine)
            return frozenset(found)

        return self.facts.get(whole, key, compute)

    def attribute_is_data(self, key: str, attr: str, writer: str) -> bool:
        """Whether ``self.<attr>`` feeds a computation: the Trainer reads it, or a method of the
        hierarchy other than ``writer`` (and other than the logging ones) reads it (a mention that
        only assigns it or appends to it does not count)."""
        if attr in TRAINER_STATE_ATTRIBUTES:
            return True
        return any(r != writer for r in self._attribute_readers(key, attr))

    def _attribute_readers(self, key: str, attr: str) -> frozenset[str]:
        """The methods of the hierarchy (logging ones left out) that read ``self.<attr>``."""

        def compute() -> frozenset[str]:
            found: set[str] = set()
            for k in self.hierarchy(key):
                found |= self._class_readers(k, attr)
            return frozenset(found)

        return self.facts.get(READERS, (key, attr), compute)

    def _class_readers(self, key: str, attr: str) -> frozenset[str]:
        """Methods of one class that read ``self.<attr>`` (a mention that only assigns it or appends
        to it does not count). Asked per attribute: the attributes a method writes are few, while
        the mentions of every ``self.x`` in a trainer file are thousands."""

        def compute() -> frozenset[str]:
            readers: set[str] = set()
            found = self.class_of(key)
            if found is not None:
                unit, cls = found
                spans, starts = self._reader_spans(key, cls)
                mention = LiteralScan(f"self.{attr}", r"\b")
                for line in sorted(unit.lines_matching(cls.line, cls.end_line, mention)):
                    i = bisect_right(starts, line) - 1
                    if i < 0 or line > spans[i][1]:
                        continue
                    method = spans[i][2]
                    if method.name not in readers and _reads(unit.text(line, line), attr):
                        readers.add(method.name)
            return frozenset(readers)

        return self.facts.get(CLASS_READERS, (key, attr), compute)

    def _reader_spans(
        self, key: str, cls: ClassSummary
    ) -> tuple[list[tuple[int, int, MethodSummary]], list[int]]:
        """The line spans of ``key``'s methods that may read an attribute to compute (the logging
        ones left out), sorted, with their first lines: one list per class, whichever attribute is
        asked about (a trainer asks about dozens)."""

        def compute() -> tuple[list[tuple[int, int, MethodSummary]], list[int]]:
            spans = sorted(
                (m.line, m.end_line, m) for m in cls.methods.values() if not _observation_purpose(m.name)
            )
            return spans, [first for first, _, _ in spans]

        return self.facts.get(READER_SPANS, key, compute)  # type: ignore[no-any-return]


def _clock_attributes(text: str) -> frozenset[str]:
    """``x`` of each ``self.x = <clock call>(`` (``self.t0 = time.perf_counter()``)."""
    return frozenset(_CLOCK_ATTR.findall(text))


def _counters(text: str) -> frozenset[str]:
    r"""``x`` of each ``self.x += 1``: what ``self\.(\w+)\s*\+=\s*1\b`` finds, read back from each
    ``+= 1`` (``\w`` and ``\s`` are ``str.isalnum``/``"_"`` and ``str.isspace``, as for ``re``)."""
    found: set[str] = set()
    for match in _PLUS_ONE.finditer(text):
        end = _space_before(text, match.start())
        start = end
        while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        if start < end and text.endswith("self.", 0, start):
            found.add(text[start:end])
    return frozenset(found)


def _space_before(text: str, at: int) -> int:
    """Where the white space that ends at ``at`` starts."""
    while at and text[at - 1].isspace():
        at -= 1
    return at


def _reads(text: str, attr: str) -> bool:
    needle = f"self.{attr}"
    start = text.find(needle)
    while start >= 0:
        end = start + len(needle)
        before_ok = start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_.")
        after_ok = end >= len(text) or not (text[end].isalnum() or text[end] == "_")
        if before_ok and after_ok and not _WRITE_AFTER.match(text, end):
            return True
        start = text.find(needle, end)
    return False


def _observation_purpose(name: str) -> bool:
    """Methods whose job is to report (``log``, ``log_metrics``, ``_print_samples``): reading an
    attribute there is observing it."""
    if name in ("log", "log_metrics", "save_metrics", "create_model_card", "__repr__", "__str__"):
        return True
    return K.hint_kind(name) in (K.TRACKER, K.PRINT)
