"""CheckpointGuardCallback in two real processes: rank 0 marks a checkpoint only after every rank wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainwright.callbacks.checkpoint_guard import COMPLETE_MARKER, marker_problem

SCRIPT = Path(__file__).with_name("guard_two_process_script.py")


@pytest.mark.slow
def test_marker_waits_for_every_rank(tmp_path, launch_two_processes):
    launch_two_processes(str(SCRIPT), str(tmp_path))
    assert [json.loads((tmp_path / f"rank{r}.json").read_text())["num_processes"] for r in range(2)] == [2, 2]
    for step in (1, 2):
        folder = tmp_path / "run" / f"checkpoint-{step}"
        files = json.loads((folder / COMPLETE_MARKER).read_text())["files"]
        # rank 1 wrote its file 0.5 s into on_save: without the barrier rank 0's marker would miss it
        assert "rank1_extra.txt" in files
        assert {"rng_state_0.pth", "rng_state_1.pth"} <= set(files)
        assert marker_problem(folder) is None
