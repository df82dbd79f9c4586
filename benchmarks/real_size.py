#!/usr/bin/env python
"""Real-size benchmark: our DPO and GRPO trainers against TRL's on a model of a named, realistic size.

    python benchmarks/real_size.py all --config qwen2.5-0.5b --repeats 3     # the table of issue 24
    python benchmarks/real_size.py all --config 125m --repeats 1             # quick: ~125M parameters
    python benchmarks/real_size.py grpo --config 125m --spg 2 --profile      # one algorithm, with a profile
    python benchmarks/real_size.py prepare --config qwen2.5-0.5b             # only build the model folder

Why this exists: the toy models of ``trainers_vs_trl.py`` (2-3M parameters) measure per-step overhead;
users train 0.5B models and larger, where the weight gradients, the embedding / LM head over a 150k
vocabulary and the allocations dominate. Decisions tuned on toys (prefix sharing) can invert there.

The model is randomly initialised from a config (``CONFIGS``: Qwen2.5-0.5B's dimensions, 494M parameters,
vocabulary 151,936, tied embeddings; and a ~125M one for quick runs), float32, and saved once with a
tokenizer whose vocabulary has exactly the model's size, built locally (no hub): a byte-level BPE whose
merges spell every 4-letter lowercase word behind a space (``" abcd"`` is one token), so the benchmark's
prompts and answers have exactly the token lengths asked for. Both sides load the same saved folder.

Shapes (issue 24): DPO, 2 pairs per step, 64-token prompts, 64-token answers; GRPO, 4 completions per
step, 4 generations per prompt, 32-token completions, ``steps_per_generation`` 1 or 2, 32-token
prompts. Two torch threads, no gradient checkpointing, AdamW, lr 1e-6 (the model barely moves, so
both sides generate and score the same kind of text throughout).

Every run is a fresh process (so ``ru_maxrss`` is that run's own peak), and runs alternate ours / TRL
/ ours / TRL so that drift of the machine's load hits both. ``sec_per_step`` is the mean over the timed
optimiser steps, after ``WARMUP`` steps (one generation round for GRPO), so a spg-2 run's steps with and
without generation are both counted. ``--profile`` adds the per-part split of ``benchmarks/_profile.py``
(forward, backward, generation, optimizer, ...). The printed table is ready to paste into
docs/benchmarks.md together with the command, date and ``uptime``.

On a machine with CUDA the same command trains on the GPU (``--bf16`` loads the weights in bf16) and
each run also reports its peak GPU memory (``peak_gpu_gib``); no code changes. The model folder lives
under ``$TRAINWRIGHT_BENCH_MODELS`` (default ``/tmp/trainwright-real-size``): 2 GB for the 0.5B config.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
IMPLS = ("ours", "trl")
THREADS = 2
DEFAULT_ROOT = Path(os.environ.get("TRAINWRIGHT_BENCH_MODELS", "/tmp/trainwright-real-size"))


@dataclass(frozen=True)
class ModelConfig:
    """Qwen2 dimensions of a benchmark model."""

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    tie_embeddings: bool = True


CONFIGS = {
    # Qwen/Qwen2.5-0.5B's config.json: 494,032,768 parameters
    "qwen2.5-0.5b": ModelConfig(151_936, 896, 4864, 24, 14, 2),
    # GPT-2-small-like depth and width with a 32k vocabulary: ~128M parameters
    "125m": ModelConfig(32_000, 768, 3072, 12, 12, 4),
}
SPECIAL_TOKENS = ["<|endoftext|>", "<|pad|>"]
ALPHABET = "abcdefghijklmnopqrstuvwxyz"
SPACE = "\u0120"  # the byte-level alphabet's spelling of " "


# --------------------------------------------------------------------------------------------------
# the model folder
# --------------------------------------------------------------------------------------------------
def word_tokens(count: int) -> list[str]:
    """The first ``count`` space-led 4-letter words (``" aaaa"``, ``" aaab"``, ...) in vocabulary order."""
    words = []
    for a in ALPHABET:
        for b in ALPHABET:
            for c in ALPHABET:
                for d in ALPHABET:
                    if len(words) == count:
                        return words
                    words.append(" " + a + b + c + d)
    if len(words) < count:
        raise ValueError(f"at most {len(words)} 4-letter words, {count} asked")
    return words


def build_tokenizer(vocab_size: int) -> Any:
    """A byte-level BPE tokenizer of exactly ``vocab_size`` tokens, built without any corpus.

    Vocabulary: the 256 byte symbols, the merges ``Ġ+a``, ``Ġa+b``, ``Ġab+c`` (every 1-3 letter
    space-led prefix), then ``Ġabc+d`` for as many 4-letter words as fill the vocabulary, then the
    special tokens. Each space-led 4-letter word that made it in encodes to one token.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {symbol: i for i, symbol in enumerate(alphabet)}
    merges: list[tuple[str, str]] = []

    def add(left: str, right: str) -> None:
        merges.append((left, right))
        vocab[left + right] = len(vocab)

    prefixes = [SPACE]
    for _ in range(3):  # Ġa, Ġab, Ġabc
        grown = []
        for prefix in prefixes:
            for letter in ALPHABET:
                add(prefix, letter)
                grown.append(prefix + letter)
        prefixes = grown
    for word in vocab_words(vocab_size):
        add(SPACE + word[1:4], word[4])
    raw = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token=SPECIAL_TOKENS[0], pad_token=SPECIAL_TOKENS[1]
    )
    if len(tokenizer) != vocab_size:
        raise AssertionError(f"built {len(tokenizer)} tokens, wanted {vocab_size}")
    return tokenizer


def model_folder(config: str, root: Path = DEFAULT_ROOT) -> Path:
    """The saved model + tokenizer of ``config``, built (once, seed 0) when missing."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    spec = CONFIGS[config]
    path = root / config
    if (path / "config.json").exists() and (path / "tokenizer.json").exists():
        return path
    tokenizer = build_tokenizer(spec.vocab_size)
    torch.manual_seed(0)
    model_config = Qwen2Config(
        vocab_size=spec.vocab_size,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=spec.num_heads,
        num_key_value_heads=spec.num_kv_heads,
        max_position_embeddings=4096,
        rope_theta=1_000_000.0,
        rms_norm_eps=1e-6,
        tie_word_embeddings=spec.tie_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(model_config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    tmp = path.with_name(path.name + ".partial")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    tmp.rename(path)
    return path


def vocab_words(vocab_size: int) -> list[str]:
    """The space-led 4-letter words that are single tokens of :func:`build_tokenizer` (``vocab_size``)."""
    return word_tokens(vocab_size - 256 - sum(26**n for n in (1, 2, 3)) - len(SPECIAL_TOKENS))


def text_of(words: list[str], start: int, length: int) -> str:
    """``length`` consecutive words from ``start`` (wrapping): exactly ``length`` tokens."""
    return "".join(words[(start + i) % len(words)] for i in range(length))


# --------------------------------------------------------------------------------------------------
# one run (in its own process)
# --------------------------------------------------------------------------------------------------
#: "float32" (the CPU measurement) or "bfloat16" (``--bf16``, for a GPU run); set in the run's process
DTYPE = os.environ.get("TRAINWRIGHT_BENCH_DTYPE", "float32")


def _load(path: Path) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # the checkpoint is float32; with --bf16 the weights are loaded in bf16 (Trainer's bf16 flag is autocast)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, DTYPE))
    return model, AutoTokenizer.from_pretrained(path)


def _step_clock() -> Any:
    """A TrainerCallback recording wall and thread-CPU time at train begin and every step end."""
    from transformers import TrainerCallback

    class Clock(TrainerCallback):
        def __init__(self) -> None:
            self.wall: list[float] = []
            self.cpu: list[float] = []

        def on_train_begin(self, args, state, control, **kwargs):
            self.wall.append(time.perf_counter())
            self.cpu.append(time.thread_time())

        def on_step_end(self, args, state, control, **kwargs):
            self.wall.append(time.perf_counter())
            self.cpu.append(time.thread_time())

    return Clock()


def _common(workdir: str, steps: int) -> dict[str, Any]:
    import torch

    gpu = torch.cuda.is_available()  # same code on a GPU machine: no flag needed
    return {
        "output_dir": workdir,
        "max_steps": steps,
        "learning_rate": 1e-6,
        "logging_steps": 1,
        "report_to": "none",
        "save_strategy": "no",
        "use_cpu": not gpu,
        "bf16": gpu and DTYPE == "bfloat16",
        "disable_tqdm": True,
        "seed": 0,
        "dataloader_num_workers": 0,
    }


def build_dpo(impl: str, path: Path, workdir: str, steps: int) -> Any:
    """DPO trainer: 2 pairs per step, 64-token prompts and answers, sigmoid loss, β 0.1, explicit reference."""
    from datasets import Dataset

    model, tokenizer = _load(path)
    ref_model, _ = _load(path)
    words = vocab_words(CONFIGS[path.name].vocab_size)
    rows = [
        {
            "prompt": text_of(words, 997 * i, 64),
            "chosen": text_of(words, 997 * i + 311, 64),
            "rejected": text_of(words, 997 * i + 613, 64),
        }
        for i in range(2 * steps)
    ]
    settings = {**_common(workdir, steps), "per_device_train_batch_size": 2, "beta": 0.1, "max_length": 256}
    settings["loss_type"] = ["sigmoid"]
    if impl == "ours":
        from trainwright import DPOConfig, DPOTrainer

        args, cls = DPOConfig(**settings), DPOTrainer
    else:
        import trl

        args, cls = trl.DPOConfig(**settings, gradient_checkpointing=False), trl.DPOTrainer
    return cls(
        model=model,
        ref_model=ref_model,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
    )


def _reward(completions: list[str], **kwargs: Any) -> list[float]:
    """Share of letters in the first half of the alphabet: varies between completions, costs nothing."""
    return [sum(ch <= "m" for ch in c if ch.isalpha()) / max(1, len(c)) for c in completions]


def build_grpo(impl: str, path: Path, workdir: str, steps: int, spg: int) -> Any:
    """GRPO trainer: 4 completions per step (one prompt x 4 generations), 32 new tokens, loss "dapo", β 0."""
    from datasets import Dataset

    model, tokenizer = _load(path)
    words = vocab_words(CONFIGS[path.name].vocab_size)
    prompts = [text_of(words, 991 * i, 32) for i in range(8 * steps)]
    settings = {
        **_common(workdir, steps),
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        "gradient_accumulation_steps": 1,
        "steps_per_generation": spg,
        "max_completion_length": 32,
        "temperature": 1.0,
        "loss_type": "dapo",
        "beta": 0.0,
    }
    if impl == "ours":
        from trainwright import GRPOConfig, GRPOTrainer

        args, cls = GRPOConfig(**settings), GRPOTrainer
    else:
        import trl

        args, cls = trl.GRPOConfig(**settings, gradient_checkpointing=False), trl.GRPOTrainer
    dataset = Dataset.from_dict({"prompt": prompts})
    return cls(
        model=model, reward_funcs=_reward, args=args, train_dataset=dataset, processing_class=tokenizer
    )


def one_run(algo: str, impl: str, config: str, steps: int, spg: int, profile: bool) -> dict[str, Any]:
    """Train ``steps`` steps in this process; seconds per step, peak RSS and (optionally) the profile."""
    import tempfile

    import torch

    torch.set_num_threads(THREADS)
    path = model_folder(config)
    warmup = spg if algo == "grpo" else 1
    if steps <= warmup:
        raise SystemExit(f"--steps must exceed the {warmup} warm-up step(s)")
    with tempfile.TemporaryDirectory() as workdir:
        if algo == "dpo":
            trainer = build_dpo(impl, path, workdir, steps)
        else:
            trainer = build_grpo(impl, path, workdir, steps, spg)
        if (
            impl == "ours" and os.environ.get("TRAINWRIGHT_BENCH_SHARING") == "off"
        ):  # A/B of the shared forward
            from trainwright.trainers.common.logprobs import PrefixSharing

            trainer._prefix_sharing = PrefixSharing(enabled=False)
            backend = getattr(trainer, "generation_backend", None)
            if backend is not None:
                backend.prompt_sharing.enabled = False
        clock = _step_clock()
        trainer.add_callback(clock)
        profiler = None
        if profile:
            from _profile import StepProfiler

            profiler = StepProfiler(algo, warmup_steps=warmup, clock="wall")
            profiler.install(trainer)
        generate_calls = [0]
        original_generate = trainer.model.generate

        def counted(*args: Any, **kwargs: Any) -> Any:
            generate_calls[0] += 1
            return original_generate(*args, **kwargs)

        trainer.model.generate = counted
        trainer.train()
    wall = [b - a for a, b in zip(clock.wall, clock.wall[1:])][warmup:]
    cpu = [b - a for a, b in zip(clock.cpu, clock.cpu[1:])][warmup:]
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    result: dict[str, Any] = {
        "algo": algo,
        "impl": impl,
        "config": config,
        "spg": spg,
        "params": sum(p.numel() for p in trainer.model.parameters()),
        "sec_per_step": statistics.fmean(wall),
        "cpu_sec_per_step": statistics.fmean(cpu),
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "peak_gpu_gib": torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else 0.0,
        "generate_calls": generate_calls[0],
        "losses": losses,
    }
    if profiler is not None:
        from _profile import DPO_CATEGORIES, GRPO_CATEGORIES

        result["profile"] = profiler.result(GRPO_CATEGORIES if algo == "grpo" else DPO_CATEGORIES)
    return result


# --------------------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------------------
def measure(
    algo: str, impl: str, config: str, steps: int, spg: int, profile: bool, dtype: str = "float32"
) -> dict[str, Any]:
    """:func:`one_run` in a fresh process."""
    cmd = [sys.executable, __file__, "_one", algo, impl, config, str(steps), str(spg)]
    if profile:
        cmd.append("--profile")
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TQDM_DISABLE": "1",
        "WANDB_DISABLED": "true",
        "OMP_NUM_THREADS": str(THREADS),
        "TRAINWRIGHT_BENCH_DTYPE": dtype,
    }
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"benchmark run failed: {' '.join(cmd)}\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def cases(algo: str, spg: int | None) -> list[tuple[str, int]]:
    if algo == "all":
        return [("dpo", 1), ("grpo", 1), ("grpo", 2)]
    if algo == "dpo":
        return [("dpo", 1)]
    return [("grpo", spg)] if spg else [("grpo", 1), ("grpo", 2)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_one":
        algo, impl, config, steps, spg = argv[1:6]
        print(json.dumps(one_run(algo, impl, config, int(steps), int(spg), "--profile" in argv[6:])))
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("algo", choices=["all", "dpo", "grpo", "prepare"])
    parser.add_argument("--config", choices=sorted(CONFIGS), default="125m")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per side")
    parser.add_argument(
        "--steps", type=int, default=None, help="optimiser steps per run (default: warm-up + 3)"
    )
    parser.add_argument("--spg", type=int, default=None, choices=[1, 2], help="GRPO steps_per_generation")
    parser.add_argument("--profile", action="store_true", help="also print where each step's time goes")
    parser.add_argument("--json", type=Path, default=None, help="write every run here")
    parser.add_argument("--bf16", action="store_true", help="bf16 weights (for a GPU run; CPU runs use fp32)")
    args = parser.parse_args(argv)
    path = model_folder(args.config)
    if args.algo == "prepare":
        print(path)
        return 0
    load = os.getloadavg()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, config {args.config}, load {load[0]:.2f}")
    rows, everything = [], []
    for algo, spg in cases(args.algo, args.spg):
        steps = args.steps or ((spg if algo == "grpo" else 1) + (4 if spg == 2 else 3))
        runs: dict[str, list[dict[str, Any]]] = {impl: [] for impl in IMPLS}
        for _ in range(args.repeats):
            for impl in IMPLS:
                dtype = "bfloat16" if args.bf16 else "float32"
                run = measure(algo, impl, args.config, steps, spg, args.profile, dtype)
                runs[impl].append(run)
                print(
                    f"  {algo} spg{spg} {impl}: {run['sec_per_step']:.2f} s/step "
                    f"({run['cpu_sec_per_step']:.2f} CPU s), {run['peak_rss_gib']:.2f} GiB, load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        rows.append((algo, spg, steps, runs))
        everything.append({"algo": algo, "spg": spg, "steps": steps, "runs": runs})
    end_load = os.getloadavg()
    print(
        f"\nmedian of {args.repeats} alternating fresh runs per side, {args.config} "
        f"({rows[0][3]['ours'][0]['params'] / 1e6:.0f}M params), {THREADS} threads, load {load[0]:.2f}-{end_load[0]:.2f}"
    )
    print("| case | ours s/step | TRL s/step | ratio | ours peak RSS GiB | TRL peak RSS GiB | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for algo, spg, steps, runs in rows:
        med = {
            impl: {k: statistics.median(r[k] for r in runs[impl]) for k in ("sec_per_step", "peak_rss_gib")}
            for impl in IMPLS
        }
        name = "DPO" if algo == "dpo" else f"GRPO spg {spg}"
        o, t = med["ours"], med["trl"]
        print(
            f"| {name} | {o['sec_per_step']:.2f} | {t['sec_per_step']:.2f} | "
            f"{o['sec_per_step'] / t['sec_per_step']:.2f} | {o['peak_rss_gib']:.2f} | {t['peak_rss_gib']:.2f} | "
            f"{o['peak_rss_gib'] / t['peak_rss_gib']:.2f} |"
        )
    if args.profile:
        from _profile import format_profile

        for algo, spg, steps, runs in rows:
            profiles = {impl: [r["profile"] for r in runs[impl]] for impl in IMPLS}
            print(f"\n{algo} spg {spg}:" + format_profile(algo, profiles, "wall", args.repeats))
    if args.json:
        args.json.write_text(json.dumps(everything, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
