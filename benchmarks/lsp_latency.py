"""Latency of ``trainwright server``: from a ``didChange`` to the diagnostics it publishes.

A 2,000-line trainer module is generated from the gallery's "before" files (Trainer subclasses and
callbacks with every kind of finding), each copy with its classes renamed, and opened in a real LSP
session (pygls's client over stdio, the server a subprocess running this checkout's code). Each round
sends one incremental change at the end of a line in the middle of the file, as an editor does
while the user types (a comment typed and deleted; then a new line added and deleted), and times
until the server publishes the diagnostics of that version; the server's CPU time per change is
read from ``/proc`` (what other work on a shared machine does not inflate). The first ``--warmup`` rounds are not counted. The open (the first lint, with the project
model built and the bases read) is reported on its own.

    python benchmarks/lsp_latency.py                    # 2,000 lines, 60 rounds
    python benchmarks/lsp_latency.py --lines 4000 --rounds 100 --cpus 0,1
    python benchmarks/lsp_latency.py --file .venv/lib/python3.11/site-packages/trl/trainer/dpo_trainer.py
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

    async def change(self, start: tuple[int, int], end: tuple[int, int], new_text: str) -> float:
        """Replace ``start``..``end`` ((line, character), 0-based) with ``new_text``; the time until
        the diagnostics of the new version arrive."""
        self.version += 1
        began = time.perf_counter()
        change = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=start[0], character=start[1]),
                end=types.Position(line=end[0], character=end[1]),
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


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far (Linux ``/proc``; 0 elsewhere): the server's own
    work per change, which other processes on a shared machine do not inflate as they do wall time."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def edit_line(text: str) -> tuple[int, int]:
    """The end of a line in the middle of the file inside a method body, after which both edits
    still parse (a finding-free TW000 would time the parse error, not the lint)."""
    lines = text.split("\n")
    for i in range(len(lines) // 2, len(lines)):
        if not (lines[i].startswith("        ") and lines[i].strip()):
            continue
        trial = list(lines)
        try:
            for _name, typed in EDITS:
                trial[i] = lines[i] + typed
                ast.parse("\n".join(trial))
        except SyntaxError:
            continue
        return i, len(lines[i])
    raise ValueError("no method body line after the middle of the module")


# The two kinds of edit timed, each made and undone in turn at the end of a line in the middle of the
# module: (name, text typed). Typing on a line keeps every other class where it was, so only the
# edited class's hierarchy is linted again; a new line moves every class below it, and those are.
EDITS = (("typing on a line", "  # edited"), ("adding a line", "\n        edited = 1"))


async def series(
    session: Session, args: argparse.Namespace, pid: int, at: tuple[int, int], typed: str
) -> dict[str, object]:
    """``args.warmup`` untimed, then ``args.rounds`` timed changes: ``typed`` added at ``at``, removed."""
    added_end = (at[0] + typed.count("\n"), len(typed.rsplit("\n", 1)[-1]) + (0 if "\n" in typed else at[1]))
    times = []
    cpu_began = 0.0
    for i in range(args.warmup + args.rounds):
        if i == args.warmup:
            cpu_began = cpu_seconds(pid)
        took = await (session.change(at, at, typed) if i % 2 == 0 else session.change(at, added_end, ""))
        if i >= args.warmup:
            times.append(took * 1000)
    return {"times_ms": times, "cpu_ms": (cpu_seconds(pid) - cpu_began) / args.rounds * 1000}


async def measure(args: argparse.Namespace, work: Path) -> dict[str, object]:
    if args.file:
        path = Path(args.file).resolve()  # linted in place, in its own project (never written)
        text = path.read_text(encoding="utf-8")
    else:
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
    pid = client._server.pid if client._server is not None else 0  # the server process
    at = edit_line(text)
    results = {name: await series(session, args, pid, at, typed) for name, typed in EDITS}
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {"lines": text.count("\n") + 1, "findings": session.counts[1], "open_ms": opened * 1000, **results}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=2000, help="size of the generated module (default 2000)")
    parser.add_argument("--rounds", type=int, default=60, help="changes timed (default 60 of each kind)")
    parser.add_argument("--warmup", type=int, default=5, help="changes before timing (default 5)")
    parser.add_argument(
        "--file", help="time this file instead of a generated module (opened in place, not written)"
    )
    parser.add_argument(
        "--cpus", default="", help="pin the server with taskset, e.g. 0,1 (default: not pinned)"
    )
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        (work / "pyproject.toml").write_text('[project]\nname = "latency"\nversion = "0"\n')
        result = asyncio.run(measure(args, work))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"{args.file or 'generated module'}: {result['lines']} lines, {result['findings']} findings; open (first lint): {result['open_ms']:.0f} ms"
    )
    for name, _typed in EDITS:
        row = result[name]
        assert isinstance(row, dict)
        times = row["times_ms"]
        print(
            f"{name}: didChange -> publishDiagnostics over {len(times)} changes: median "
            f"{statistics.median(times):.1f} ms, p95 {percentile(times, 0.95):.1f} ms, min {min(times):.1f} ms, "
            f"max {max(times):.1f} ms; server CPU per change {row['cpu_ms']:.1f} ms"
        )
    after = os.getloadavg()
    print(f"machine: {cores} cores visible, load average {load[0]:.2f} before, {after[0]:.2f} after")


if __name__ == "__main__":
    main()
