"""One benchmark measurement in a fresh process: ``_worker.py ALGO IMPL SIZE STEPS [--profile[=CLOCK]] [extra]``.

Prints one JSON line with the algorithm module's results plus ``peak_rss_mb`` of this process. With
``--profile`` (``--profile=cpu`` for CPU time) the trainer is instrumented by
:class:`_profile.StepProfiler` and the line also holds ``profile``: seconds per step of each part.
"""

from __future__ import annotations

import importlib
import json
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    algo, impl, size, steps, *extra = sys.argv[1:]
    import torch

    torch.set_num_threads(1)
    module = importlib.import_module(f"bench_{algo}")
    profile = [arg for arg in extra if arg.split("=")[0] == "--profile"]
    extra = [arg for arg in extra if arg not in profile]
    profiler, kwargs = None, {}
    if profile:
        from _profile import StepProfiler

        clock = profile[0].split("=", 1)[1] if "=" in profile[0] else "wall"
        profiler = StepProfiler(algo, warmup_steps=getattr(module, "WARMUP_STEPS", 1), clock=clock)
        if hasattr(module, "PROFILER"):
            module.PROFILER = profiler
        kwargs["instrument"] = profiler.install
    with tempfile.TemporaryDirectory() as workdir:
        result = module.run(impl=impl, size=size, steps=int(steps), workdir=workdir, extra=extra, **kwargs)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if profiler is not None:
        from _profile import DPO_CATEGORIES, GRPO_CATEGORIES

        result["profile"] = profiler.result(GRPO_CATEGORIES if algo == "grpo" else DPO_CATEGORIES)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
