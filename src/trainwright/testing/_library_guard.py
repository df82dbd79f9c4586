"""Put the libraries back as they were after each program the oracle's child trains.

Why: one child trains many programs in turn (the original, its fixed copy, the plain Trainer, other
cases), and a program may patch the libraries it imports: ``transformers.Trainer.compute_loss =
my_loss`` at module level, a replaced ``torch`` function, a mutated class attribute. Without this, every
program after it in the same child trains with the patch, and a verdict about one case can rest on
another case's code (the plain Trainer's losses are the anchor every cross-release comparison divides
by). Reloading the libraries per program would cost a fresh interpreter each (seconds); the attributes
of the modules already imported and of the classes they define are few (about 1,600 modules and 4,500
classes with torch and transformers loaded, 30 ms to copy).

What is put back: every attribute of an imported ``transformers``/``trl``/``accelerate``/``peft``/
``torch`` module, and of each class such a module defines, that a program rebound or deleted; an
attribute a program added to such a class is removed (it may shadow a base class's method). One added
to a module is left: ``transformers``' lazy modules cache what they resolve that way, and a new name
changes nothing a program that does not know it runs. Not covered: a module first imported *during* a program and patched by it (nothing was
there to compare with), and a mutation inside an object that keeps its identity (a list appended to:
``_runner.restore_library_lists`` handles the one the dev split hit).
"""

from __future__ import annotations

import sys
import warnings
from types import ModuleType
from typing import Any

LIBRARIES = ("transformers", "trl", "accelerate", "peft", "torch")

# (owner, its attributes as they were): a module or a class
_Snapshot = list[tuple[Any, dict[str, Any]]]


def _ours(name: str) -> bool:
    return name.split(".", 1)[0] in LIBRARIES


def take() -> _Snapshot:
    """The attributes of every library module imported now and of the classes each defines."""
    out: _Snapshot = []
    with warnings.catch_warnings():  # reading a deprecated alias (``torch.distributed.reduce_op``) warns
        warnings.simplefilter("ignore")
        for name, module in list(sys.modules.items()):
            if not isinstance(module, ModuleType) or not _ours(name):
                continue
            try:
                attributes = dict(vars(module))
            except TypeError:
                continue
            out.append((module, attributes))
            for value in attributes.values():
                if isinstance(value, type) and getattr(value, "__module__", None) == name:
                    out.append((value, dict(vars(value))))
    return out


#: the libraries a patch of is named in the record: the ones a Trainer subclass builds on. The rest
#: (torch) is put back silently: torch and transformers rebind some of its attributes themselves
#: (``Optimizer.step`` wrapped for the profiler, ``nn.Module.smart_apply`` added on first use).
NAMED = ("transformers", "trl", "accelerate", "peft")


def restore(snapshot: _Snapshot) -> list[str]:
    """Put back what changed since ``snapshot``. Returns the code it put back (a function or class
    rebound, added or deleted in a ``NAMED`` library), for the record; the library's own caches
    (``__slotnames__``, a cached flag) are put back too, unnamed."""
    named: list[str] = []
    for owner, before in snapshot:
        now = vars(owner)
        label = f"{owner.__module__}.{owner.__name__}" if isinstance(owner, type) else owner.__name__
        changed = [(k, v, now.get(k)) for k, v in before.items() if k not in now or now[k] is not v]
        put = [(key, old, new) for key, old, new in changed if _put(owner, key, old)]
        if isinstance(owner, type):  # an added class attribute may shadow a base class's method
            added = [(k, None, v) for k, v in now.items() if k not in before]
            put += [(key, old, new) for key, old, new in added if _drop(owner, key)]
        named += [f"{label}.{key}" for key, old, new in put if _code(label, old, new)]
    return named


def _code(label: str, old: Any, new: Any) -> bool:
    return label.split(".", 1)[0] in NAMED and (callable(old) or callable(new))


def _put(owner: Any, key: str, value: Any) -> bool:
    try:
        setattr(owner, key, value)
    except (AttributeError, TypeError):  # a read-only slot (``__dict__``, ``__weakref__``)
        return False
    return True


def _drop(owner: Any, key: str) -> bool:
    try:
        delattr(owner, key)
    except (AttributeError, TypeError):
        return False
    return True
