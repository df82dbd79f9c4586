"""Tools, environments and rollout functions on our GRPOTrainer: what happens with good and bad input.

The model is the nudged toy of ``tool_world`` (it always calls the calculator), so every test sees real
tool turns from a real ``generate``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import torch
from datasets import Dataset

from trainwright import GRPOConfig, GRPOTrainer
from trainwright.trainers.grpo.rollout import RolloutError
from trainwright.trainers.grpo.tool_chat import ToolParsingError, parse_completion
from trainwright.trainers.grpo.tools import ToolBox, ToolSchemaError, run_tool_calls

from .tool_world import PROMPT, environment_class, nudged_model, tool_tokenizer


def _config(tmp_path, **overrides):
    settings = {
        "output_dir": str(tmp_path),
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        "max_steps": 1,
        "max_completion_length": 24,
        "learning_rate": 1e-3,
        "logging_steps": 1,
        "report_to": [],
        "use_cpu": True,
        "save_strategy": "no",
    }
    settings.update(overrides)
    return GRPOConfig(**settings)


def _constant(completions, **kwargs):
    return [0.0] * len(completions)


_DEFAULT = object()


def _trainer(tmp_path, reward_funcs=_constant, train_dataset=_DEFAULT, config=None, **kwargs):
    torch.set_num_threads(1)
    tokenizer = tool_tokenizer()
    if train_dataset is _DEFAULT:
        train_dataset = Dataset.from_dict({"prompt": [PROMPT] * 8})
    return GRPOTrainer(
        nudged_model(tokenizer),
        reward_funcs=reward_funcs,
        args=config or _config(tmp_path),
        train_dataset=train_dataset,
        processing_class=tokenizer,
        **kwargs,
    )


def broken_calculator(expression: str) -> str:
    """Always fails.

    Args:
        expression: Ignored.
    """
    raise ZeroDivisionError("division by zero")


def test_a_raising_tool_is_reported_to_the_model_and_counted_as_a_failure(tmp_path):
    seen = []

    def reward(completions, **kwargs):
        seen.extend(completions)
        return [0.0] * len(completions)

    broken_calculator.__name__ = "calculator"  # the name the nudged model calls
    try:
        trainer = _trainer(
            tmp_path,
            reward,
            tools=[broken_calculator],
            config=_config(tmp_path, max_tool_calling_iterations=1, max_completion_length=64),
        )
        trainer.train()
    finally:
        broken_calculator.__name__ = "broken_calculator"
    assert seen[0][1] == {"role": "tool", "name": "calculator", "content": "{'error': 'division by zero'}"}
    logs = trainer.state.log_history[0]
    assert logs["tools/call_frequency"] == 1.0 and logs["tools/failure_frequency"] == 1.0


def test_an_unknown_tool_name_is_a_failure_not_a_crash():
    turn = run_tool_calls(ToolBox(), [{"type": "function", "function": {"name": "nope", "arguments": {}}}])
    assert turn.failures == 1 and turn.messages == [
        {"role": "tool", "name": "nope", "content": "{'error': 'Tool nope not found.'}"}
    ]
    odd = run_tool_calls(ToolBox(), [{"type": "code", "name": "x"}])
    assert odd.failures == 1 and "Unsupported tool call type: code" in odd.messages[0]["content"]


def test_a_malformed_call_parses_as_plain_text():
    tokenizer = tool_tokenizer()
    from trainwright.trainers.grpo.tool_chat import prepare_tool_tokenizer

    prepare_tool_tokenizer(tokenizer)
    ids = tokenizer('<tool_call>\n{"arguments": {"a": 1}}\n</tool_call>', add_special_tokens=False)[
        "input_ids"
    ]
    ids.append(tokenizer.eos_token_id)
    parsed = parse_completion(tokenizer, ids, [], None)
    assert "tool_calls" not in parsed and parsed["content"].startswith("<tool_call>")


def test_a_tool_without_a_docstring_is_refused_by_name(tmp_path):
    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(ToolSchemaError, match="tool 'add' has no usable schema"):
        _trainer(tmp_path, tools=[add])


def test_a_template_without_tool_support_is_refused(tmp_path):
    from trainwright.toy import CHAT_TEMPLATE

    tokenizer = tool_tokenizer()
    tokenizer.chat_template = CHAT_TEMPLATE
    with pytest.raises(ToolParsingError, match="does not support tool calling"):
        GRPOTrainer(
            nudged_model(tokenizer),
            reward_funcs=_constant,
            args=_config(tmp_path),
            train_dataset=Dataset.from_dict({"prompt": [PROMPT] * 8}),
            processing_class=tokenizer,
            tools=[broken_calculator],
        )


def test_environment_rewards_and_pools(tmp_path):
    env = environment_class()
    trainer = _trainer(
        tmp_path,
        config=_config(tmp_path, reward_weights=[0.5], max_tool_calling_iterations=1, max_steps=2),
        environment_factory=env,
    )
    assert trainer.reward_func_names == ["_constant", "CalculatorEnv"]
    assert trainer.reward_weights.tolist() == [0.5, 1.0]
    assert [tool.__name__ for tool in trainer.tools] == ["calculator"]
    trainer.train()  # the second round reuses the pooled instances
    assert env.created == 4
    logs = trainer.state.log_history[0]
    assert logs["rewards/CalculatorEnv/mean"] == pytest.approx(1 + 0.25 * 2.5)


def test_environment_owned_data_and_unknown_environment(tmp_path):
    env = environment_class()
    trainer = _trainer(tmp_path, train_dataset=None, environment_factory=env, reward_funcs=None)
    assert trainer.train_dataset.num_rows == 1
    with pytest.raises(ValueError, match="max_steps"):
        _trainer(
            tmp_path, train_dataset=None, environment_factory=env, config=_config(tmp_path, max_steps=-1)
        )
    routed = Dataset.from_dict({"prompt": [PROMPT] * 8, "environment": ["elsewhere"] * 8})
    trainer = _trainer(tmp_path, train_dataset=routed, environment_factory={"calc": env})
    with pytest.raises(ValueError, match="not among the environments"):
        trainer.train()


def _rollout(prompts, trainer):
    n = len(prompts)
    return {
        "prompt_ids": [[5, 6, 7]] * n,
        "completion_ids": [[8, 9, trainer.processing_class.eos_token_id]] * n,
        "logprobs": [[0.0] * 3] * n,
        "env_mask": [[1, 0, 1]] * n,
        "score": [float(i) for i in range(n)],
    }


def test_a_rollout_function_feeds_masks_and_extra_fields(tmp_path):
    seen = {}

    def reward(completions, score, **kwargs):
        seen["score"] = score
        return score

    trainer = _trainer(tmp_path, reward, rollout_func=_rollout)
    trainer.train()
    assert seen["score"] == [0.0, 1.0, 2.0, 3.0]
    batch = trainer.round_buffer.micro_batches[0]
    assert batch["tool_mask"].tolist() == [[1, 0, 1]] * 4
    assert trainer.state.log_history[0]["completions/mean_length"] == 2.0  # sampled tokens only


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda out: out.pop("logprobs"), r"rollout_func must return keys \['logprobs'\]"),
        (
            lambda out: out.update(completion_ids=out["completion_ids"][:1]),
            "'completion_ids' with 1 entries for 4",
        ),
        (lambda out: out.update(env_mask=[[1]] * 4), r"env_mask\[0\] of length 1 for a completion of 3"),
        (lambda out: out.update(score=[1.0]), "extra field 'score' with 1 values for 4 prompts"),
    ],
)
def test_a_malformed_rollout_is_refused_by_name(tmp_path, change, message):
    def rollout(prompts, trainer):
        out = _rollout(prompts, trainer)
        change(out)
        return out

    trainer = _trainer(tmp_path, rollout_func=rollout)
    with pytest.raises(RolloutError, match=message):
        trainer.train()
