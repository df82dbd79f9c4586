"""Rounds that teach nothing: GRPO rounds in which every group's rewards agree, logged at a bounded rate.

Why: a group-relative advantage is ``R_i - mean(R_group)``; when every completion of a group gets the
same reward (all 0 at the start of a hard task, all 1 once it is solved, or a reward function that
ignores the completion), that group's advantages are 0. When that holds for *every* group of a round,
the round's loss has no gradient from the rewards (only the KL term, if ``beta > 0``): training runs,
the logs look normal, and nothing is learnt. TRL logs ``frac_reward_zero_std`` and says nothing; a run
that spends hours there deserves a line in the log.

Through ``logging`` (logger ``trainwright.trainers.grpo.learning_signal``), not ``warnings``: the default
warnings filter shows one message per code location once, and a warning per round would flood the log.
The first such round is logged, then every ``every``-th one, each line with the running count, so a
long run shows the problem persisting without a line per step.
"""

from __future__ import annotations

import logging

import torch

LOGGER = logging.getLogger(__name__)


class NoSignalRounds:
    """Counts the rounds without a learning signal and logs the first and every ``every``-th."""

    def __init__(self, every: int = 50) -> None:
        if every < 1:
            raise ValueError(f"every must be >= 1, got {every}")
        self.every = every
        self.count = 0
        self.rounds = 0

    def observe(self, rewards: torch.Tensor, zero_std: torch.Tensor, key: tuple[int, int], log: bool) -> bool:
        """Record one round (its combined rewards and each completion's "my group agrees" flag); log
        when ``log`` (the main process) and the count is due. Returns whether the round had no signal.

        A round whose rewards are all missing (NaN) is left to ``GRPOTrainer.check_reward_signal``, which says why.
        """
        self.rounds += 1
        finite = rewards[~torch.isnan(rewards)]
        if not bool(zero_std.all()) or finite.numel() == 0:
            return False
        self.count += 1
        if log and (self.count == 1 or self.count % self.every == 0):
            values = torch.unique(finite)
            what = (
                f"every completion scored {float(values[0]):g}"
                if values.numel() == 1
                else "the completions of each group all scored the same"
            )
            LOGGER.warning(
                "GRPO round %d of epoch %d has no learning signal: %s, so every advantage is 0 and the round "
                "teaches nothing (%d of %d rounds so far; this line repeats every %d such rounds). Check that "
                "the reward functions tell completions apart, sample more diverse completions (temperature, "
                "num_generations), or set dynamic_sampling=True to replace groups that agree; "
                "'frac_reward_zero_std' in the logs is the share of such groups.",
                key[1], key[0], what, self.count, self.rounds, self.every,
            )  # fmt: skip
        return True
