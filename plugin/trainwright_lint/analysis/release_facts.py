"""The catalogue facts a rule's judgement at a release reads, named as data: the engine groups the
release points of the target range by them (``engine._PointRuns``), so a judgement that reads only these
answers alike wherever they are the same. Here, below the rules, so that an analysis that decides which
facts matter (``analysis.callers.call_site_reads``) names them too; ``rules.base`` re-exports them.
"""

from __future__ import annotations

# A catalogue fact a candidate's judgement reads: (kind, class, method).
Fact = tuple[str, str, str]
EVENTS: Fact = ("events", "", "")  # the callback events and control flags of transformers


def trainer_fact(cls: str, name: str) -> Fact:
    """Everything transformers' catalogue records about ``cls.name`` at a release."""
    return ("transformers", cls, name)


def library_fact(cls: str, name: str) -> Fact:
    """Everything TRL's catalogue records about ``cls.name`` at a release."""
    return ("trl", cls, name)


def library_class_fact(cls: str) -> Fact:
    """Whether TRL's ``cls`` exists at a release."""
    return ("trl-class", cls, "")
