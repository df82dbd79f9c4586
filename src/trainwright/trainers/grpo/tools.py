"""Tools the policy may call during a GRPO rollout: their schemas, and running one turn of calls.

A tool is a plain Python callable (sync or ``async def``). The model sees it through the JSON schema that
``transformers`` derives from its signature and docstring (``get_json_schema``, the same one
``apply_chat_template(tools=...)`` renders), so a tool without type hints or an ``Args:`` section cannot
be shown to the model; :func:`check_tools` says so by name when the trainer is built instead of failing
inside the chat template in the middle of a round.

Running calls follows TRL 1.16 exactly, because the completions, tool results and the
``tools/failure_frequency`` metric must match: every call counts; an unknown name, a call type other
than ``"function"``, or a tool that raises is a *failure* whose result is ``{"error": message}`` (the
model reads the error, training goes on); the results of synchronous tools come first, in call order,
then those of the ``async`` tools of the same turn, which run concurrently.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from transformers.utils import get_json_schema


class ToolSchemaError(ValueError):
    """A tool the model cannot be shown: not callable, or no schema from its signature and docstring."""


def check_tools(tools: Sequence[Any], where: str = "tools") -> list[Callable[..., Any]]:
    """The tools as a list, each checked to have a JSON schema (raises :class:`ToolSchemaError`)."""
    if tools is None:
        return []
    if callable(tools) or isinstance(tools, (str, bytes)):
        raise ToolSchemaError(f"{where} must be a list of callables, got {type(tools).__name__}")
    checked = []
    for tool in tools:
        if not callable(tool):
            raise ToolSchemaError(f"{where}: {tool!r:.60} is not callable; a tool is a Python function")
        try:
            get_json_schema(tool)
        except Exception as error:  # transformers raises its own parsing exceptions (no common base)
            name = getattr(tool, "__name__", repr(tool))
            raise ToolSchemaError(
                f"{where}: tool {name!r} has no usable schema ({error}); give it type hints and a Google-style "
                f"docstring with an 'Args:' entry per parameter, which is what the chat template shows the model"
            ) from error
        checked.append(tool)
    return checked


@dataclass
class ToolBox:
    """The tools one rollout may call, by name (an environment's methods are bound to its instance)."""

    sync: dict[str, Callable[..., Any]] = field(default_factory=dict)
    async_: dict[str, Callable[..., Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, tools: Sequence[Callable[..., Any]]) -> ToolBox:
        box = cls()
        for tool in tools:
            target = box.async_ if inspect.iscoroutinefunction(tool) else box.sync
            target[tool.__name__] = tool
        return box


@dataclass
class ToolTurn:
    """The tool messages one assistant turn produced, and how many calls it made and how many failed."""

    messages: list[dict[str, Any]]
    calls: int
    failures: int


def tool_message(name: str, result: Any) -> dict[str, Any]:
    """TRL's tool message: a list result (content blocks) passes through, anything else becomes ``str``."""
    return {"role": "tool", "name": name, "content": result if isinstance(result, list) else str(result)}


def run_tool_calls(box: ToolBox, tool_calls: Sequence[dict[str, Any]]) -> ToolTurn:
    """Execute one assistant turn's ``tool_calls`` (the parsed ``{"type": "function", "function": ...}``)."""
    results: list[tuple[str, Any]] = []
    pending: list[tuple[str, Any]] = []
    failures = 0
    for call in tool_calls:
        if call.get("type") != "function":
            failures += 1
            results.append(
                (call.get("name", "unknown"), {"error": f"Unsupported tool call type: {call.get('type')}"})
            )
            continue
        function = call["function"]
        name = function["name"]
        try:
            if name in box.sync:
                results.append((name, box.sync[name](**function["arguments"])))
            elif name in box.async_:
                pending.append((name, box.async_[name](**function["arguments"])))
            else:
                raise ValueError(f"Tool {name} not found.")
        except Exception as error:  # noqa: BLE001 - a failing tool is reported to the model, as TRL does
            failures += 1
            results.append((name, {"error": str(error)}))
    for (name, _), outcome in zip(pending, _await_all([coroutine for _, coroutine in pending])):
        if isinstance(outcome, Exception):
            failures += 1
            outcome = {"error": str(outcome)}
        results.append((name, outcome))
    return ToolTurn([tool_message(name, result) for name, result in results], len(tool_calls), failures)


def _await_all(coroutines: list[Any]) -> list[Any]:
    """Run ``coroutines`` concurrently; an exception is returned in its place (TRL's ``return_exceptions``)."""
    if not coroutines:
        return []

    async def gather() -> list[Any]:
        return list(await asyncio.gather(*coroutines, return_exceptions=True))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(gather())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # a loop already runs in this thread
        return pool.submit(asyncio.run, gather()).result()
