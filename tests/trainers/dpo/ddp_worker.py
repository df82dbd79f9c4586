"""One DPO step on 4 pairs under ``accelerate launch`` (2 CPU processes × 2 pairs); run by test_dpo_ddp.py.

Writes ``log_history.json`` and ``weights.pt`` (rank 0) into the folder given as the first argument; a second
argument ``share`` forces the shared-prompt forward on (the tiny model is below its size threshold), so that
its two model calls per forward are checked under DDP too.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from conftest import make_config, text_pairs

from trainwright import DPOTrainer
from trainwright.toy import build_tiny_causal_lm, build_tokenizer

N_PAIRS = 4


def build_and_train(out: Path, per_device_batch: int, share_prompts: bool = False) -> DPOTrainer:
    """Shared with the single-process run in the test, so both sides use the same settings."""
    if share_prompts:
        from trainwright.trainers.common import logprobs

        logprobs.CALL_OVERHEAD_PARAMETER_TOKENS = 0
        logprobs.WEIGHT_GRADIENT_TOKENS = 0
    tokenizer = build_tokenizer()
    trainer = DPOTrainer(
        build_tiny_causal_lm(tokenizer, seed=0),
        ref_model=build_tiny_causal_lm(tokenizer, seed=1),
        args=make_config(
            out,
            per_device_train_batch_size=per_device_batch,
            max_steps=1,
            optim="sgd",
            learning_rate=1.0,
            max_grad_norm=0.0,
        ),
        train_dataset=text_pairs(N_PAIRS),
        processing_class=tokenizer,
    )
    trainer.train()
    return trainer


def main() -> None:
    torch.set_num_threads(1)
    out = Path(sys.argv[1])
    trainer = build_and_train(out, per_device_batch=N_PAIRS // 2, share_prompts=sys.argv[2:] == ["share"])
    if trainer.accelerator.is_main_process:
        assert trainer.accelerator.num_processes == 2, trainer.accelerator.num_processes
        (out / "log_history.json").write_text(json.dumps(trainer.state.log_history))
        torch.save({k: v.detach().cpu() for k, v in trainer.model.state_dict().items()}, out / "weights.pt")
    # Both ranks are done and the results are on disk: leave without interpreter teardown. gloo's
    # destructors (run when DDP's reducer is freed at exit) can hang joining their threads or abort
    # with "terminate called without an active exception", long after the work succeeded.
    trainer.accelerator.wait_for_everyone()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
