"""The lint side must never pull torch: ``import trainwright, trainwright_lint`` stays torch-free."""

from __future__ import annotations

import subprocess
import sys


def _imported_modules(code: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True
    )
    modules = set()
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    return modules


def test_import_does_not_pull_torch_or_transformers() -> None:
    modules = _imported_modules("import trainwright, trainwright_lint, trainwright_lint.cli")
    assert "trainwright" in modules
    heavy = {m for m in modules if m.split(".")[0] in {"torch", "transformers", "accelerate", "datasets"}}
    assert not heavy, f"import pulled heavy modules: {sorted(heavy)[:10]}"


def test_trainer_without_train_extra_names_the_install_command() -> None:
    # Simulate a lint-only install by hiding torch from the import system.
    code = (
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "import importlib.util as u\n"
        "real = u.find_spec\n"
        "u.find_spec = lambda name, *a, **k: None if name == 'torch' else real(name, *a, **k)\n"
        "try:\n"
        "    from trainwright import DPOTrainer\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert 'pip install "trainwright[train]"' in out
