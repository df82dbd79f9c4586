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
# Rule code -> "safe" / "unsafe": the rules whose findings carry a fix, as each rule declares it.
FIXABLE: dict[str, str] = {rule.code: rule.fix_applicability for rule in _ALL if rule.fix_applicability}

__all__ = ["FIXABLE", "RULES", "RULES_BY_NAME", "Example", "Rule"]
