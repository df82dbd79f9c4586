"""The rule registry: ``RULES`` maps each code to its rule class (one module per rule).

Codes are stable forever (outputs and ``# noqa`` comments depend on them). Ranges: TW1xx overrides
that break or do nothing, TW2xx logic that belongs in a callback, TW3xx signature and API drift,
TW4xx callback contract.
"""

from __future__ import annotations

from trainwright_lint.rules.base import Example, Rule
from trainwright_lint.rules.tw101_private_override import PrivateOverride
from trainwright_lint.rules.tw102_dead_override import DeadOverride
from trainwright_lint.rules.tw201_timing_logic import TimingLogic
from trainwright_lint.rules.tw202_side_effect_wrapper import SideEffectWrapper
from trainwright_lint.rules.tw203_control_flow import ControlFlowInSubclass
from trainwright_lint.rules.tw301_incompatible_signature import IncompatibleSignature
from trainwright_lint.rules.tw302_stale_super_call import StaleSuperCall
from trainwright_lint.rules.tw303_removed_api import RemovedApi
from trainwright_lint.rules.tw304_removed_argument import RemovedArgument
from trainwright_lint.rules.tw305_public_contract import PublicContract
from trainwright_lint.rules.tw401_unknown_event import UnknownEvent
from trainwright_lint.rules.tw402_event_without_kwargs import EventWithoutKwargs
from trainwright_lint.rules.tw403_event_return_value import EventReturnValue

_ALL: tuple[type[Rule], ...] = (
    PrivateOverride,
    DeadOverride,
    TimingLogic,
    SideEffectWrapper,
    ControlFlowInSubclass,
    IncompatibleSignature,
    StaleSuperCall,
    RemovedApi,
    RemovedArgument,
    PublicContract,
    UnknownEvent,
    EventWithoutKwargs,
    EventReturnValue,
)

RULES: dict[str, type[Rule]] = {rule.code: rule for rule in _ALL}
RULES_BY_NAME: dict[str, type[Rule]] = {rule.name: rule for rule in _ALL}

# Every list of codes below is read from the rules' own declarations (``rules/base.py``) when it is
# asked for, never kept by hand: a rule added to ``RULES`` is in every one of them.


def fixable() -> dict[str, str]:
    """Rule code -> "safe" / "unsafe": the rules whose findings carry a fix (``Rule.fix_applicability``)."""
    return {code: rule.fix_applicability for code, rule in sorted(RULES.items()) if rule.fix_applicability}


def fixes(applicability: str) -> list[tuple[str, str]]:
    """(code, what its fix does) of the rules whose fix has ``applicability`` ("safe"/"unsafe"), by code:
    what the ``fix`` command's help and the rules index list."""
    return [(code, RULES[code].fix_title) for code, kind in fixable().items() if kind == applicability]


def fixing_rules() -> tuple[type[Rule], ...]:
    """The rules with a fix module, in the order the fixer applies them (``Rule.fix_pass``, then code)."""
    return tuple(
        sorted((r for r in RULES.values() if r.fix_module is not None), key=lambda r: (r.fix_pass, r.code))
    )


def suggested() -> tuple[str, ...]:
    """The rules whose findings ``trainwright fix --suggest`` turns into a callback (``Rule.suggestion``)."""
    return tuple(code for code, rule in sorted(RULES.items()) if rule.suggestion)


def moving() -> str:
    """The rules whose only fix is a move to a callback (``Rule.moves_only``), as ``--select`` takes them
    (``TW201,TW202``): the oracle scripts judge a move alone, apart from the run's other unsafe fixes."""
    return ",".join(code for code, rule in sorted(RULES.items()) if rule.moves_only)


def release_dependent() -> tuple[str, ...]:
    """The rules off for a project pinned below the catalogue (``Rule.off_below_catalogue``)."""
    return tuple(code for code, rule in sorted(RULES.items()) if rule.off_below_catalogue())


__all__ = [
    "RULES",
    "RULES_BY_NAME",
    "Example",
    "Rule",
    "fixable",
    "fixes",
    "fixing_rules",
    "release_dependent",
    "suggested",
]
