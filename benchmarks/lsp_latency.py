"""Latency of ``trainwright server``: from a ``didChange`` to the diagnostics it publishes.

A 2,000-line trainer module is generated from the gallery's "before" files (Trainer subclasses and
callbacks with every kind of finding), each copy with its classes renamed, and opened in a real LSP
session (pygls's client over stdio, the server a subprocess running this checkout's code). Each round
sends one incremental change, typing or deleting a comment on a line in the middle of the file,
as an editor does while the user types, and times until the server publishes the diagnostics of that
version. The first ``--warmup`` rounds are not counted. The open (the first lint, with the project
model built and the bases read) is reported on its own.

    python benchmarks/lsp_latency.py                    # 2,000 lines, 60 rounds
    python benchmarks/lsp_latency.py --lines 4000 --rounds 100 --cpus 2
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
GALLERY = ROOT / "examples" / "gallery"
_CLASS = re.compile(r"^class (\w+)", re.MULTILINE)


def trainer_module(lines: int) -> str:
    """At least ``lines`` lines of gallery-like code: one import block, then the gallery's classes
    over and over, copy ``k`` named ``<Name>_<k>`` (subclasses of a copy refer to the same copy)."""
    imports: dict[str, None] = {}
    bodies = []
    for path in sorted(GALLERY.glob("*_before.py")):
        source = path.read_text(encoding="utf-8")
        source_lines = source.splitlines()
        tree = ast.parse(source)
        skip = set()
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) or (
                node is tree.body[0] and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            ):
                skip.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
                if not isinstance(node, ast.Expr):
                    imports.update(dict.fromkeys(source_lines[node.lineno - 1 : node.end_lineno]))
        kept = [line for n, line in enumerate(source_lines, 1) if n not in skip]
        bodies.append("\n".join(kept).strip("\n"))
    text = "\n".join(imports) + "\n"
    copy = 0
    while text.count("\n") < lines:
        for body in bodies:
            names = _CLASS.findall(body)
            renamed = re.sub(r"\b(" + "|".join(names) + r")\b", rf"\1_{copy}", body) if names else body
            text += f"\n\n{renamed}\n"
        copy += 1
    return text


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by the nearest rank: with 60 rounds, p95 is the 57th fastest."""
    ranked = sorted(values)
    return ranked[max(0, min(len(ranked) - 1, round(q * len(ranked) + 0.5) - 1))]


class Session:
    """One document open in the server, changed round by round."""

    def __init__(self, client: LanguageClient, uri: str) -> None:
        self.client = client
        self.uri = uri
        self.version = 1
        self.arrived: dict[int, float] = {}  # version -> when its diagnostics arrived
        self.counts: dict[int, int] = {}

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            if params.uri == uri and params.version is not None:
                self.arrived[params.version] = time.perf_counter()
                self.counts[params.version] = len(params.diagnostics)

    async def until(self, version: int, since: float) -> float:
        while version not in self.arrived:
            await asyncio.sleep(0.0005)
        return self.arrived[version] - since

    async def open(self, text: str) -> float:
        began = time.perf_counter()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=text)
            )
        )
        return await self.until(1, began)

    async def change(self, line: int, character: int, end: int, new_text: str) -> float:
        self.version += 1
        began = time.perf_counter()
        change = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=line, character=character),
                end=types.Position(line=line, character=end),
            ),
            text=new_text,
        )
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                content_changes=[change],
            )
        )
        return await self.until(self.version, began)


def edit_line(text: str) -> tuple[int, int]:
    """A line in the middle of the file inside a method body (indented code): where the user types."""
    lines = text.split("\n")
    middle = len(lines) // 2
    for i in range(middle, len(lines)):
        if lines[i].startswith("        ") and lines[i].strip():
            return i, len(lines[i])
    raise ValueError("no method body line after the middle of the module")


async def measure(args: argparse.Namespace, work: Path) -> dict[str, object]:
    text = trainer_module(args.lines)
    path = work / "big_trainer.py"
    path.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "plugin")])}
    prefix = ["taskset", "-c", args.cpus] if args.cpus else []
    client = LanguageClient("lsp-latency", "1")
    session = Session(client, path.as_uri())
    command = [*prefix, sys.executable, "-m", "trainwright_lint", "server"]
    await client.start_io(command[0], *command[1:], cwd=str(work), env=env)
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    client.initialized(types.InitializedParams())
    opened = await session.open(text)
    line, end = edit_line(text)
    comment = "  # edited"
    times = []
    for i in range(args.warmup + args.rounds):
        if i % 2 == 0:
            took = await session.change(line, end, end, comment)  # type a comment at the end of the line
        else:
            took = await session.change(line, end, end + len(comment), "")  # and delete it
        if i >= args.warmup:
            times.append(took)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {
        "lines": text.count("\n") + 1,
        "findings": session.counts[1],
        "open_ms": opened * 1000,
        "times_ms": [t * 1000 for t in times],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=2000, help="size of the generated module (default 2000)")
    parser.add_argument("--rounds", type=int, default=60, help="changes timed (default 60)")
    parser.add_argument("--warmup", type=int, default=5, help="changes before timing (default 5)")
    parser.add_argument(
        "--cpus", default="", help="pin the server with taskset, e.g. 0,1 (default: not pinned)"
    )
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "pyproject.toml").write_text('[project]\nname = "latency"\nversion = "0"\n')
        result = asyncio.run(measure(args, work))
    times = result["times_ms"]
    assert isinstance(times, list)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"module: {result['lines']} lines, {result['findings']} findings; open (first lint): {result['open_ms']:.0f} ms"
    )
    print(
        f"didChange -> publishDiagnostics over {len(times)} changes: median {statistics.median(times):.1f} ms, "
        f"p95 {percentile(times, 0.95):.1f} ms, min {min(times):.1f} ms, max {max(times):.1f} ms"
    )
    after = os.getloadavg()
    print(f"machine: {cores} cores visible, load average {load[0]:.2f} before, {after[0]:.2f} after")


if __name__ == "__main__":
    main()
