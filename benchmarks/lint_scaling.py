"""How ``trainwright lint`` and ``trainwright fix`` scale with the size of one file.

Three generated workloads, each in a fresh temporary folder:

* ``ifs-N``: a Trainer subclass whose ``training_step`` holds N step-gated blocks
  (``if self.state.global_step % 10 == 0: print(...)``), N = 2,500 / 5,000 / 10,000. Lint time should
  grow linearly (2,500 : 5,000 : 10,000 ~ 1 : 2 : 4); target: lint + fix of 10,000 under 2 s.
* ``literal-100k``: a 100,000-element list literal plus a Trainer subclass with a fixable TW301
  ``compute_loss(self, model, inputs, return_outputs=False)``. Target: ``fix`` under 2 s and under
  210 MB peak RSS (the fixer must not parse and position the whole file with libcst).
* ``fixable-ifs-10k``: the 10,000 gated blocks inside a ``compute_loss`` that TW301 fixes (a signature and a
  ``super()`` call to change). Target: ``fix`` <= 3 x ``lint`` (it was 20 x: libcst parsed the whole method;
  now the untouched blocks are holes it never sees).
* ``dict-100k``: a 100,000-key dict literal inside a ``compute_loss`` that TW301 fixes: bounded like the
  above (it took 42 s and 1.2 GB).
* ``named-6,000``: 6,000 small files named on the command line, as pre-commit names them on a large
  repository, a tenth of them Trainer subclasses. Target: lint peak RSS under 600 MB (it was 2.3 GB: every
  named file's tree was kept).
* ``chain-N``: N classes, each the subclass of the one before, the first a Trainer subclass and the last
  with a private override (one TW101), N = 1,000 / 2,000 / 4,000; and ``cycle-500``: 500 classes whose
  bases form one cycle (Python cannot define them: reported as unresolved, never a crash). The project
  model resolves each class once from its bases' cached MROs; a class's MRO is as long as the chain
  above it, so the MROs of a chain of N hold N²/2 entries, and the time grows with that (the audit's
  code was cubic: 1,000 classes 2.7 s, 2,000 16.5 s; a 500-class cycle crashed it).

Every command runs in a fresh process, ``--repeat`` times (median reported); ``fix`` gets a fresh copy
of the file each time so it always has the same work to do. Peak RSS is measured per run by a small
wrapper process that runs the command as its only child and reads ``RUSAGE_CHILDREN.ru_maxrss``
(that figure is the maximum over all children a process has waited for, so each run needs its own
wrapper). The table is Markdown on stdout.

    python benchmarks/lint_scaling.py
    python benchmarks/lint_scaling.py --repeat 5 --sizes 2500,5000,10000,20000
    python benchmarks/lint_scaling.py --sizes 2500 --chains 1000,2000,4000,8000
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TRAINWRIGHT = [sys.executable, "-m", "trainwright_lint"]  # the `trainwright` program, this interpreter
TARGET = "5.24.0"

# Runs argv[1:] as its only child; prints wall seconds and the child's peak RSS in KiB as JSON.
_WRAPPER = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.perf_counter() - start
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": rc, "wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_kib": ru.ru_maxrss}))
"""


def _gated_blocks(n: int) -> str:
    """``n`` step-gated ``print`` blocks, indented as a method body's statements."""
    return "".join(
        f"        if self.state.global_step % 10 == {i % 10}:\n"
        f"            print('step', {i}, self.state.global_step)\n"
        for i in range(n)
    )


def step_gated_ifs(n: int) -> str:
    """A Trainer subclass with one method of ``n`` step-gated ``if`` blocks (TW201 territory)."""
    blocks = _gated_blocks(n)
    return (
        "from transformers import Trainer\n\n\n"
        "class StepTrainer(Trainer):\n"
        "    def training_step(self, model, inputs, num_items_in_batch=None):\n"
        "        loss = super().training_step(model, inputs, num_items_in_batch)\n"
        f"{blocks}"
        "        return loss\n"
    )


def big_literal(n: int = 100_000) -> str:
    """A ``n``-element list literal, then a Trainer subclass with one fixable TW301."""
    items = "".join(f"    {i},\n" for i in range(n))
    return (
        "from transformers import Trainer\n\n"
        f"TABLE = [\n{items}]\n\n\n"
        "class LossTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        "        return super().compute_loss(model, inputs, return_outputs)\n"
    )


def fixable_ifs(n: int) -> str:
    """``n`` step-gated blocks inside a ``compute_loss`` without ``num_items_in_batch`` (TW301 fixes it)."""
    blocks = _gated_blocks(n)
    return (
        "from transformers import Trainer\n\n\n"
        "class StepTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        f"{blocks}"
        "        return super().compute_loss(model, inputs, return_outputs)\n"
    )


def dict_in_method(n: int = 100_000) -> str:
    """A ``n``-key dict literal inside a ``compute_loss`` that TW301 fixes."""
    items = "".join(f"            'k{i}': {i},\n" for i in range(n))
    return (
        "from transformers import Trainer\n\n\n"
        "class DictTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        f"        table = {{\n{items}        }}\n"
        "        return super().compute_loss(model, inputs, return_outputs)\n"
    )


def named_files(folder: Path, n: int = 6_000) -> list[str]:
    """``n`` small modules in ``folder``, every tenth a Trainer subclass; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        path = folder / f"m{i}.py"
        if i % 10 == 0:
            path.write_text(
                f"from transformers import Trainer\n\n\nclass T{i}(Trainer):\n"
                "    def log(self, logs):\n        super().log(logs)\n",
                encoding="utf-8",
            )
        else:
            path.write_text(
                f"import torch\n\n\nclass Net{i}(torch.nn.Module):\n    pass\n" * 5, encoding="utf-8"
            )
        out.append(str(path))
    return out


def class_chain(n: int, cycle: bool = False) -> str:
    """``n`` classes ``Level<i>(Level<i-1>)``: the first derives from ``Trainer`` (or, with ``cycle``, from
    the last, closing a cycle), the last overrides ``_save`` (one TW101 when the chain is resolved)."""
    first = f"Level{n - 1}" if cycle else "Trainer"
    classes = "".join(f"class Level{i}(Level{i - 1}):\n    pass\n\n\n" for i in range(1, n - 1))
    return (
        "from transformers import Trainer\n\n\n"
        f"class Level0({first}):\n    pass\n\n\n{classes}"
        f"class Level{n - 1}(Level{n - 2}):\n"
        "    def _save(self, output_dir=None, state_dict=None):\n"
        "        return super()._save(output_dir, state_dict)\n"
    )


@dataclass(frozen=True)
class Run:
    """Medians over ``repeat`` fresh runs of one command."""

    wall: float  # seconds
    cpu: float  # user + system seconds of the command (less sensitive to a busy machine than wall)
    rss_mb: float  # peak resident set size
    rc: int  # exit status of the last run


def measure(cmd: list[str], prepare: Callable[[], None], repeat: int) -> Run:
    rows = []
    for _ in range(repeat):
        prepare()
        done = subprocess.run(
            [sys.executable, "-c", _WRAPPER, *cmd], capture_output=True, text=True, check=True
        )
        rows.append(json.loads(done.stdout))
    return Run(
        wall=statistics.median(r["wall"] for r in rows),
        cpu=statistics.median(r["cpu"] for r in rows),
        rss_mb=statistics.median(r["rss_kib"] / 1024 for r in rows),
        rc=rows[-1]["rc"],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (median reported)")
    parser.add_argument("--sizes", default="2500,5000,10000", help="numbers of if blocks")
    parser.add_argument("--literal", type=int, default=100_000, help="elements of the list literal")
    parser.add_argument("--chains", default="1000,2000,4000", help="lengths of the class chains")
    args = parser.parse_args(argv)
    workloads = [(f"ifs-{int(n):,}", step_gated_ifs(int(n))) for n in args.sizes.split(",")]
    workloads.append((f"literal-{args.literal // 1000}k", big_literal(args.literal)))
    workloads.append(("fixable-ifs-10k", fixable_ifs(10_000)))
    workloads.append(("dict-100k", dict_in_method(100_000)))
    workloads += [(f"chain-{int(n):,}", class_chain(int(n))) for n in args.chains.split(",")]
    workloads.append(("cycle-500", class_chain(500, cycle=True)))
    common = ["--transformers-version", TARGET, "-j", "1"]
    rows: list[str] = []
    lint_times: dict[str, float] = {}
    fix_times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="tw-scaling-") as tmp:
        for name, source in workloads:
            pristine = Path(tmp) / f"{name}.orig"
            pristine.write_text(source, encoding="utf-8")
            target = Path(tmp) / f"{name.replace(',', '')}.py"

            def fresh(src: Path = pristine, dst: Path = target) -> None:
                shutil.copyfile(src, dst)

            fresh()
            lint = measure([*TRAINWRIGHT, "lint", *common, str(target)], fresh, args.repeat)
            fix = measure([*TRAINWRIGHT, "fix", *common, str(target)], fresh, args.repeat)
            lint_times[name] = lint.wall
            fix_times[name] = fix.wall
            rows.append(
                f"| {name} | {len(source.splitlines()):,} "
                f"| {lint.wall:.2f} | {lint.cpu:.2f} | {lint.rss_mb:.0f} | {lint.rc} "
                f"| {fix.wall:.2f} | {fix.cpu:.2f} | {fix.rss_mb:.0f} | {fix.rc} | {lint.wall + fix.wall:.2f} |"
            )
        named = named_files(Path(tmp) / "named")
        many = measure([*TRAINWRIGHT, "lint", *common, "--exit-zero", *named], lambda: None, args.repeat)
    print(f"trainwright lint / fix, median of {args.repeat} fresh runs, -j 1, transformers {TARGET}\n")
    print(
        "| workload | lines | lint s | lint cpu s | lint MB | lint rc "
        "| fix s | fix cpu s | fix MB | fix rc | lint+fix s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    for name in ("fixable-ifs-10k", "dict-100k"):
        print(f"\nfix ÷ lint, {name}: {fix_times[name] / lint_times[name]:.1f} (goal <= 3)")
    print(f"\nnamed-6,000: lint {many.wall:.2f} s, peak {many.rss_mb:.0f} MB (goal < 600 MB)")
    for prefix in ("ifs-", "chain-"):
        series = [(k, v) for k, v in lint_times.items() if k.startswith(prefix)]
        if len(series) > 1:
            base = series[0][1]
            ratio = " : ".join(f"{v / base:.1f}" for _, v in series)
            print(f"\nlint time ratio {' : '.join(k for k, _ in series)} = {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
