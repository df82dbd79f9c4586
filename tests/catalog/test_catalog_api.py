"""The catalogue API: version resolution, views, histories, and the binding rules of ``Signature.accepts``.

The history assertions check the generated data against the releases where trainer_api.md (§3.1, §5.1)
documents a change, each verified there by parsing that release's wheel and by running it.
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainwright.catalog import CallSite, Catalog, Param, Signature, load_catalog, target_version
from trainwright.catalog.versions import nearest_at_or_below, version_key


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog()


# ----------------------------------------------------------------------------------------- versions


def test_coverage_spans_4_36_to_newest_5x_with_every_change_release(cat: Catalog) -> None:
    assert len(cat.versions) >= 25
    assert cat.versions[0] == "4.36.0"
    assert cat.newest.startswith("5.")
    assert list(cat.versions) == sorted(cat.versions, key=version_key)
    change_releases = {
        "4.38.0",
        "4.42.0",
        "4.45.0",
        "4.46.0",
        "4.47.0",
        "4.50.0",
        "4.51.0",
        "4.52.0",
        "4.57.0",
    }
    change_releases |= {"5.0.0", "5.1.0", "5.2.0", "5.3.0", "5.18.0", "5.19.0"}
    assert change_releases <= set(cat.versions)
    minors = {tuple(v.split(".")[:2]) for v in cat.versions}
    assert {("4", str(m)) for m in range(36, 58)} <= minors
    assert {("5", str(m)) for m in range(int(cat.newest.split(".")[1]) + 1)} <= minors


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        (None, "newest"),
        ("4.46.0", "4.46.0"),
        ("4.46.2", "4.46.1"),  # uncovered patch -> nearest covered at or below
        ("4.46", "4.46.0"),  # PEP 440: 4.46 == 4.46.0
        ("5.0.0.dev0", "4.57.6"),  # a dev build sorts before its release
        ("5.0.0rc1", "4.57.6"),
        ("5.0.0+local", "5.0.0"),
        ("4.10.3", "4.36.0"),  # older than everything -> oldest
        ("99.0", "newest"),
    ],
)
def test_resolve_version(cat, requested, expected) -> None:  # type: ignore[no-untyped-def]
    assert cat.resolve_version(requested) == (cat.newest if expected == "newest" else expected)


def test_bad_version_string_names_the_problem(cat: Catalog) -> None:
    with pytest.raises(ValueError, match="not a PEP 440 version: 'banana'"):
        cat.at("banana")


def test_version_key_matches_packaging_order() -> None:
    packaging_version = pytest.importorskip("packaging.version")
    versions = [
        "1.0.dev1",
        "1.0a1.dev1",
        "1.0a1",
        "1.0b2",
        "1.0rc1",
        "1.0",
        "1.0.post1.dev2",
        "1.0.post1",
        "1.0.1",
        "1!0.1",
        "2.0.dev0",
        "5.0.0",
        "5.0.0.dev0",
        "4.57.6",
        "4.9.0",
        "4.10.0",
    ]
    assert sorted(versions, key=version_key) == sorted(versions, key=packaging_version.Version)


@pytest.mark.parametrize("version", ["4.46.2", "5.0.0", "5", "0", "04.010", "1.0.0.0", "10.2.3.4.5"])
def test_version_key_reads_a_plain_release_as_the_pattern_does(version: str) -> None:
    """Plain releases skip the PEP 440 pattern (compiled only for other forms); same key either way."""
    from trainwright.catalog import versions

    assert version_key(version) == version_key(f" v{version} ") == version_key(f"0!{version}")
    assert versions._version_re().match(version) is not None


@pytest.mark.parametrize("version", ["", "4..2", "4.", ".4", "4.4.x"])
def test_version_key_refuses_an_empty_or_odd_part(version: str) -> None:
    with pytest.raises(ValueError, match="not a PEP 440 version"):
        version_key(version)


def test_version_key_reads_other_digits_through_the_pattern() -> None:
    assert version_key("\u0664.\u0664") == version_key("4.4")  # ARABIC-INDIC DIGIT FOUR, as ``\d`` reads it


def test_nearest_at_or_below_needs_covered_versions() -> None:
    with pytest.raises(ValueError, match="no covered versions"):
        nearest_at_or_below("1.0", [])


def test_target_version_prefers_explicit_then_installed(
    cat: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trainwright.catalog import loader

    assert target_version("4.46.2") == "4.46.1"
    monkeypatch.setattr(loader, "installed_version", lambda dist="transformers": "4.50.1")
    assert target_version() == "4.50.0"
    monkeypatch.setattr(loader, "installed_version", lambda dist="transformers": None)
    assert target_version() == cat.newest


def test_installed_version_does_not_import_the_package() -> None:
    code = (
        "import sys; from trainwright.catalog import installed_version, load_catalog, target_version\n"
        "installed_version(); target_version(); v = load_catalog().at()\n"
        "v.methods(); v.events; load_catalog().method_history('compute_loss')\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers')]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unknown_library_and_class_are_clear_errors(cat: Catalog) -> None:
    with pytest.raises(ValueError, match="no catalogue for library 'jax'"):
        load_catalog("jax")
    with pytest.raises(KeyError, match="class 'Foo' is not in the transformers catalogue"):
        cat.at().methods("Foo")


# -------------------------------------------------------------------------------------------- views


def test_view_basics(cat: Catalog) -> None:
    view = cat.at()
    assert view.version == cat.newest
    assert set(view.classes) == {"Trainer", "Seq2SeqTrainer"}
    methods = view.methods()
    assert list(methods) == sorted(methods)
    assert methods["_save_checkpoint"].private and not methods["__init__"].private
    assert methods["compute_loss"].owner == "Trainer" and methods["compute_loss"].library == "transformers"
    assert view.method("no_such_method") is None
    assert view.control_flags == (
        "should_training_stop",
        "should_epoch_stop",
        "should_save",
        "should_evaluate",
        "should_log",
    )
    assert list(view.events)[:3] == ["on_init_end", "on_train_begin", "on_epoch_begin"]
    assert [e.order for e in view.events.values()] == sorted(e.order for e in view.events.values())


def test_seq2seq_inherits_and_its_own_definitions_win(cat: Catalog) -> None:
    view = cat.at()
    s2s, trainer = view.methods("Seq2SeqTrainer"), view.methods("Trainer")
    assert set(trainer) < set(s2s)
    assert s2s["prediction_step"].owner == "Seq2SeqTrainer"
    assert s2s["prediction_step"].signature.param("gen_kwargs").kind == "VAR_KEYWORD"
    assert s2s["compute_loss"].owner == "Trainer"
    # Trainer's own loop calls prediction_step on a Seq2SeqTrainer too.
    assert any(site.caller == "evaluation_loop" for site in s2s["prediction_step"].call_sites)


# ---------------------------------------------------------------------------------------- histories


def _sig_ranges(cat, name):  # type: ignore[no-untyped-def]
    return [(a, b, sig.text) for a, b, sig in cat.method_history(name).signatures]


def test_compute_loss_gained_num_items_in_batch_in_4_46(cat: Catalog) -> None:
    assert _sig_ranges(cat, "compute_loss") == [
        ("4.36.0", "4.45.2", "(self, model, inputs, return_outputs=False)"),
        ("4.46.0", None, "(self, model, inputs, return_outputs=False, num_items_in_batch=None)"),
    ]
    sites_445 = cat.at("4.45.2").method("compute_loss").call_sites
    sites_446 = cat.at("4.46.0").method("compute_loss").call_sites
    assert CallSite("training_step", 2) in sites_445
    assert CallSite("training_step", 2, ("num_items_in_batch",)) in sites_446
    old = cat.at("4.45.2").method("compute_loss").signature
    assert not old.accepts(2, ["num_items_in_batch"])  # an old-style override breaks on 4.46+


@pytest.mark.parametrize(
    ("name", "boundaries"),
    [
        ("training_step", ["4.46.0"]),
        ("log", ["4.47.0"]),
        ("_save_checkpoint", ["4.47.0"]),
        ("_maybe_log_save_evaluate", ["4.38.0", "4.47.0", "4.51.0"]),
        ("_get_train_sampler", ["4.52.0"]),
        ("create_optimizer", ["5.3.0"]),
        ("get_batch_samples", ["4.50.0"]),
        ("train", ["5.0.0"]),
    ],
)
def test_signature_changes_land_on_documented_releases(cat, name, boundaries) -> None:  # type: ignore[no-untyped-def]
    starts = [a for a, _, _ in cat.method_history(name).signatures]
    assert starts[1:] == boundaries


def test_methods_that_appear_and_disappear(cat: Catalog) -> None:
    assert cat.method_history("get_batch_samples").first == "4.46.0"
    assert cat.method_history("_get_dataloader").first == "4.52.0"
    assert cat.method_history("_run_epoch").first == "5.3.0"
    assert cat.method_history("prediction_loop").last == "4.57.6"
    assert cat.method_history("_nested_gather").last == "5.1.0"
    assert cat.method_history("compute_loss").last is None
    assert cat.ever_defined("prediction_loop") and cat.at().method("prediction_loop") is None
    assert not cat.ever_defined("on_log") and cat.method_history("nope") is None


def test_create_optimizer_and_scheduler_is_never_called_from_5_1(cat: Catalog) -> None:
    history = cat.method_history("create_optimizer_and_scheduler")
    assert history.never_called == (("5.1.0", None),)
    assert cat.at("5.0.0").method("create_optimizer_and_scheduler").called
    assert not cat.at("5.1.0").method("create_optimizer_and_scheduler").called


def test_call_site_indirections(cat: Catalog) -> None:
    # _get_train_sampler is passed as sampler_fn and called with one positional from 4.52 on.
    assert cat.at("4.51.3").method("_get_train_sampler").call_sites == (CallSite("get_train_dataloader", 0),)
    assert CallSite("_get_dataloader", 1) in cat.at("4.52.0").method("_get_train_sampler").call_sites
    # _inner_training_loop is called through find_executable_batch_size, which adds batch_size=.
    (site,) = cat.at().method("_inner_training_loop").call_sites
    assert site.caller == "train" and "batch_size" in site.keywords and site.n_positional == 0
    # create_optimizer: positional model on the delayed-creation path from 5.3.
    assert CallSite("_prepare_for_training", 1) in cat.at("5.3.0").method("create_optimizer").call_sites


def test_call_history_and_called_versions(cat: Catalog) -> None:
    spans = cat.call_history("log")
    assert [a for a, _, _ in spans] == ["4.36.0", "4.47.0", "5.3.0"]
    assert spans[-1][1] is None
    called = cat.called_versions("create_optimizer_and_scheduler")
    assert called[-1] == "5.0.0" and called[0] == cat.oldest


def test_event_history(cat: Catalog) -> None:
    assert cat.event_history("on_pre_optimizer_step").since == "4.45.0"
    assert cat.event_history("on_optimizer_step").since == "4.42.0"
    assert cat.event_history("on_push_begin").since == "5.0.0"
    assert cat.event_history("on_log").until is None
    assert "logs" in cat.event_history("on_log").kwargs
    assert "tokenizer" in cat.at("4.45.2").events["on_save"].kwargs
    assert "processing_class" in cat.at("4.46.0").events["on_save"].kwargs
    assert "on_push_begin" not in cat.at("4.57.6").events
    assert cat.event_history("on_batch_end") is None
    assert cat.event_names()[0] == "on_init_end"


# --------------------------------------------------------------------------------- Signature.accepts


def test_signature_text_renders_all_parameter_kinds() -> None:
    sig = Signature(
        (
            Param("self", "POSITIONAL_ONLY"),
            Param("a", "POSITIONAL_OR_KEYWORD"),
            Param("b", "POSITIONAL_OR_KEYWORD", "1"),
            Param("args", "VAR_POSITIONAL"),
            Param("c", "KEYWORD_ONLY"),
            Param("kw", "VAR_KEYWORD"),
        )
    )
    assert sig.text == "(self, /, a, b=1, *args, c, **kw)"
    assert (
        Signature((Param("x", "POSITIONAL_OR_KEYWORD"), Param("y", "KEYWORD_ONLY", "2"))).text
        == "(x, *, y=2)"
    )


def test_accepts_known_breakages() -> None:
    legacy_log = Signature((Param("self", "POSITIONAL_OR_KEYWORD"), Param("logs", "POSITIONAL_OR_KEYWORD")))
    assert legacy_log.accepts(1, []) and not legacy_log.accepts(2, [])  # log(logs, start_time) on 4.47+
    passthrough = Signature(
        (
            Param("self", "POSITIONAL_OR_KEYWORD"),
            Param("args", "VAR_POSITIONAL"),
            Param("kwargs", "VAR_KEYWORD"),
        )
    )
    assert passthrough.accepts(7, ["learning_rate"])
    static = Signature(
        (Param("args", "POSITIONAL_OR_KEYWORD"), Param("model", "POSITIONAL_OR_KEYWORD", "None")), bound=False
    )
    assert static.accepts(1, []) and not static.accepts(0, [])
    with pytest.raises(ValueError):
        legacy_log.accepts(-1, [])


def test_accepts_with_unpacking_is_permissive_only_where_unpacking_could_help() -> None:
    sig = Signature(
        (
            Param("self", "POSITIONAL_OR_KEYWORD"),
            Param("a", "POSITIONAL_OR_KEYWORD"),
            Param("c", "KEYWORD_ONLY"),
        )
    )
    assert not sig.accepts(0, [])
    assert not sig.accepts(0, [], star_args=True)  # *args cannot fill keyword-only c
    assert sig.accepts(0, [], star_kwargs=True)  # **kw can fill both
    assert sig.accepts(1, ["c"])
    assert not sig.accepts(0, ["zz"], star_kwargs=True)  # an explicit unknown keyword still fails
    assert not sig.accepts(1, ["a", "c"])  # a given twice


_names = st.sampled_from(["a", "b", "c", "d", "e", "f", "zz"])


@st.composite
def _signatures(draw):  # type: ignore[no-untyped-def]
    """Random valid method signatures: positional-only, normal, *args, keyword-only, **kwargs, defaults."""
    kind = inspect.Parameter
    names = iter(draw(st.permutations(["a", "b", "c", "d", "e", "f"])))
    n_posonly, n_normal, n_kwonly = (draw(st.integers(0, 2)) for _ in range(3))
    first_default = draw(st.integers(0, n_posonly + n_normal))
    params = [kind("self", kind.POSITIONAL_ONLY if n_posonly else kind.POSITIONAL_OR_KEYWORD)]
    for i in range(n_posonly + n_normal):
        params.append(
            kind(
                next(names),
                kind.POSITIONAL_ONLY if i < n_posonly else kind.POSITIONAL_OR_KEYWORD,
                default=None if i >= first_default else kind.empty,
            )
        )
    if draw(st.booleans()):
        params.append(kind("args", kind.VAR_POSITIONAL))
    for _ in range(n_kwonly):
        params.append(
            kind(next(names), kind.KEYWORD_ONLY, default=None if draw(st.booleans()) else kind.empty)
        )
    if draw(st.booleans()):
        params.append(kind("kwargs", kind.VAR_KEYWORD))
    return inspect.Signature(params)


def _ours(sig: inspect.Signature) -> Signature:
    return Signature(
        tuple(
            Param(p.name, p.kind.name, None if p.default is inspect.Parameter.empty else repr(p.default))
            for p in sig.parameters.values()
        )
    )


@settings(max_examples=300, deadline=None)
@given(sig=_signatures(), n_positional=st.integers(0, 6), keywords=st.lists(_names, unique=True, max_size=4))
def test_accepts_agrees_with_python_binding(sig, n_positional, keywords) -> None:  # type: ignore[no-untyped-def]
    """Without star-unpacking, ``accepts`` must give exactly Python's answer for the same call.

    The oracle is a real function with that signature (``inspect.Signature.bind`` differs from a real
    call for a keyword named like a positional-only parameter when ``**kwargs`` exists).
    """
    namespace: dict[str, object] = {}
    exec(f"def f{sig}: pass", namespace)  # noqa: S102 - signature built above from a fixed alphabet
    try:
        namespace["f"](object(), *range(n_positional), **dict.fromkeys(keywords))  # type: ignore[operator]
        python_says = True
    except TypeError:
        python_says = False
    assert _ours(sig).accepts(n_positional, keywords) is python_says, (str(sig), n_positional, keywords)
