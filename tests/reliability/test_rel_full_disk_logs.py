"""A GRPO run with ``log_completions=True`` on a full file system keeps training (issue 38, item 2).

The audit: the completions table's append raised ``OSError`` out of ``on_log`` and ended the run,
losing everything since the last checkpoint, while every other log writer warned and continued. Here a
real process trains under ``RLIMIT_FSIZE`` (CPython ignores ``SIGXFSZ``, so a write past the limit fails
with ``EFBIG``, as a full disk fails with ``ENOSPC``): it must finish all its steps, warn once, and leave
a completions file of whole lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

resource = pytest.importorskip("resource")

HERE = Path(__file__).resolve().parent
LIMIT = 1000  # bytes: the first rounds' rows fit (about 270 bytes a step), later ones do not

SCRIPT = textwrap.dedent(
    """
    import json, resource, sys, warnings
    import torch
    torch.set_num_threads(1)
    from rel_trainers import grpo_trainer

    out = sys.argv[1]
    trainer = grpo_trainer(
        out, save_strategy="no", log_completions=True, completions_jsonl=out + "/c.jsonl",
        steps_per_generation=1, max_steps=8,  # a round, and its rows, at every step
    )
    resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        trainer.train()
    found = [str(w.message) for w in record if "CompletionsLogCallback" in str(w.message)]
    print(json.dumps({{"step": trainer.state.global_step, "warnings": found}}))
    """
).format(limit=LIMIT)


def test_grpo_completions_log_past_a_file_size_limit_keeps_training(tmp_path):
    pytest.importorskip("datasets")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["step"] == 8  # every step trained
    first, *rest = result["warnings"]
    assert "could not write the" in first and "completion rows of step" in first and "File too large" in first
    # a smaller later append may still fit under the limit: each streak is one warning, closed by one more
    kinds = ["could not write the" in m or "works again" in m or "until the end" in m for m in rest]
    assert all(kinds) and len(rest) < result["step"]
    table = (tmp_path / "c.jsonl").read_bytes()
    assert 0 < len(table) <= LIMIT and table.endswith(b"\n")
    steps = [json.loads(line)["step"] for line in table.splitlines()]  # whole lines only
    assert steps[0] == 1 and len(set(steps)) < result["step"]  # some rows were lost, none torn
