"""Multi-turn environments for GRPO (TRL 1.16's ``environment_factory=``).

An environment is an object with ``reset(**row)`` (called once per rollout with the dataset row; a
returned string is appended to the prompt's last message as the first observation), public methods
that the model may call as tools (their return value is the next observation), and optionally
``get_reward()``, which scores the finished rollout from the environment's own state.

Semantics kept from TRL because users' environments and reward functions depend on them:

* ``environment_factory`` is one factory (every row uses it) or ``{name: factory}`` (each row's
  ``environment`` column picks one, and only that environment's tools are shown in its prompt);
* instances are pooled and reused: the i-th rollout of a round that uses environment ``name`` gets the
  i-th instance of its pool (created only when the pool is too small), so ``__init__`` runs rarely and
  ``reset`` every rollout;
* each environment *class* with ``get_reward`` adds one reward column named after the class, weight 1,
  after the user's reward functions; it scores only rollouts whose environment is exactly that class
  (``None`` for the others);
* reward functions receive the round's instances as ``environments=``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from trainwright.trainers.grpo.tools import ToolBox, check_tools

EnvironmentFactory = Callable[[], Any]

EMPTY_PROMPT = [
    {"role": "user", "content": ""}
]  # the prompt of a row that has none (the environment owns it)


def tool_methods(instance: Any) -> list[Callable[..., Any]]:
    """The public methods of ``instance``'s class other than ``reset`` / ``get_reward``, bound to it
    (listed on the class, so that properties are not evaluated)."""
    return [
        getattr(instance, name)
        for name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


def environment_reward(env_type: type) -> Callable[..., list[float | None]]:
    """A reward function calling ``get_reward()`` on the rollouts whose environment is exactly ``env_type``."""
    if inspect.iscoroutinefunction(env_type.get_reward):

        async def reward(environments: Sequence[Any], **kwargs: Any) -> list[float | None]:
            return [await env.get_reward() if type(env) is env_type else None for env in environments]

    else:

        def reward(environments: Sequence[Any], **kwargs: Any) -> list[float | None]:
            return [env.get_reward() if type(env) is env_type else None for env in environments]

    reward.__name__ = reward.__qualname__ = env_type.__name__
    return reward


class Environments:
    """The factories, one probed instance of each (its tools), the instance pools and the reward columns."""

    def __init__(
        self, factory: EnvironmentFactory | dict[str, EnvironmentFactory], standalone_tools: Sequence[Any]
    ) -> None:
        self.multi = isinstance(factory, dict)
        self.factories: dict[str | None, EnvironmentFactory] = (
            dict(factory) if self.multi else {None: factory}
        )
        if not self.factories:
            raise ValueError("environment_factory is an empty dict: give at least one environment factory")
        self.standalone_tools = list(standalone_tools)
        self.env_tools: dict[str | None, list[Callable[..., Any]]] = {}
        self.pool: dict[str | None, list[Any]] = {}
        self.reward_funcs: list[Callable[..., list[float | None]]] = []
        reward_types: list[type] = []  # one column per class, even when several names build it
        for name, make in self.factories.items():
            if not callable(make):
                raise TypeError(
                    f"environment_factory[{name!r}] is {type(make).__name__}, not a class or callable"
                )
            instance = make()
            if not callable(getattr(type(instance), "reset", None)):
                raise ValueError(  # noqa: TRY004 - TRL's error type and message
                    "Each environment instance returned by `environment_factory` must define a callable `reset`."
                )
            methods = check_tools(tool_methods(instance), where=f"environment {type(instance).__name__}")
            self.env_tools[name] = self.standalone_tools + methods
            self.pool[name] = [instance]
            env_type = type(instance)
            if callable(getattr(env_type, "get_reward", None)) and env_type not in reward_types:
                reward_types.append(env_type)
                self.reward_funcs.append(environment_reward(env_type))

    def all_tools(self) -> list[Callable[..., Any]]:
        """Every tool any rollout may see (standalone first), each once."""
        tools: list[Callable[..., Any]] = []
        for methods in self.env_tools.values():
            tools += [tool for tool in methods if tool not in tools]
        return tools or list(self.standalone_tools)

    def names_of(self, rows: Sequence[dict[str, Any]]) -> list[str | None]:
        """Each row's environment name (``None`` for a single factory), refusing a name not configured."""
        if not self.multi:
            return [None] * len(rows)
        names = [row.get("environment") for row in rows]
        for name in dict.fromkeys(names):
            if name not in self.factories:
                raise ValueError(
                    f"Example has `environment={name!r}`, which is not among the environments passed to "
                    f"`environment_factory`. Expected one of: {list(self.factories)}."
                )
        return names

    def instances_for(self, names: Sequence[str | None]) -> list[Any]:
        """One pooled instance per rollout, in order, growing a pool only when it runs short."""
        used: dict[str | None, int] = {}
        instances = []
        for name in names:
            index = used.get(name, 0)
            pool = self.pool[name]
            if index == len(pool):
                pool.append(self.factories[name]())
            used[name] = index + 1
            instances.append(pool[index])
        return instances

    def tool_boxes(self, instances: Sequence[Any]) -> list[ToolBox]:
        """Each rollout's callable tools: the standalone ones and its own instance's methods."""
        return [ToolBox.of(self.standalone_tools + tool_methods(instance)) for instance in instances]

    def reset(
        self, prompts: list[Any], rows: Sequence[dict[str, Any]], instances: Sequence[Any]
    ) -> list[Any]:
        """``reset(**row)`` every instance; a returned observation is appended to the last prompt message
        (new message dicts: the dataset's rows are left untouched)."""
        out = list(prompts)
        for i, (prompt, instance, row) in enumerate(zip(prompts, instances, rows)):
            kwargs = {k: v for k, v in row.items() if k != "environment"} if self.multi else dict(row)
            observation = instance.reset(**kwargs)
            if observation is None:
                continue
            content = prompt[-1]["content"]
            if isinstance(observation, list) and isinstance(content, str):
                content = [{"type": "text", "text": content}]
            if isinstance(observation, str) and isinstance(content, list):
                observation = [{"type": "text", "text": observation}]
            out[i] = prompt[:-1] + [{**prompt[-1], "content": content + observation}]
        return out


def environment_owned_dataset(args: Any, multi: bool) -> Any:
    """The placeholder ``train_dataset`` when the environment owns the data (``reset`` returns the prompt):
    one round's prompts, empty, cycled for ``max_steps`` steps (as TRL)."""
    if multi:
        raise ValueError(
            "A `dict` `environment_factory` (multiple environments) requires a `train_dataset` with an "
            "`environment` column to route each example to its environment. Provide a dataset, or pass a "
            "single environment factory."
        )
    if args.max_steps <= 0:
        raise ValueError(
            "When training without a `train_dataset` (the environment owns the data and returns the prompt "
            "from `reset()`), `max_steps` must be set to a positive value to define the training length. Set "
            "it via `GRPOConfig(max_steps=...)`."
        )
    from datasets import Dataset

    return Dataset.from_dict(
        {"prompt": [EMPTY_PROMPT] * (args.generation_batch_size // args.num_generations)}
    )
