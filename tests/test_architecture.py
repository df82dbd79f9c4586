"""The layers run one way: no import cycle inside ``trainwright`` or ``trainwright_lint``, counting
imports written inside functions (an import moved into a function to dodge a cycle is still one),
and the library never imports the linter.

The graph is built with ``ast`` from the source, as the maintainers' before-stop check builds it, so a
cycle fails here before it reaches review.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {
    "trainwright": ROOT / "src" / "trainwright",
    "trainwright_lint": ROOT / "plugin" / "trainwright_lint",
}


def modules(packages: dict[str, Path] = PACKAGES) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for name, top in packages.items():
        for path in sorted(top.rglob("*.py")):
            dotted = ".".join([name, *path.relative_to(top).with_suffix("").parts])
            found[dotted.removesuffix(".__init__")] = path
    return found


def import_graph(packages: dict[str, Path] = PACKAGES) -> dict[str, set[str]]:
    mods = modules(packages)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_bytes())
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        edges: set[str] = set()
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                while target and target not in mods:
                    target = target.rsplit(".", 1)[0] if "." in target else ""
                if target and target != name and not name.startswith(target + "."):
                    edges.add(target)
        graph[name] = edges
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    sys.setrecursionlimit(10_000)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles_in_either_package() -> None:
    cycles = strongly_connected(import_graph())
    assert cycles == [], "import cycles (imports inside functions count): " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_library_never_imports_the_linter() -> None:
    graph = import_graph()
    offenders = {
        m: sorted(e for e in edges if e.startswith("trainwright_lint")) for m, edges in graph.items()
    }
    assert {m: e for m, e in offenders.items() if m.startswith("trainwright.") and e} == {}


def test_the_detector_sees_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    """The check itself can fail: two modules importing each other, one of them inside a function."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import helper\n")
    (pkg / "b.py").write_text("def helper():\n    from . import a\n    return a\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    assert strongly_connected(import_graph({"pkg": pkg})) == [["pkg.a", "pkg.b"]]


# ----------------------------------------------------------------------------------------------------
# The linter's layers, as the README states them


def readme_layers(text: str | None = None) -> list[set[str]]:
    """The layers the README's ``plugin/trainwright_lint/`` bullet lists after "lowest first", split
    on `` < ``: per layer, the top-level modules and packages (``requirements/`` -> ``requirements``)
    it names."""
    text = text if text is not None else (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("- `plugin/trainwright_lint/`")
    end = text.find("\n- ", start + 1)
    bullet = " ".join(text[start : end if end != -1 else None].split())
    listing = bullet.split("): ", 1)[1].split(". [", 1)[0]  # after the parenthesis naming the test
    return [{name.rstrip("/") for name in part.split("`")[1::2]} for part in listing.split(" < ")]


def layer_breaks(graph: dict[str, set[str]], layers: list[set[str]]) -> list[str]:
    """Imports from a layer to a higher one, and linter modules no layer names."""
    where = {name: i for i, names in enumerate(layers) for name in names}
    out = []
    for module, edges in sorted(graph.items()):
        if not module.startswith("trainwright_lint."):
            continue
        top = module.split(".")[1]
        if top not in where:
            out.append(f"{module}: in no layer of the README")
            continue
        for target in sorted(edges):
            if target.startswith("trainwright_lint."):
                other = target.split(".")[1]
                if other in where and where[other] > where[top]:
                    out.append(
                        f"{module} (layer {where[top] + 1}) imports {target} (layer {where[other] + 1})"
                    )
    return out


def test_imports_run_down_the_layers_the_readme_states() -> None:
    layers = readme_layers()
    assert len(layers) >= 8 and {"rules", "engine", "fixes", "analysis"} <= set().union(*layers)
    assert layer_breaks(import_graph(), layers) == []


def test_the_layer_check_sees_an_import_running_up() -> None:
    layers = [{"finding"}, {"rules"}, {"engine"}]
    graph = {
        "trainwright_lint.rules.base": {"trainwright_lint.engine", "trainwright_lint.finding"},
        "trainwright_lint.engine": {"trainwright_lint.rules.base"},
        "trainwright_lint.stray": set(),
    }
    assert layer_breaks(graph, layers) == [
        "trainwright_lint.rules.base (layer 2) imports trainwright_lint.engine (layer 3)",
        "trainwright_lint.stray: in no layer of the README",
    ]


# Rules read facts; they do not walk trees (``rules/base.py``): a walk belongs in ``analysis/``, where
# one traversal serves every rule that asks.
TREE_WALKS = {"walk", "iter_child_nodes", "NodeVisitor", "NodeTransformer", "child_nodes", "walk_expression"}
TREE_WALKS |= {"nested_statements", "CSTVisitor", "CSTTransformer", "MatcherDecoratableTransformer"}


def tree_walks(path: Path) -> list[str]:
    """Names of tree-walking APIs used in ``path``, and functions that call themselves on a child
    node (a hand-written walker)."""
    tree = ast.parse(path.read_bytes())
    found = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.alias):
            name = node.name.rsplit(".", 1)[-1]
            if node.name.split(".")[0] == "libcst":
                found.append(f"{path.name}:{getattr(node, 'lineno', 0)} imports libcst")
        if name in TREE_WALKS:
            found.append(f"{path.name}:{getattr(node, 'lineno', 0)} {name}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            calls_itself = any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == node.name
                for n in ast.walk(node)
            )
            if calls_itself:
                found.append(f"{path.name}:{node.lineno} {node.name} walks recursively")
    return found


RULES_DIR = PACKAGES["trainwright_lint"] / "rules"
# libcst helpers shared by the rules' fix modules: fix-time code, like them.
FIX_HELPERS = {"trainwright_lint.rules._cst", "trainwright_lint.rules._move_cst"}


def fix_modules() -> set[str]:
    """The rules' fix modules (``fix_module``: the libcst transform applying a rule's edits)."""
    from trainwright_lint.rules import RULES

    return {r.fix_module for r in RULES.values() if r.fix_module is not None}


def lint_time_rule_files() -> list[Path]:
    """The files of ``rules/`` a lint imports: all but the fix modules and their helpers."""
    fix_time = fix_modules() | FIX_HELPERS
    return [p for p in sorted(RULES_DIR.glob("*.py")) if f"trainwright_lint.rules.{p.stem}" not in fix_time]


def test_rules_walk_no_trees() -> None:
    """What a lint runs of ``rules/`` walks no tree (a fix module's libcst transform is a walk of the
    one statement it rewrites, at fix time only)."""
    files = lint_time_rule_files()
    assert len(files) > 13  # every rule module, base and the shared helpers
    assert [w for path in files for w in tree_walks(path)] == []


def test_each_fixable_rule_declares_its_fix_module() -> None:
    """A rule with a fix names its companion module, ``<rule module>_fix``, which defines ``Fixer``
    (the transform ``fixes`` applies); every ``*_fix`` module of ``rules/`` is some rule's. No map
    elsewhere lists the fixes."""
    import importlib

    import libcst as cst
    from trainwright_lint.rules import RULES

    for rule in RULES.values():
        assert (rule.fix_applicability is None) == (rule.fix_module is None), rule.code
        if rule.fix_module is not None:
            assert rule.fix_module == f"{rule.__module__}_fix", rule.code
            assert issubclass(importlib.import_module(rule.fix_module).Fixer, cst.CSTTransformer)
    on_disk = {f"trainwright_lint.rules.{p.stem}" for p in RULES_DIR.glob("*_fix.py")}
    assert on_disk == fix_modules()
    passes = [r.fix_pass for r in RULES.values() if r.fix_module is not None]
    assert len(set(passes)) == len(passes)  # one rule per pass: an order, not a tie


def libcst_breaks(graph: dict[str, set[str]], fix_time: set[str]) -> list[str]:
    """Lint-time modules importing fix-time code: a fix module, a fix helper, or libcst itself. Only
    ``fixes/`` and the fix-time modules may (``fixes`` imports a fix module by name, with importlib)."""
    out = []
    for module, edges in sorted(graph.items()):
        if module in fix_time or module.startswith("trainwright_lint.fixes"):
            continue
        out += [f"{module} imports {t}" for t in sorted(edges & fix_time)]
    return out


def test_lint_time_code_never_imports_fix_code() -> None:
    graph = import_graph()
    fix_time = fix_modules() | FIX_HELPERS
    assert libcst_breaks(graph, fix_time) == []
    top = PACKAGES["trainwright_lint"]
    lint_path = [top / f"{m}.py" for m in ("engine", "runner", "flake8_plugin", "workers", "supervisor")]
    lint_path += [*(top / "analysis").glob("*.py"), *(top / "project").glob("*.py")]
    for path in [*lint_time_rule_files(), *lint_path]:
        tree = ast.parse(path.read_bytes())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not any(n.split(".")[0] == "libcst" for n in names), f"{path.name}:{node.lineno}"


def test_the_fix_code_check_sees_a_lint_module_importing_a_fix() -> None:
    graph = {
        "trainwright_lint.engine": {"trainwright_lint.rules.tw402_x_fix", "trainwright_lint.rules"},
        "trainwright_lint.fixes": {"trainwright_lint.rules.tw402_x_fix"},
        "trainwright_lint.rules.tw402_x_fix": {"trainwright_lint.rules._cst"},
    }
    fix_time = {"trainwright_lint.rules.tw402_x_fix", "trainwright_lint.rules._cst"}
    assert libcst_breaks(graph, fix_time) == [
        "trainwright_lint.engine imports trainwright_lint.rules.tw402_x_fix"
    ]


def test_a_lint_loads_no_libcst(tmp_path: Path) -> None:
    """At run time too: linting a file with fixable findings (their edits planned) leaves libcst
    unimported (its import costs a third of a second: pre-commit start-up). In this process
    (``--file-timeout 0``): a forked child's imports would not show here. Not with ``--format json``,
    whose ``fix.edits`` are the fixer's own output (``output.text_edits``)."""
    import subprocess

    script = tmp_path / "train.py"
    script.write_text(
        "from transformers import TrainerCallback\n\n\nclass C(TrainerCallback):\n"
        "    def on_log(self, args, state, control):\n        pass\n"
    )
    code = (
        "import sys\n"
        "from trainwright_lint.cli import main\n"
        f"main(['lint', '--exit-zero', '--file-timeout', '0', '--format', 'concise', {str(script)!r}])\n"
        "print('libcst' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert " TW402 " in out and out.rstrip().endswith("False"), out


def test_the_walk_check_sees_a_walker(tmp_path: Path) -> None:
    path = tmp_path / "rule.py"
    path.write_text(
        "import ast\n\ndef returns(s):\n    return [s, *[r for c in s.body for r in returns(c)]]\n\n"
        "def names(fn):\n    return [n for n in ast.walk(fn)]\n"
    )
    assert tree_walks(path) == ["rule.py:3 returns walks recursively", "rule.py:7 walk"]


# Facts are cached in one registry (``analysis.facts``: typed ``SharedFact`` keys in a ``FactStore``),
# never in a rule's own memo: a second caching style is how facts came to be computed twice.
CACHE_DECORATORS = {"lru_cache", "cache", "cached_property"}
FACT_CALLS = {"fact", "get"}  # ``ctx.fact(FACT, key, compute)``, ``unit.facts.get(FACT, key, compute)``


def ad_hoc_caches(path: Path) -> list[str]:
    """Caches in ``path`` outside the fact registry: caching decorators, a dict kept on an object
    (``self._memo = {}``), an attribute set on a tree node (``fn._tw_x = ...``), and a registry call
    keyed by a literal instead of a declared ``SharedFact``."""
    tree = ast.parse(path.read_bytes())
    found = []
    for node in ast.walk(tree):
        line = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if name in CACHE_DECORATORS:
                    found.append(f"{line} @{name}")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            empty = isinstance(node.value, ast.Dict) and not node.value.keys
            empty |= isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "dict"
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    if t.value.id == "self" and empty:
                        found.append(f"{line} self.{t.attr} = {{}}")
                    elif t.value.id != "self" and t.attr.startswith("_"):
                        found.append(f"{line} {t.value.id}.{t.attr} set")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            is_registry = node.func.attr == "fact" or (
                node.func.attr == "get"
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr in ("facts", "shared")
            )
            literal = bool(node.args) and not isinstance(node.args[0], (ast.Name, ast.Attribute))
            if is_registry and node.func.attr in FACT_CALLS and literal:
                found.append(f"{line} fact keyed by a literal")
            if node.func.attr == "memo":
                found.append(f"{line} memo()")
    return sorted(found, key=lambda f: int(f.split(":")[1].split()[0]))


def test_rules_keep_no_caches_of_their_own() -> None:
    assert [c for path in lint_time_rule_files() for c in ad_hoc_caches(path)] == []


def test_the_cache_check_sees_a_cache(tmp_path: Path) -> None:
    path = tmp_path / "rule.py"
    path.write_text(
        "from functools import lru_cache\n\n"
        "@lru_cache\ndef f(x):\n    return x\n\n"
        "class Live:\n    def __init__(self):\n        self._memo = {}\n\n"
        "def g(ctx, fn):\n    fn._tw_seen = 1\n    return ctx.fact(('tw1', 2), lambda: 3)\n\n"
        "def h(ctx, unit):\n    return ctx.fact(SEEN, 1, f) or unit.memo(('x',), f)\n"
    )
    assert ad_hoc_caches(path) == [
        "rule.py:4 @lru_cache",
        "rule.py:9 self._memo = {}",
        "rule.py:12 fn._tw_seen set",
        "rule.py:13 fact keyed by a literal",
        "rule.py:16 memo()",
    ]


# The reference trainers: ``common/`` is what both share and imports neither trainer; ``dpo/`` and ``grpo/``
# never import each other (what both need moves down into ``common/``).
TRAINER_LAYERS = {"common": 0, "dpo": 1, "grpo": 1}


def trainer_breaks(graph: dict[str, set[str]]) -> list[str]:
    """Imports inside ``trainwright.trainers`` that run up or across its packages."""
    prefix = "trainwright.trainers."
    out = []
    for module, edges in sorted(graph.items()):
        top = module.removeprefix(prefix).split(".")[0] if module.startswith(prefix) else None
        if top not in TRAINER_LAYERS:
            continue
        for target in sorted(edges):
            other = target.removeprefix(prefix).split(".")[0] if target.startswith(prefix) else None
            if other in TRAINER_LAYERS and other != top and TRAINER_LAYERS[other] >= TRAINER_LAYERS[top]:
                out.append(f"{module} imports {target}")
    return out


def test_trainer_packages_import_down_only() -> None:
    graph = import_graph()
    assert {"trainwright.trainers.common.skeleton", "trainwright.trainers.grpo.trainer"} <= set(graph)
    assert trainer_breaks(graph) == []


def test_the_trainer_check_sees_an_import_up_or_across() -> None:
    graph = {
        "trainwright.trainers.common.skeleton": {"trainwright.trainers.grpo.model"},
        "trainwright.trainers.dpo.trainer": {
            "trainwright.trainers.grpo.loss",
            "trainwright.trainers.common.x",
        },
        "trainwright.trainers.grpo.trainer": {"trainwright.trainers.common.skeleton"},
    }
    assert trainer_breaks(graph) == [
        "trainwright.trainers.common.skeleton imports trainwright.trainers.grpo.model",
        "trainwright.trainers.dpo.trainer imports trainwright.trainers.grpo.loss",
    ]
