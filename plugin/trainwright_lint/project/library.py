"""The library classes a project's classes can build on: transformers, TRL and the rest.

A project class is a Trainer subclass when ``transformers.Trainer`` is in its MRO, and a callback
when ``transformers.TrainerCallback`` is: by the class graph, never by a class's name (Keras and
Lightning have ``Callback`` classes too, and transformers itself ships Keras callbacks). This module
turns a dotted name that leads outside the project into a ``LibraryClass``: a canonical key and the
MRO the library gives it. The catalogue supplies the facts where it has them: TRL's class graph per
release (``GRPOTrainer -> _BaseTrainer -> transformers.Trainer`` in 1.x, ``-> BaseTrainer`` in 0.25),
the callbacks transformers defines (and the Keras ones it also exports), module export lists for star
imports. Libraries without a catalogue (sentence-transformers, setfit) go by their naming conventions.

A TRL class the target release does not have (TRL 0.4's ``PPOTrainer`` on 1.16) is not a trainer
for that target: it is reported as unresolved, with the reason, rather than checked against a class
that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from trainwright.catalog import load_catalog

TRAINER = "transformers.Trainer"
SEQ2SEQ = "transformers.Seq2SeqTrainer"
CALLBACK = "transformers.TrainerCallback"
HANDLER = "transformers.CallbackHandler"
SETFIT = "setfit.Trainer"  # not built on transformers.Trainer: rules without a catalogue only

# Libraries whose ``*Trainer`` classes subclass transformers.Trainer but have no catalogue.
_UNCATALOGUED_TRAINER_LIBRARIES = frozenset({"sentence_transformers", "trainwright"})
_CALLBACK_LIBRARIES = frozenset({"trl", "trainwright", "sentence_transformers", "setfit"})
# transformers' own classes by short name, canonical key first.
_TRANSFORMERS = {
    "Trainer": (TRAINER,),
    "Seq2SeqTrainer": (SEQ2SEQ, TRAINER),
    "TrainerCallback": (CALLBACK,),
    "CallbackHandler": (HANDLER, CALLBACK),
}


@dataclass(frozen=True, slots=True)
class LibraryClass:
    """A catalogued transformers or TRL class as the project model sees it: its MRO at the target."""

    key: str  # canonical dotted name
    mro_keys: tuple[str, ...]  # keys, the class itself first (``object`` left out)
    library: str  # top-level package


@dataclass(frozen=True, slots=True)
class Absent:
    """A class of a catalogued library that the target release does not define."""

    dotted: str
    reason: str


@lru_cache(maxsize=1)
def trl_classes() -> frozenset[str]:
    return frozenset(load_catalog("trl").class_names())


@lru_cache(maxsize=1)
def _callbacks() -> tuple[frozenset[str], frozenset[str]]:
    catalog = load_catalog()
    return catalog.trainer_callback_classes(), catalog.non_trainer_callback_classes()


def _key(canonical: str) -> str:
    """Our key for a catalogue's canonical name: ``transformers.Trainer``, ``trl.GRPOTrainer``."""
    library, short = canonical.split(".", 1)[0], canonical.rsplit(".", 1)[-1]
    if library == "transformers":
        return _TRANSFORMERS[short][0] if short in _TRANSFORMERS else f"transformers.{short}"
    return f"{library}.{short}"


def _trl_class(short: str, release: str | None) -> LibraryClass | Absent:
    catalog = load_catalog("trl")
    version = catalog.resolve_version(release)
    view = catalog.at(version)
    if short not in view.classes:
        return Absent(f"trl.{short}", f"`trl.{short}` does not exist in trl {version} (the target release)")
    mro = tuple(_key(c) for c in view.mro(short))
    if TRAINER not in mro:
        mro = (*mro, TRAINER)
    if SEQ2SEQ in mro and mro[-1] != TRAINER:
        mro = (*mro, TRAINER)
    return LibraryClass(mro[0], mro, "trl")


@lru_cache(maxsize=4096)
def identify(
    dotted: str, extra_bases: tuple[str, ...] = (), trl_release: str | None = None
) -> LibraryClass | Absent | None:
    """The library class ``dotted`` names (any public alias), ``Absent`` for a catalogued library's
    class the target release lacks, or None when it is not a class we know."""
    parts = dotted.split(".")
    root, last = parts[0], parts[-1]
    for extra in extra_bases:
        if dotted == extra or last == extra.rsplit(".", 1)[-1]:
            return LibraryClass(dotted, (dotted, TRAINER), root)
    if root == "transformers":
        if last in _TRANSFORMERS:
            mro = _TRANSFORMERS[last]
            return LibraryClass(mro[0], mro, root)
        callbacks, keras = _callbacks()
        if dotted in keras or f"transformers.{last}" in keras:
            return None
        if dotted in callbacks or f"transformers.{last}" in callbacks:
            key = f"transformers.{last}"
            return LibraryClass(key, (key, CALLBACK), root)
        return None
    if root == "trl":
        if last in trl_classes():
            return _trl_class(last, trl_release)
        if last.endswith("Callback"):
            key = f"trl.{last}"
            return LibraryClass(key, (key, CALLBACK), root)
        return None
    if root == "setfit":
        if last.endswith("Trainer"):
            return LibraryClass(SETFIT, (SETFIT,), root)
        if last.endswith("Callback"):
            key = f"setfit.{last}"
            return LibraryClass(key, (key, CALLBACK), root)
        return None
    if root in _UNCATALOGUED_TRAINER_LIBRARIES and last.endswith("Trainer"):
        key = f"{root}.{last}"
        return LibraryClass(key, (key, TRAINER), root)
    if root in _CALLBACK_LIBRARIES and last.endswith("Callback"):
        key = f"{root}.{last}"
        return LibraryClass(key, (key, CALLBACK), root)
    return None


def library_exports(module: str) -> frozenset[str] | None:
    """Names ``from <module> import *`` binds, for a library module the catalogue lists (None:
    unknown module, in which case the caller guesses from the name it looks for)."""
    root = module.split(".", 1)[0]
    if root not in ("transformers", "trl"):
        return None
    names = load_catalog(root).exports(module)
    return frozenset(names) if names else None
