"""A deterministic tool-calling set-up shared by the tool tests: one question, a model nudged to call the
calculator and end its turn, and an environment whose instances answer with a different number of '!'.

Why the '!': every rollout of a group makes the same call (the nudged model is deterministic), so the
results must differ for the group's rewards, the tool-result lengths and hence the completion truncation
to differ; pooled instance ``k`` (1-based, in creation order) appends ``k`` of them.
"""

from __future__ import annotations

import copy

from trainwright.toy_tools import build_tool_model, build_tool_tokenizer, tool_call_text

CALL = tool_call_text("calculator", {"expression": "3 + 4"})
PROMPT = [{"role": "user", "content": "What is 3 + 4?"}]


def tool_tokenizer():
    return build_tool_tokenizer([CALL])


def nudged_model(tokenizer, margin: float = 16.0):
    """Calls the calculator after every assistant header, then ends the turn (each with logit ``margin``)."""
    return build_tool_model(tokenizer, {"assistant\n": {CALL: margin}, CALL: {"<|im_end|>": margin}})


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression of two integers.

    Args:
        expression: The expression, for example "3 + 4".
    """
    left, op, right = expression.split()
    a, b = int(left), int(right)
    return str({"+": a + b, "-": a - b, "*": a * b}[op])


def environment_class():
    """A fresh environment class (its instance counter starts at 0) for one trainer."""

    class CalculatorEnv:
        created = 0

        def __init__(self) -> None:
            type(self).created += 1
            self.index = type(self).created
            self.calls: list[str] = []

        def reset(self, **row):
            self.calls = []

        def calculator(self, expression: str) -> str:
            """Evaluate an arithmetic expression of two integers.

            Args:
                expression: The expression, for example "3 + 4".
            """
            self.calls.append(expression)
            return calculator(expression) + "!" * self.index

        def get_reward(self) -> float:
            return len(self.calls) + 0.25 * self.index

    return CalculatorEnv


def prompts(n: int) -> list:
    return [copy.deepcopy(PROMPT) for _ in range(n)]
