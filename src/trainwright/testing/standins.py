"""Stand-ins for names a transformers or TRL release lacks, used only while the run never touches them.

Why: many projects import at module top a name their Trainer subclass's training path never uses
(``hf_bucket_url`` from ``transformers.file_utils``, ``EvaluationStrategy``, ``transformers.deepspeed``).
On a release without it the module does not import, before and after a fix alike, and the fix is never
judged. When the import fails on such a name, the oracle's child puts a stand-in in its place and
imports again. The stand-in raises :class:`OracleStandInUsed`, naming the name and the release, the
moment it is called, indexed, iterated, tested for truth, subclassed or has an attribute read; a touch
the program's own ``except`` swallows is still recorded (:meth:`StandIns.touched`) and fails the run.
So a run with stand-ins either never used them, or stops with that reason: the program trained exactly
as it would on a release that had the name and never used it.

``transformers`` and ``trl`` names get stand-ins, and so does a third-party package that is not
installed here at all (``import rdkit``, ``from loguru import logger``, ``import torchvision.transforms``:
torchvision has only CUDA builds for this torch). Most projects import such a package at module top for
code the Trainer's training path never runs (data preparation, plots, a chemistry toolkit); the run with
its stand-in either never touched it, or stops, naming it. A package that *is* installed but lacks a
submodule or name (version skew) stays a reason, and an import the program's own ``try``/``except``
catches gets nothing: only a failure that stops the import is stood in for. One exception is honest by
construction: ``is_<pkg>_available`` answers what is true here (``importlib.util.find_spec(pkg) is not
None``). Both programs of a case (original and fixed) run in
the same child with the same rule, and each record lists the stand-ins its program needed: the judge
compares the two lists (``scripts/oracle_matrix.py``).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

#: the packages whose missing names get stand-ins (a third-party package only when it is absent whole)
PACKAGES = ("transformers", "trl")
#: how many stand-ins one import may need before the oracle gives up (each costs a re-import)
LIMIT = 40

_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
_AVAILABLE = re.compile(r"^is_(\w+)_available$")


class OracleStandInUsed(RuntimeError):
    """The program touched a stand-in: it uses a name the release lacks, so it cannot run there."""


def _release(package: str) -> str:
    """``transformers 4.46.3``: the release of ``package`` this child imports."""
    try:
        return f"{package} {metadata.version(package)}"
    except metadata.PackageNotFoundError:
        return package


class StandIn:
    """A missing name: any use raises :class:`OracleStandInUsed` (and is remembered by ``owner``)."""

    __slots__ = ("_owner", "_what")

    def __init__(self, what: str, owner: StandIns) -> None:
        object.__setattr__(self, "_what", what)
        object.__setattr__(self, "_owner", owner)

    def _used(self, *_: Any, **__: Any) -> NoReturn:
        what = object.__getattribute__(self, "_what")
        owner = object.__getattribute__(self, "_owner")
        owner.touch(what)
        package = what.split(".")[0]
        if package in owner.absent:
            raise OracleStandInUsed(f"uses `{what}`, and {package} is not installed here")
        raise OracleStandInUsed(f"uses `{what}`, which {_release(package)} lacks")

    def __repr__(self) -> str:
        return f"<oracle stand-in for {object.__getattribute__(self, '_what')}>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # introspection (copy, pickle, inspect)
            raise AttributeError(name)
        self._used()

    __call__ = __getitem__ = __iter__ = __bool__ = __len__ = __contains__ = _used
    __mro_entries__ = __instancecheck__ = __subclasscheck__ = __setattr__ = _used


class StandInModule(ModuleType):
    """A missing module (``transformers.deepspeed``): each name imported from it is a stand-in."""

    def __init__(self, name: str, owner: StandIns) -> None:
        super().__init__(name)
        self.__path__: list[str] = []  # a package: a missing submodule of it gets a stand-in too
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return StandIn(f"{self.__name__}.{name}", self._owner)


def _available(package: str) -> Callable[..., bool]:
    """``is_<package>_available``, answered for this machine."""

    def is_available(*_: Any, **__: Any) -> bool:
        return importlib.util.find_spec(package) is not None

    is_available.__name__ = f"is_{package}_available"
    return is_available


def _import_errors(exc: BaseException) -> list[ImportError]:
    """The ``ImportError`` s in ``exc``'s chain (a lazy module's ``RuntimeError`` holds it as cause)."""
    out, seen = [], set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if isinstance(node, ImportError):
            out.append(node)
        node = node.__cause__ or node.__context__
    return out


def _ours(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def _is_stand_in(value: object) -> bool:
    return type(value) is StandIn or type(value) is StandInModule


def _not_installed(name: str) -> bool:
    """Whether the top-level package ``name`` is absent from this machine (not merely broken)."""
    if name in sys.modules:
        return False
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):
        return False


class StandIns:
    """The stand-ins installed for one program, what its run touched, and how to take them out."""

    def __init__(self) -> None:
        self.names: list[str] = []  # ``transformers.file_utils.hf_bucket_url``, in the order installed
        self.touched: list[str] = []
        self.absent: set[str] = set()  # third-party packages not installed here, stood in for
        self._undo: list[Callable[[], None]] = []

    def touch(self, what: str) -> None:
        self.touched.append(what)  # every touch, in order: a phase fails on one made during it

    def add_for(self, exc: BaseException) -> bool:
        """Put a stand-in where ``exc`` (an import failure) says a transformers/TRL name is missing;
        whether one was added (False: the failure is of another kind, or already stood in for)."""
        for error in _import_errors(exc):
            text = str(error)
            found = _CANNOT_IMPORT.search(text)
            if found and _ours(found.group(2)) and found.group(2) in sys.modules:
                return self._name(sys.modules[found.group(2)], found.group(1))
            missing = getattr(error, "name", None)
            if not isinstance(error, ModuleNotFoundError) or not missing:
                continue
            top = missing.split(".")[0]
            if "." in missing and (_ours(missing) or top in self.absent):
                return self._module(missing)
            if "." not in missing and not _ours(missing) and _not_installed(missing):
                self.absent.add(missing)
                return self._top(missing)
        return False

    def _top(self, name: str) -> bool:
        """A stand-in for the whole package ``name``, which is not installed here."""
        if name in self.names:
            return False
        sys.modules[name] = StandInModule(name, self)
        self.names.append(name)

        def undo() -> None:
            sys.modules.pop(name, None)

        self._undo.append(undo)
        return True

    def _name(self, module: ModuleType, name: str) -> bool:
        what = f"{module.__name__}.{name}"
        if what in self.names or name in vars(module):
            return False
        available = _AVAILABLE.match(name)
        value = _available(available.group(1)) if available else StandIn(what, self)
        setattr(module, name, value)
        self.names.append(what)
        self._undo.append(lambda: vars(module).pop(name, None))
        return True

    def _module(self, dotted: str) -> bool:
        if dotted in self.names or sys.modules.get(dotted) is not None:
            return False
        parent_name, _, leaf = dotted.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is None:  # the parent is missing too: it fails first and is stood in for first
            return False
        sys.modules[dotted] = StandInModule(dotted, self)
        setattr(parent, leaf, sys.modules[dotted])
        self.names.append(dotted)

        def undo() -> None:
            sys.modules.pop(dotted, None)
            vars(parent).pop(leaf, None)

        self._undo.append(undo)
        return True

    def held_elsewhere(self, before: set[str], own: Path) -> list[str]:
        """The modules imported since ``before`` (the names in ``sys.modules`` when the program
        started), outside the program's own folder ``own``, that hold one of these stand-ins.

        Why: such a module (``transformers``' image processing, imported with ``torchvision`` stood in
        for) stays imported after the program, so the next program in the same child would import it
        without the failure, need no stand-in of its own and touch this program's: its record would
        depend on the order programs ran in. The child ends after such a program
        (``_runner.main``); the next programs run in a fresh one."""
        out = []
        for name in set(sys.modules) - before:
            module = sys.modules.get(name)
            where = getattr(module, "__file__", None) or ""
            if not isinstance(module, ModuleType) or isinstance(module, StandInModule):
                continue
            if where and Path(where).resolve().is_relative_to(own):
                continue
            if any(_is_stand_in(value) for value in list(vars(module).values())):
                out.append(name)
        return sorted(out)

    def remove(self) -> None:
        """Take every stand-in out again (the next program starts from the release as it is)."""
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    def importing(self, load: Callable[[], ModuleType]) -> ModuleType:
        """``load()``, retried with a stand-in each time it fails on a missing transformers/TRL name
        or an absent package (a failed import leaves no module of its own behind); any other failure
        is raised. The absent packages' stand-ins leave ``sys.modules`` once it has loaded
        (``_unlist_absent``)."""
        try:
            for _ in range(LIMIT):
                try:
                    return load()
                except Exception as exc:  # only an import failure we can stand in for is retried
                    if not self.add_for(exc):
                        raise
            return load()
        finally:
            self._unlist_absent()

    def _unlist_absent(self) -> None:
        """Take the absent packages' stand-ins out of ``sys.modules``; the names the program bound
        keep them (and raise on use). Why: the libraries probe packages while training
        (``importlib.util.find_spec("deepspeed")`` in ``Trainer.__init__``): a stand-in listed there
        makes the probe raise ``ValueError: deepspeed.__spec__ is None``, or, given a spec, answer that
        a package this machine lacks is installed. Unlisted, the probe answers the truth, and an import
        the program makes later fails as it would here."""
        for name in [n for n in self.names if n.split(".")[0] in self.absent]:
            if isinstance(sys.modules.get(name), StandInModule):
                del sys.modules[name]
