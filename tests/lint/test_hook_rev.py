"""The pre-commit snippets in README.md and the docs give the current linter (issue 22: the README's
rev was 22 commits old, and at that rev the hook ignored the project's pin).

The snippet's rev must be a commit HEAD descends from (a release tag ``v<version>``, or a commit) at
which ``plugin/``, the catalogue, ``.pre-commit-hooks.yaml`` and ``pyproject.toml`` are what they are
at HEAD. When this test fails: ``python scripts/hook_rev.py --write`` and commit the docs (at a
release: tag ``v<version>`` first, and the snippets name the tag).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lint_helpers import GIT, ROOT

spec = importlib.util.spec_from_file_location("hook_rev", ROOT / "scripts" / "hook_rev.py")
assert spec is not None and spec.loader is not None
hook_rev = importlib.util.module_from_spec(spec)
sys.modules["hook_rev"] = hook_rev  # its dataclasses look their module up
spec.loader.exec_module(hook_rev)


def test_the_snippets_give_the_current_linter() -> None:
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: the revs cannot be compared")
    assert hook_rev.snippets(), "no pre-commit snippet found"
    assert {s.path.name for s in hook_rev.snippets()} >= {"README.md", "lint.md"}
    assert hook_rev.problems() == []


SNIPPET = "```yaml\nrepos:\n  - repo: https://github.com/trainwright/trainwright\n    rev: {rev}\n    hooks:\n      - id: trainwright\n```\n"


def commit(repo: Path, message: str) -> None:
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=repo, check=True)


def test_the_check_fails_when_the_hook_changed_after_the_rev(tmp_path: Path) -> None:
    """The check itself can fail, and ``--write`` mends it: a synthetic repository."""
    repo = tmp_path / "repo"
    (repo / "plugin").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0.1.0"\n')
    (repo / "plugin" / "rules.py").write_text("RULES = 1\n")
    (repo / ".pre-commit-hooks.yaml").write_text("- id: trainwright\n")
    (repo / "README.md").write_text(SNIPPET.format(rev="0" * 40))
    (repo / "docs" / "lint.md").write_text(SNIPPET.format(rev="0" * 40))
    subprocess.run([*GIT, "init", "-q", "."], cwd=repo, check=True)
    commit(repo, "first")
    assert any("not a commit" in p for p in hook_rev.problems(repo))

    first = hook_rev.write(repo)
    commit(repo, "docs: pin the snippet")
    assert hook_rev.problems(repo) == [] and len(first) == 40
    (repo / "README.md").write_text((repo / "README.md").read_text() + "More words.\n")
    commit(repo, "docs only")  # the linter users get did not change
    assert hook_rev.problems(repo) == []

    (repo / "plugin" / "rules.py").write_text("RULES = 2\n")
    commit(repo, "a rule changed")
    (stale,) = hook_rev.problems(repo)
    assert f"rev {first} is stale: plugin/rules.py changed since" == stale

    subprocess.run([*GIT, "tag", "v0.1.0"], cwd=repo, check=True)
    assert hook_rev.write(repo) == "v0.1.0"  # a release holding the current sources is preferred
    commit(repo, "docs: name the release")
    assert hook_rev.problems(repo) == []
    (repo / "README.md").write_text(SNIPPET.format(rev="v0.0.9"))
    assert any("other than v0.1.0" in p for p in hook_rev.problems(repo))
    assert any("different revs" in p for p in hook_rev.problems(repo))
