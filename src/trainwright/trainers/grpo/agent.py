"""What ``GRPOTrainer(tools=..., environment_factory=..., rollout_func=...)`` adds to a generation round.

:class:`AgentRollouts` is built once by the trainer from those three arguments (checked there, so a bad
tool or environment fails at construction by name) and turns a round's dataset rows into a
:class:`~trainwright.trainers.grpo.rollout.Rollout`: environments drawn from their pools and reset,
prompts rendered with each row's tools, the first turn generated (or the user's rollout function
called), completions parsed into messages, and the tool loop run. The trainer then scores, pads and
trains on the rollout as on any round, with the tool mask taken out of the loss.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from trainwright.trainers.grpo.environments import EMPTY_PROMPT, EnvironmentFactory, Environments
from trainwright.trainers.grpo.rollout import (
    Rollout,
    RolloutFunc,
    ToolLoop,
    check_rollout_output,
    expand_extra_fields,
)
from trainwright.trainers.grpo.round_data import is_conversational
from trainwright.trainers.grpo.tool_chat import parse_completion, prepare_tool_tokenizer
from trainwright.trainers.grpo.tools import ToolBox, check_tools

Generate = Callable[[list[list[int]]], list[list[int]]]


class AgentRollouts:
    """Tools, environments and a rollout function, and how one round uses them (module docstring)."""

    def __init__(
        self,
        tokenizer: Any,
        *,
        tools: Sequence[Callable[..., Any]] | None,
        environment_factory: EnvironmentFactory | dict[str, EnvironmentFactory] | None,
        rollout_func: RolloutFunc | None,
        chat_template_kwargs: dict[str, Any] | None,
    ) -> None:
        if rollout_func is not None and not callable(rollout_func):
            raise TypeError(
                f"rollout_func must be callable (prompts, trainer) -> dict, got {type(rollout_func).__name__}"
            )
        self.tokenizer = tokenizer
        self.rollout_func = rollout_func
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        standalone = check_tools(tools or [])
        self.environments = (
            Environments(environment_factory, standalone) if environment_factory is not None else None
        )
        self.tools = self.environments.all_tools() if self.environments is not None else standalone
        if self.tools:
            prepare_tool_tokenizer(tokenizer)

    @property
    def reward_funcs(self) -> list[Callable[..., Any]]:
        """The environments' ``get_reward`` columns (weight 1, after the user's reward functions)."""
        return list(self.environments.reward_funcs) if self.environments is not None else []

    def prompts_of(self, rows: Sequence[dict[str, Any]]) -> list[Any]:
        """The rows' prompts; with environments a row may have none (``reset`` supplies it)."""
        if self.environments is None:
            return [row["prompt"] for row in rows]
        return [row.get("prompt", EMPTY_PROMPT) for row in rows]

    def sample(
        self, trainer: Any, rows: Sequence[dict[str, Any]], generate: Generate, tool_loop: ToolLoop
    ) -> tuple[list[Any], Rollout, dict[str, list[Any]]]:
        """Prompts after ``reset``, the round's rollout, and the extra reward-function columns."""
        prompts = self.prompts_of(rows)
        columns: dict[str, list[Any]] = {}
        tools_per_row: list[list[Callable[..., Any]]] = [list(self.tools)] * len(rows)
        boxes = [ToolBox.of(self.tools)] * len(rows)
        if self.environments is not None:
            names = self.environments.names_of(rows)
            instances = self.environments.instances_for(names)
            tools_per_row = [self.environments.env_tools[name] for name in names]
            boxes = self.environments.tool_boxes(instances)
            prompts = self.environments.reset(prompts, rows, instances)
            columns["environments"] = instances
        if self.rollout_func is not None:
            rollout = check_rollout_output(self.rollout_func(copy.deepcopy(prompts), trainer), len(prompts))
            columns.update(expand_extra_fields(rollout.extra_fields, len(prompts)))
        else:
            prompt_ids = [self.render(prompt, tools) for prompt, tools in zip(prompts, tools_per_row)]
            rollout = Rollout(prompt_ids, generate(prompt_ids), [])
        rollout.completions = self.decode(prompts, rollout, tools_per_row)
        if self.tools:
            if not all(is_conversational(prompt) for prompt in prompts):
                raise ValueError(
                    "tool calling needs conversational prompts (lists of chat messages): the chat template "
                    "renders the tools and parses the calls; this round has a plain-text prompt"
                )
            tool_loop.run(prompts, rollout, boxes, tools_per_row)
        return prompts, rollout, columns

    def render(self, prompt: Any, tools: Sequence[Callable[..., Any]]) -> list[int]:
        """A prompt's token ids: through the chat template with its tools (``None`` when there are none,
        as some templates render tool boilerplate for an empty list), or the plain text's."""
        if not is_conversational(prompt):
            return list(self.tokenizer(prompt)["input_ids"])
        encoded = self.tokenizer.apply_chat_template(
            prompt,
            tools=list(tools) or None,
            add_generation_prompt=True,
            tokenize=True,
            **self.chat_template_kwargs,
        )
        if hasattr(encoded, "keys"):
            encoded = encoded["input_ids"]
        return list(encoded)

    def decode(
        self, prompts: list[Any], rollout: Rollout, tools_per_row: Sequence[Sequence[Any]]
    ) -> list[Any]:
        """Completions as TRL gives them to reward functions: parsed messages (tool calls included) for
        conversations when tools are used, ``[{"role": "assistant", "content": text}]`` or text otherwise."""
        ids = rollout.completion_ids
        if self.tools and prompts and is_conversational(prompts[0]):
            return [
                [parse_completion(self.tokenizer, row, prefix, tools)]
                for row, prefix, tools in zip(ids, rollout.prompt_ids, tools_per_row)
            ]
        texts = self.tokenizer.batch_decode(ids, skip_special_tokens=True)
        return [
            [{"role": "assistant", "content": text}] if is_conversational(prompt) else text
            for prompt, text in zip(prompts, texts)
        ]


def agent_rollouts(
    tokenizer: Any,
    args: Any,
    tools: Sequence[Callable[..., Any]] | None,
    environment_factory: EnvironmentFactory | dict[str, EnvironmentFactory] | None,
    rollout_func: RolloutFunc | None,
) -> AgentRollouts | None:
    """The trainer's :class:`AgentRollouts`, or ``None`` for plain single-turn GRPO (none of the three)."""
    if not tools and environment_factory is None and rollout_func is None:
        return None
    return AgentRollouts(
        tokenizer,
        tools=tools,
        environment_factory=environment_factory,
        rollout_func=rollout_func,
        chat_template_kwargs=args.chat_template_kwargs,
    )


def with_environment_rewards(reward_funcs: Any, agent: AgentRollouts | None) -> list[Any]:
    """The user's reward functions followed by the environments' ``get_reward`` columns; refuses a run
    with no reward source at all (TRL's message)."""
    funcs = (
        []
        if reward_funcs is None
        else list(reward_funcs)
        if isinstance(reward_funcs, (list, tuple))
        else [reward_funcs]
    )
    funcs += agent.reward_funcs if agent is not None else []
    if not funcs:
        raise ValueError(
            "No reward source provided. Pass `reward_funcs`, or an `environment_factory` whose environment "
            "defines a `get_reward` method."
        )
    return funcs


def environment_reward_weights(
    weights: Sequence[float] | None, agent: AgentRollouts | None
) -> list[float] | None:
    """``reward_weights`` (which name the user's functions only) with weight 1 for each environment column."""
    extra = len(agent.reward_funcs) if agent is not None else 0
    if weights is None or not extra:
        return None if weights is None else list(weights)
    return [*weights, *([1.0] * extra)]
