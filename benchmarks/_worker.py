"""One benchmark measurement in a fresh process: ``_worker.py ALGO IMPL SIZE STEPS [extra args]``.

Prints one JSON line with the algorithm module's results plus ``peak_rss_mb`` of this process.
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
    with tempfile.TemporaryDirectory() as workdir:
        result = module.run(impl=impl, size=size, steps=int(steps), workdir=workdir, extra=extra)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


if __name__ == "__main__":
    main()
