"""The one registry of shared facts: each fact named by a typed ``SharedFact``, computed once per key.

Rules are predicates over facts (``rules/base.py``): a method's effects, its ``super()`` calls, the
attributes its class hierarchy reads, the upstream callers that still run. Each such fact is declared
once, as a module-level ``SharedFact`` next to the code that computes it, with the scope its key
names and the facts its computation reads (``needs``); a rule declares the facts it reads
(``Rule.FACTS``), as Fixit's rules declare their metadata providers. A test runs every rule alone
over its examples and checks that what it read is what it declared (with the ``needs`` closure).

Values live in a ``FactStore`` whose lifetime is the scope's: a file's and its methods' facts in its
``FileUnit`` (a re-read file starts afresh), a class's release-independent facts in the class's lint
(shared by every release point of the range), hierarchy facts in the ``Workspace``. Keys are what the
scope says: ``(class qualname, method line)`` for a method fact, a class key for a hierarchy fact.
Nothing else caches: an architecture test forbids ad-hoc memo dictionaries in ``rules/``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")

FILE = "file"  # key: whatever the fact says (a pattern), within one file
CLASS = "class"  # key: a name within the class being linted (release-independent, every release point)
METHOD = "method"  # key: (class qualname, method line[, more]) within one file
HIERARCHY = "hierarchy"  # key: a class key (and more): facts over a class's project hierarchy
SCOPES = (FILE, CLASS, METHOD, HIERARCHY)


@dataclass(frozen=True, eq=False)
class SharedFact(Generic[T]):
    """One kind of fact: its name, the scope its keys name, and the facts computing it reads.
    Compared by identity: two facts with the same name are still two facts."""

    name: str
    scope: str
    needs: tuple[SharedFact[Any], ...] = ()

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"{self.name}: unknown scope {self.scope!r}")

    def __repr__(self) -> str:
        return f"SharedFact({self.name!r})"


def closure(facts: Iterable[SharedFact[Any]]) -> set[SharedFact[Any]]:
    """``facts`` and every fact their computations read, transitively."""
    out: set[SharedFact[Any]] = set()
    stack = list(facts)
    while stack:
        fact = stack.pop()
        if fact not in out:
            out.add(fact)
            stack.extend(fact.needs)
    return out


class FactStore:
    """Values of shared facts by ``(fact, key)``, each computed on first use."""

    __slots__ = ("_values",)

    #: a hook for tests that check what each rule reads: called with every fact asked for
    observer: Callable[[SharedFact[Any]], None] | None = None

    def __init__(self) -> None:
        self._values: dict[tuple[SharedFact[Any], Hashable], Any] = {}

    def get(self, fact: SharedFact[T], key: Hashable, compute: Callable[[], T]) -> T:
        if FactStore.observer is not None:
            FactStore.observer(fact)
        found = self._values.get((fact, key), _MISSING)
        if found is _MISSING:
            found = self._values[(fact, key)] = compute()
        return found  # type: ignore[no-any-return]


_MISSING = object()


# ----------------------------------------------------------------------------------------------------
# The analyses' facts (rules declare their own next to their code). Values are typed by the
# annotation; the computations are where the docstrings say.

# A file's text indexes (``FileUnit.match_lines`` / ``names_matching``: key, the pattern's text) and
# its class nodes (``FileUnit.class_node``: key, the class's qualname).
MATCH_LINES: SharedFact[list[int]] = SharedFact("lines matching a pattern", FILE)
NAMES_MATCHING: SharedFact[dict[str, list[int]]] = SharedFact("names a pattern captures", FILE)
CLASS_NODE: SharedFact[Any] = SharedFact("class node", FILE)

# Over a class's project hierarchy (``Workspace``): key, a class key (and the attribute asked about).
CLASS_CLOCKS: SharedFact[frozenset[str]] = SharedFact("clock attributes of one class", HIERARCHY)
CLOCKS: SharedFact[frozenset[str]] = SharedFact("clock attributes", HIERARCHY, (CLASS_CLOCKS,))
CLASS_COUNTERS: SharedFact[frozenset[str]] = SharedFact("step counters of one class", HIERARCHY)
COUNTERS: SharedFact[frozenset[str]] = SharedFact("step counters", HIERARCHY, (CLASS_COUNTERS,))
READER_SPANS: SharedFact[Any] = SharedFact("computing methods' spans", HIERARCHY)
CLASS_READERS: SharedFact[frozenset[str]] = SharedFact(
    "methods of one class reading an attribute", HIERARCHY, (READER_SPANS, MATCH_LINES)
)
READERS: SharedFact[frozenset[str]] = SharedFact("methods reading an attribute", HIERARCHY, (CLASS_READERS,))

# Per class, the same at every release point (``ClassContext``): key, a name.
METHODS: SharedFact[Any] = SharedFact("own methods with their nodes", CLASS)

# Per method (``ClassContext``, ``analysis.observing``): key, (class qualname, method line).
EFFECTS: SharedFact[Any] = SharedFact("effects", METHOD, (CLOCKS, COUNTERS, READERS))
SUPER_CALLS: SharedFact[Any] = SharedFact("super() calls", METHOD, (MATCH_LINES,))
STATEMENTS: SharedFact[Any] = SharedFact("own statements", METHOD)
# Per function node of a file (``analysis.upstream``): key, (line, column) of its ``def``.
FINGERPRINTS: SharedFact[Any] = SharedFact("statement fingerprints", METHOD)
OBSERVATION: SharedFact[Any] = SharedFact("observing code", METHOD, (EFFECTS, FINGERPRINTS))

# What any rule reads without declaring it: the file's text indexes and class nodes (the engine reads
# the class nodes itself; a rule's narrowing scans read the indexes).
INDEXES: tuple[SharedFact[Any], ...] = (MATCH_LINES, NAMES_MATCHING, CLASS_NODE)
