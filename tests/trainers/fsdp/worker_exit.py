"""How an FSDP test worker hands its result back and leaves (imported by the worker scripts, which
``accelerate launch`` runs with this folder on ``sys.path``)."""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

import torch


def write_result_and_exit(accelerator: Any, out: Path, result: dict[str, Any]) -> None:
    """Add both ranks' peak RSS to ``result``, write it from the main process, then leave without
    interpreter teardown: gloo's destructors can hang or abort at exit, long after the work succeeded."""
    rss: list[Any] = [None, None]
    torch.distributed.all_gather_object(rss, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    result["peak_rss_kib"] = rss
    if accelerator.is_main_process:
        (out / "result.json").write_text(json.dumps(result))
    accelerator.wait_for_everyone()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
