#!/usr/bin/env python
"""Where the shared-prompt forward starts to pay: the fit behind ``CALL_OVERHEAD_PARAMETER_TOKENS``.

    python benchmarks/sharing_break_even.py [--size small] [--repeats 15]

One GRPO micro-batch of the benchmark set-up (``bench_grpo``: 8 completions, 2 distinct prompts, the
trainer's own ``compute_loss`` then ``backward``) is timed in CPU time of this thread with the
shared-prompt forward forced on and forced off, alternating, for prompts cut to several widths, so
the saved tokens ``(rows − distinct prompts) × (width − 1)`` vary while the completions stay the
same. The width where both take the same time is what one extra model call costs, in tokens through
the model body; ``trainwright.trainers.common.logprobs.sharing_cost`` should put its threshold there.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", default="small", help="bench_grpo model size (tiny, small)")
    parser.add_argument("--repeats", type=int, default=15, help="timed runs per setting")
    parser.add_argument("--widths", default="3,5,8,12,18", help="prompt widths to cut the micro-batch to")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    import bench_grpo

    from trainwright.trainers.common import logprobs
    from trainwright.trainers.common.logprobs import PrefixSharing, distinct_rows

    with tempfile.TemporaryDirectory() as workdir:
        trainer, _ = bench_grpo.build("ours", args.size, bench_grpo._common(8, workdir))
    model = trainer.model
    buffered = trainer.rounds.generate_round(next(iter(trainer.get_train_dataloader())))
    base = dict(buffered[0])
    base["advantages"] = torch.randn(base["advantages"].shape, generator=torch.Generator().manual_seed(0))
    body = sum(p.numel() for n, p in model.named_parameters() if "embed" not in n and "lm_head" not in n)
    model.train()

    def timed(batch: dict, share: bool) -> float:
        # forced on: no cost bar; forced off: sharing disabled
        trainer._prefix_sharing = PrefixSharing(enabled=share)
        saved = logprobs.CALL_OVERHEAD_PARAMETER_TOKENS, logprobs.WEIGHT_GRADIENT_TOKENS
        logprobs.CALL_OVERHEAD_PARAMETER_TOKENS, logprobs.WEIGHT_GRADIENT_TOKENS = 0.0, 0.0
        try:
            start = time.thread_time()
            trainer.compute_loss(model, batch).backward()
            elapsed = time.thread_time() - start
        finally:
            logprobs.CALL_OVERHEAD_PARAMETER_TOKENS, logprobs.WEIGHT_GRADIENT_TOKENS = saved
        model.zero_grad(set_to_none=False)
        return elapsed

    print(
        f"model body: {body:,} parameters; CPU ms per micro-step (compute_loss + backward), median of {args.repeats}"
    )
    print("| prompt width | saved tokens | saved parameter-tokens | plain ms | shared ms | shared − plain |")
    print("|---:|---:|---:|---:|---:|---:|")
    for width in (int(w) for w in args.widths.split(",")):
        batch = dict(base)
        batch["prompt_ids"], batch["prompt_mask"] = (
            base["prompt_ids"][:, -width:],
            base["prompt_mask"][:, -width:],
        )
        batch["prompt_rows"], batch["prompt_inverse"] = distinct_rows(
            batch["prompt_ids"], batch["prompt_mask"]
        )
        saved = (batch["prompt_inverse"].numel() - batch["prompt_rows"].numel()) * (width - 1)
        for _ in range(2):  # warm-up
            timed(batch, False), timed(batch, True)
        plain, shared = [], []
        for _ in range(args.repeats):
            plain.append(timed(batch, False))
            shared.append(timed(batch, True))
        p, s = statistics.median(plain) * 1e3, statistics.median(shared) * 1e3
        print(f"| {width} | {saved} | {saved * body:.2e} | {p:.1f} | {s:.1f} | {s - p:+.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
