"""The project's declared requirement on transformers/TRL, read from real files in a temporary project:
every file format, ``-r``/``-c`` includes, Poetry's syntax, lock files, and the precedence between them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from trainwright_lint.configuration.target import resolve_project_target
from trainwright_lint.requirements import Declaration, find_declaration
from trainwright_lint.requirements.poetry import PoetryConstraintError, to_pep440


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def declared(
    root: Path, files: dict[str, str], library: str = "transformers"
) -> tuple[Declaration | None, list[str]]:
    problems: list[str] = []
    return find_declaration(write(root, files), library, problems), problems


def releases(root: Path, library: str = "transformers") -> tuple[str, ...]:
    return resolve_project_target(library, root).releases


PYPROJECT_RANGE = """
    [project]
    name = "demo"
    dependencies = ["numpy", "Transformers[torch] >= 4.44, <4.46"]
"""


# ---------------------------------------------------------------------------------------- pyproject


def test_pep621_dependencies_with_extras_and_capitalised_name(tmp_path: Path) -> None:
    declaration, problems = declared(tmp_path, {"pyproject.toml": PYPROJECT_RANGE})
    assert declaration is not None and not problems
    assert (declaration.display, declaration.source, declaration.exact) == (
        ">=4.44,<4.46",
        "pyproject.toml",
        False,
    )
    assert releases(tmp_path) == ("4.44.0", "4.44.2", "4.45.0", "4.45.2")


def test_required_dependencies_beat_extras_and_extras_count_alone(tmp_path: Path) -> None:
    declaration, _ = declared(
        tmp_path,
        {
            "pyproject.toml": """
                [project]
                name = "demo"
                dependencies = ["transformers>=4.50"]
                [project.optional-dependencies]
                old = ["transformers<4.40"]
            """
        },
    )
    assert declaration is not None and declaration.display == ">=4.50"
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n[project.optional-dependencies]\ntrain = ["transformers~=4.45.0"]\n'
    )
    assert releases(tmp_path) == ("4.45.0", "4.45.2")


def test_dependency_groups_count_as_optional(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"pyproject.toml": '[dependency-groups]\ndev = ["transformers==4.45.2", {include-group = "x"}]\n'},
    )
    assert releases(tmp_path) == ("4.45.2",)


def test_poetry_caret_and_groups(tmp_path: Path) -> None:
    declaration, _ = declared(
        tmp_path,
        {
            "pyproject.toml": """
                [tool.poetry.dependencies]
                python = "^3.10"
                transformers = "^4.44"
                [tool.poetry.group.dev.dependencies]
                transformers = "4.45.2"
            """
        },
    )
    assert declaration is not None
    assert (declaration.display, declaration.alternatives) == ("^4.44", (">=4.44,<5",))
    target = resolve_project_target("transformers", tmp_path)
    assert (target.releases[0], target.newest) == ("4.44.0", "4.57.6")
    assert target.describe() == "transformers ^4.44 (pyproject.toml) → 4.44.0–4.57.6"
    # Only in a group: the group's pin is used.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry.dependencies]\npython = "^3.10"\n'
        '[tool.poetry.group.train.dependencies]\ntransformers = { version = "~4.45", extras = ["torch"] }\n'
    )
    assert releases(tmp_path) == ("4.45.0", "4.45.2")


def test_poetry_multiple_constraints_and_or_are_a_union(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": """
                [tool.poetry.dependencies]
                transformers = [
                    { version = "4.44.2", python = "<3.11" },
                    { version = "4.45.2 || 4.46.1", python = ">=3.11" },
                ]
            """
        },
    )
    assert releases(tmp_path) == ("4.44.2", "4.45.2", "4.46.1")


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("^4.44", (">=4.44,<5",)),
        ("^4.44.1", (">=4.44.1,<5",)),
        ("^0.2.3", (">=0.2.3,<0.3",)),
        ("^0.0.3", (">=0.0.3,<0.0.4",)),
        ("^0", (">=0,<1",)),
        ("~4.45.1", (">=4.45.1,<4.46",)),
        ("~4.45", (">=4.45,<4.46",)),
        ("~4", (">=4,<5",)),
        ("~=4.45", ("~=4.45",)),
        ("4.45.2", ("==4.45.2",)),
        ("4.45.*", ("==4.45.*",)),
        (">= 4.44 < 4.46", (">=4.44,<4.46",)),
        (">=4.44,<4.46", (">=4.44,<4.46",)),
        ("*", ("",)),
        ("^4.44 || 5.0.0", (">=4.44,<5", "==5.0.0")),
    ],
)
def test_poetry_constraint_translation(constraint: str, expected: tuple[str, ...]) -> None:
    assert to_pep440(constraint) == expected


def test_poetry_constraint_that_is_not_one_warns_and_is_skipped(tmp_path: Path) -> None:
    with pytest.raises(PoetryConstraintError, match="'\\^abc'"):
        to_pep440("^abc")
    declaration, problems = declared(
        tmp_path, {"pyproject.toml": '[tool.poetry.dependencies]\ntransformers = "^abc"\n'}
    )
    assert declaration is None and problems and "transformers" in problems[0] and "'^abc'" in problems[0]


# --------------------------------------------------------------------------------- requirements files


def test_requirements_includes_relative_to_the_including_file(tmp_path: Path) -> None:
    declaration, problems = declared(
        tmp_path,
        {
            "requirements.txt": "-r requirements/base.txt\nnumpy\n",
            "requirements/base.txt": "transformers>=4.40  # the Trainer\n--constraint constraints.txt\n",
            "requirements/constraints.txt": "transformers<4.46\n",
        },
    )
    assert declaration is not None and not problems
    assert declaration.display == ">=4.40,<4.46"
    assert declaration.source == "requirements/base.txt, requirements/constraints.txt"
    assert releases(tmp_path)[0] == "4.40.0" and releases(tmp_path)[-1] == "4.45.2"


def test_requirements_include_cycle_terminates(tmp_path: Path) -> None:
    declaration, problems = declared(
        tmp_path,
        {
            "requirements.txt": "-r more.txt\n",
            "more.txt": "-rrequirements.txt\n-c requirements.txt\ntransformers==4.45.2\n",
        },
    )
    assert declaration is not None and declaration.display == "==4.45.2" and not problems


def test_requirements_hashes_continuations_markers_and_options(tmp_path: Path) -> None:
    declaration, _ = declared(
        tmp_path,
        {
            "requirements.txt": """
                --index-url https://example.invalid/simple
                -e ./vendored
                transformers==4.45.2 \\
                    --hash=sha256:0123456789abcdef
                transformers>=5 ; python_version < "3.0"
            """
        },
    )
    assert declaration is not None and declaration.display == "==4.45.2"
    assert (
        resolve_project_target("transformers", tmp_path).describe()
        == "transformers ==4.45.2 (requirements.txt)"
    )


def test_missing_include_and_bad_line_warn_and_the_rest_is_used(tmp_path: Path) -> None:
    declaration, problems = declared(
        tmp_path, {"requirements.txt": "-r gone.txt\ntransformers>=4.4a.x\ntransformers<4.46\n"}
    )
    assert declaration is not None and declaration.display == "<4.46"
    assert any("requirements.txt:1" in p and "gone.txt" in p for p in problems)
    assert any("requirements.txt:2" in p and "transformers>=4.4a.x" in p for p in problems)
    # The warnings reach the target (and so stderr).
    assert any("gone.txt" in w for w in resolve_project_target("transformers", tmp_path).warnings)


def test_other_requirements_files_and_stand_alone_constraints(tmp_path: Path) -> None:
    declared(
        tmp_path, {"requirements-dev.txt": "pytest\n", "requirements/train.txt": "transformers~=4.45.0\n"}
    )
    assert releases(tmp_path) == ("4.45.0", "4.45.2")
    (tmp_path / "requirements.txt").write_text("transformers==4.44.2\n")
    assert releases(tmp_path) == ("4.44.2",)  # requirements.txt is consulted first


# ------------------------------------------------------------------------------------------ setuptools


def test_setup_cfg_install_requires_and_extras(tmp_path: Path) -> None:
    declaration, _ = declared(
        tmp_path,
        {
            "setup.cfg": """
                [metadata]
                name = demo
                [options]
                install_requires =
                    numpy
                    transformers>=4.44,<4.46
                [options.extras_require]
                new = transformers>=5
            """
        },
    )
    assert declaration is not None and (declaration.display, declaration.source) == (
        ">=4.44,<4.46",
        "setup.cfg",
    )
    (tmp_path / "setup.cfg").write_text("[options.extras_require]\ntrain =\n    transformers==4.45.2\n")
    assert releases(tmp_path) == ("4.45.2",)
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires = file: reqs.in\n")
    (tmp_path / "reqs.in").write_text("transformers==4.44.2\n")
    assert releases(tmp_path) == ("4.44.2",)


def test_setup_py_static_install_requires_is_read_never_run(tmp_path: Path) -> None:
    declaration, _ = declared(
        tmp_path,
        {
            "setup.py": """
                import pathlib
                pathlib.Path("EXECUTED").write_text("setup.py ran")
                from setuptools import setup

                BASE = ["numpy"]
                REQUIRES = BASE + ["transformers>=4.44,<4.46"]
                setup(name="demo", install_requires=REQUIRES, extras_require={"new": ["transformers>=5"]})
            """
        },
    )
    assert declaration is not None and (declaration.display, declaration.source) == (
        ">=4.44,<4.46",
        "setup.py",
    )
    assert not (tmp_path / "EXECUTED").exists()
    (tmp_path / "setup.py").write_text(
        'import setuptools\nsetuptools.setup(install_requires=["transformers==4.45.2"])\n'
    )
    assert releases(tmp_path) == ("4.45.2",)


def test_setup_py_computed_requirements_are_not_guessed(tmp_path: Path) -> None:
    declaration, problems = declared(
        tmp_path,
        {"setup.py": "from setuptools import setup\nsetup(install_requires=open('r.txt').read().split())\n"},
    )
    assert declaration is None and not problems


# ------------------------------------------------------------------------------------------------ locks

UV_LOCK = """
    version = 1
    requires-python = ">=3.10"

    [[package]]
    name = "demo"
    version = "0.1.0"
    source = { editable = "." }
    dependencies = [
        { name = "transformers" },
    ]

    [[package]]
    name = "transformers"
    version = "4.44.2"
    source = { registry = "https://pypi.org/simple" }
    dependencies = [
        { name = "numpy" },
    ]
    wheels = [
        { url = "https://example.invalid/transformers-4.44.2-py3-none-any.whl", hash = "sha256:00" },
    ]

    [package.optional-dependencies]
    torch = [
        { name = "torch" },
    ]
"""


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("uv.lock", UV_LOCK),
        (
            "poetry.lock",
            (
                '[[package]]\nname = "Transformers"\nversion = "4.44.2"\ndescription = "x"\n\n'
                '[package.dependencies]\nnumpy = ">=1.17"\n\n[metadata]\nlock-version = "2.0"\n'
            ),
        ),
        (
            "pdm.lock",
            '[metadata]\ngroups = ["default"]\n\n[[package]]\nname = "transformers"\nversion = "4.44.2"\n',
        ),
        ("pylock.toml", 'lock-version = "1.0"\n\n[[packages]]\nname = "transformers"\nversion = "4.44.2"\n'),
    ],
)
def test_lock_files_pin_exactly(tmp_path: Path, name: str, text: str) -> None:
    declaration, problems = declared(tmp_path, {name: text})
    assert declaration is not None and not problems
    assert (declaration.alternatives, declaration.source, declaration.exact) == (("==4.44.2",), name, True)
    assert resolve_project_target("transformers", tmp_path).describe() == f"transformers 4.44.2 ({name})"


def test_lock_with_several_versions_checks_each(tmp_path: Path) -> None:
    text = (
        textwrap.dedent(UV_LOCK)
        + '\n[[package]]\nname = "transformers"\nversion = "4.46.1"\nsource = { registry = "x" }\n'
    )
    write(tmp_path, {"uv.lock": text})
    assert releases(tmp_path) == ("4.44.2", "4.46.1")


def test_lock_beats_the_declared_range(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": PYPROJECT_RANGE, "uv.lock": UV_LOCK})
    target = resolve_project_target("transformers", tmp_path)
    assert (target.releases, target.source) == (("4.44.2",), "uv.lock")


# ------------------------------------------------------------------------------------------ precedence


def test_precedence_lock_pyproject_setup_cfg_setup_py_requirements(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "uv.lock": UV_LOCK,
            "pyproject.toml": PYPROJECT_RANGE,
            "setup.cfg": "[options]\ninstall_requires =\n    transformers==4.43.4\n",
            "setup.py": 'from setuptools import setup\nsetup(install_requires=["transformers==4.42.4"])\n',
            "requirements.txt": "transformers==4.41.2\n",
        },
    )
    order = ["uv.lock", "pyproject.toml", "setup.cfg", "setup.py", "requirements.txt"]
    for name in order:
        assert resolve_project_target("transformers", tmp_path).source == name
        (tmp_path / name).unlink()
    assert resolve_project_target("transformers", tmp_path).source != "requirements.txt"


def test_a_statement_without_a_version_says_nothing(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "demo"\ndependencies = ["transformers[torch]"]\n',
            "requirements.txt": "transformers==4.45.2\n",
        },
    )
    assert resolve_project_target("transformers", tmp_path).source == "requirements.txt"


def test_trl_is_read_from_the_same_files(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"pyproject.toml": '[project]\nname = "d"\ndependencies = ["TRL>=1.0,<1.10", "transformers"]\n'},
    )
    target = resolve_project_target("trl", tmp_path)
    assert (target.releases, target.source) == (("1.0.0", "1.4.0", "1.8.0"), "pyproject.toml")
