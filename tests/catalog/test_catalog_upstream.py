"""Upstream statement fingerprints (``Catalog.upstream_fingerprints()``).

The first part reads only the committed data. The second compares it with the source of the installed
transformers and TRL, read as files (never imported): a verbatim copy of any of their methods must be
recognised statement by statement, at the installed release.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from trainwright.catalog import load_catalog
from trainwright.catalog.fingerprint import fingerprint_set, statement_fingerprints
from trainwright.catalog.loader import Catalog

TRAINER = "transformers.trainer.Trainer"


@pytest.fixture(scope="module")
def upstream():  # type: ignore[no-untyped-def]
    return load_catalog().upstream_fingerprints()


@pytest.fixture(scope="module")
def trl_upstream():  # type: ignore[no-untyped-def]
    return load_catalog("trl").upstream_fingerprints()


def test_loading_the_catalogue_does_not_read_fingerprints() -> None:
    catalog = Catalog(load_catalog()._raw, load_catalog()._book)  # a fresh, uncached instance
    catalog.at("4.45.2").method("compute_loss")
    catalog.method_history("training_step")
    assert catalog._upstream is None and catalog._module_facts is None and catalog._argument_facts is None


def test_every_method_of_every_release_has_statements(upstream) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    for version in ("4.36.0", "4.46.0", "5.0.0", catalog.newest):
        for name, info in catalog.at(version).methods("Trainer").items():
            if info.owner == "Trainer" and name not in ("__init__",):
                assert upstream.method("Trainer", name, version), (name, version)
    assert len(upstream) > 1000


def test_owners_name_the_method_and_its_release_range(upstream) -> None:  # type: ignore[no-untyped-def]
    fps = upstream.method("Trainer", "_inner_training_loop", "4.38.0")
    assert len(fps) > 200
    for fp in list(fps)[:50]:
        owners = upstream.owners(fp)
        assert any(
            o.cls == TRAINER
            and o.method == "_inner_training_loop"
            and upstream._catalog._index[o.first] <= upstream._catalog._index["4.38.0"]
            and (o.last is None or upstream._catalog._index[o.last] >= upstream._catalog._index["4.38.0"])
            for o in owners
        )
        assert owners[0].short_cls in ("Trainer", "Seq2SeqTrainer")
    assert upstream.owners("0000000000000000") == ()
    assert "0000000000000000" not in upstream


def test_short_dotted_and_alias_class_names_are_the_same_class(upstream) -> None:  # type: ignore[no-untyped-def]
    short = upstream.method("Trainer", "training_step", "4.46.0")
    assert short == upstream.method(TRAINER, "training_step", "4.46.0")
    assert short == upstream.method("transformers.Trainer", "training_step", "4.46.0")


def test_seq2seq_inherits_trainer_methods_and_keeps_its_own(upstream) -> None:  # type: ignore[no-untyped-def]
    assert upstream.method("Seq2SeqTrainer", "training_step", "5.0.0") == upstream.method(
        "Trainer", "training_step", "5.0.0"
    )
    own = upstream.method("Seq2SeqTrainer", "prediction_step", "5.0.0")
    assert own and own != upstream.method("Trainer", "prediction_step", "5.0.0")
    assert upstream.defining_class("Seq2SeqTrainer", "prediction_step", "5.0.0") == (
        "transformers.trainer_seq2seq.Seq2SeqTrainer"
    )
    assert upstream.defining_class("Seq2SeqTrainer", "training_step", "5.0.0") == TRAINER


def test_best_release_of_an_exact_copy(upstream) -> None:  # type: ignore[no-untyped-def]
    fps = upstream.method("Trainer", "_inner_training_loop", "4.38.2")
    match = upstream.best_release("Trainer", "_inner_training_loop", fps)
    assert match is not None
    version, matching, total = match
    assert matching == total == len(fps)
    assert upstream.method("Trainer", "_inner_training_loop", version) == fps  # the first release with it
    # A copy with two statements changed is still closest to that release, with two of its own.
    edited = set(list(fps)[2:]) | {"user000000000001", "user000000000002"}
    again = upstream.best_release("Trainer", "_inner_training_loop", edited)
    assert again is not None and again.version == version
    assert again.total - again.matching == 2
    assert upstream.best_release("Trainer", "no_such_method", fps) is None


def test_match_counts_cover_every_release_that_defines_the_method(upstream) -> None:  # type: ignore[no-untyped-def]
    fps = upstream.method("Trainer", "compute_loss", "4.46.0")
    counts = upstream.match_counts("Trainer", "compute_loss", fps)
    assert set(counts) == set(upstream.versions)
    assert counts["4.46.0"] == (len(fps), len(fps))


def test_trl_trainers_their_bases_and_experimental_classes(trl_upstream) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog("trl")
    assert trl_upstream.method("GRPOTrainer", "_generate_and_score_completions", "1.16.0")
    # GRPOTrainer's own methods, and what it inherits from TRL's _BaseTrainer, are there ...
    assert trl_upstream.defining_class("GRPOTrainer", "__init__", "1.16.0") == (
        "trl.trainer.grpo_trainer.GRPOTrainer"
    )
    # ... but not what it inherits from transformers.Trainer (that is the transformers catalogue's).
    assert trl_upstream.method("GRPOTrainer", "_inner_training_loop", "1.16.0") == frozenset()
    experimental = [c for c, _ in trl_upstream.method_names() if ".experimental." in c]
    assert experimental, "experimental trainers are fingerprinted too"
    assert catalog.newest == trl_upstream.versions[-1]


# ---------------------------------------------------------------------------------- installed sources


def _source_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)  # locates the package without importing it
    if spec is None or spec.origin is None:
        pytest.skip(f"{package} is not installed")
    return Path(spec.origin).parent


def _installed_version(catalog: Catalog, dist: str) -> str:
    from trainwright.catalog import installed_version

    version = installed_version(dist)
    if version not in catalog.versions:
        pytest.skip(f"installed {dist} {version} is not a catalogued release")
    return version


def _class(path: Path, name: str) -> ast.ClassDef:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)


def _methods(cls: ast.ClassDef) -> dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every ``def`` of the class body by name (property setters and conditional definitions too)."""
    out: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for node in _direct_defs(cls):
        out.setdefault(node.name, []).append(node)
    return out


def _direct_defs(cls: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    todo: list[ast.stmt] = list(cls.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(stmt)
        elif isinstance(stmt, ast.If):
            todo.extend(stmt.body + stmt.orelse)
        elif isinstance(stmt, ast.Try):
            todo.extend(stmt.body + stmt.orelse + stmt.finalbody + [s for h in stmt.handlers for s in h.body])
    return out


@pytest.mark.parametrize(
    ("file_name", "cls_name"), [("trainer.py", "Trainer"), ("trainer_seq2seq.py", "Seq2SeqTrainer")]
)
def test_a_verbatim_copy_of_every_installed_method_matches(upstream, file_name, cls_name) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    version = _installed_version(catalog, "transformers")
    cls = _class(_source_dir("transformers") / file_name, cls_name)
    checked = 0
    for name, functions in _methods(cls).items():
        copy = frozenset().union(*(fingerprint_set(f) for f in functions))
        stored = upstream.method(cls_name, name, version)
        assert copy == stored, f"{cls_name}.{name}: {len(copy - stored)} statements not catalogued"
        checked += 1
    assert checked > (80 if cls_name == "Trainer" else 5)


def test_a_reformatted_copy_still_matches(upstream) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    version = _installed_version(catalog, "transformers")
    cls = _class(_source_dir("transformers") / "trainer.py", "Trainer")
    original = _methods(cls)["_inner_training_loop"][0]
    # ast.unparse drops comments, rewraps every line and changes quote styles: a user's copy after black.
    copy = ast.parse(ast.unparse(original)).body[0]
    assert isinstance(copy, ast.FunctionDef)
    fps = [fp for fp, _ in statement_fingerprints(copy)]
    assert set(fps) == upstream.method("Trainer", "_inner_training_loop", version)
    owners = {o.qualname for fp in fps for o in upstream.owners(fp)}
    assert "Trainer._inner_training_loop" in owners
    match = upstream.best_release("Trainer", "_inner_training_loop", fps)
    assert match is not None and match.matching == match.total
    assert upstream.method("Trainer", "_inner_training_loop", match.version) == set(fps)


def test_installed_trl_trainers_match(trl_upstream) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog("trl")
    version = _installed_version(catalog, "trl")
    cls = _class(_source_dir("trl") / "trainer" / "grpo_trainer.py", "GRPOTrainer")
    for name, functions in _methods(cls).items():
        copy = frozenset().union(*(fingerprint_set(f) for f in functions))
        assert copy == trl_upstream.method("GRPOTrainer", name, version), name


def test_trl_code_copied_from_transformers_is_recognised_as_transformers(upstream, trl_upstream) -> None:  # type: ignore[no-untyped-def]
    # TRL 0.19's OnlineDPOTrainer.training_step is a copy of Trainer.training_step with TRL's changes: its
    # upstream statements (the torch_empty_cache_steps block among them) belong to transformers.
    fps = trl_upstream.method("OnlineDPOTrainer", "training_step", "0.19.1")
    owned = {fp for fp in fps if any(o.qualname == "Trainer.training_step" for o in upstream.owners(fp))}
    assert len(owned) >= 10 and len(fps) > len(owned)  # the rest is TRL's own code
    match = upstream.best_release("Trainer", "training_step", fps)
    assert match is not None and match.matching >= 10 and match.total == len(fps)


def test_lazy_fingerprints_equal_the_full_walk_on_installed_trl() -> None:
    """``LazyFingerprints.of`` (one statement at a time, for the TW2xx rules) gives exactly what
    ``statement_fingerprints`` gives, on every function of the installed TRL: nested blocks, handlers,
    ``else`` branches, nested defs and docstrings included."""
    from trainwright.catalog.fingerprint import LazyFingerprints

    checked = 0
    for path in sorted(_source_dir("trl").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            lazy = LazyFingerprints(fn)
            full = statement_fingerprints(fn)
            assert [lazy.of(stmt) for _, stmt in reversed(full)] == [fp for fp, _ in reversed(full)]
            # ``all`` after some ``of`` calls (TW2xx asked first, TW101's copy note then): the full walk
            half = LazyFingerprints(fn)
            for _, stmt in full[::2]:
                half.of(stmt)
            assert half.all() == full and LazyFingerprints(fn).all() == full
            checked += len(full)
    assert checked > 10_000
    docstring_only = ast.parse('def f():\n    """doc"""\n    return 1\n').body[0]
    assert isinstance(docstring_only, ast.FunctionDef)
    assert LazyFingerprints(docstring_only).of(docstring_only.body[0]) is None  # never fingerprinted
