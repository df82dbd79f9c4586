"""Issue 37, item 6: the private torch FSDP2 / accelerate state the trainers rely on is confined to one module,
and this test fails loudly, naming the attribute, when an installed release changes it."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from trainwright.trainers.common.fsdp_private import missing_internals

SRC = Path(__file__).resolve().parents[3] / "src" / "trainwright"
PRIVATE = re.compile(
    r"_get_fsdp_state|_fsdp_param_groups|_auto_reshard_after_forward|post_forward_mesh_info"
    r"|\.fsdp_plugin\s*=[^=]|\.distributed_type\s*=[^=]"
)


def test_the_private_internals_the_trainers_use_are_all_there():
    assert missing_internals() == [], (
        f"torch {torch.__version__} / accelerate changed private state trainwright relies on: {missing_internals()}; "
        "update src/trainwright/trainers/common/fsdp_private.py"
    )


def test_only_fsdp_private_touches_them():
    users = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if PRIVATE.search(path.read_text(encoding="utf-8"))
    )
    assert users == ["trainers/common/fsdp_private.py"], users
