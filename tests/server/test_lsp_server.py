"""``trainwright server`` driven by a real LSP client over stdio (``lsp_support``): diagnostics equal
to ``trainwright lint``'s, quick fixes whose edits give ``trainwright fix``'s bytes, the rule page on
hover, a change that clears a finding, and a file that does not parse or is deleted while open."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("pytest_lsp")  # the `server` extra and the dev tools; the lint needs neither

from checkout import GALLERY, ROOT, run_python
from lsp_support import apply_edit, editor_session
from lsprotocol import types


@pytest.fixture
def gallery_project(tmp_path: Path) -> Path:
    """The gallery's "before" files in a project of their own (no exclude, the installed release)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    for path in GALLERY.glob("*_before.py"):
        shutil.copy(path, root / path.name)
    return root


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_python(["-m", "trainwright_lint", *args], cwd=root)


def fixed_by_cli(root: Path, name: str, *options: str) -> str:
    """What ``trainwright fix`` writes for ``name`` (run on a copy of the project)."""
    copy = root.parent / f"cli-{name}-{len(options)}"
    shutil.copytree(root, copy)
    cli(copy, "fix", *options, name)
    return (copy / name).read_text(encoding="utf-8")


def run(scenario) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(scenario)


def coded(diagnostics: list[types.Diagnostic], code: str) -> types.Diagnostic:
    return next(d for d in diagnostics if d.code == code)


def test_diagnostics_for_every_gallery_file_equal_the_cli(gallery_project: Path) -> None:
    names = sorted(p.name for p in gallery_project.glob("*_before.py"))
    records = json.loads(cli(gallery_project, "lint", "--output-format", "json", *names).stdout)
    expected = {
        (r["filename"], r["code"], r["location"]["row"], r["location"]["column"], r["message"])
        for r in records
    }

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            got = set()
            for name in names:
                for d in await editor.open(gallery_project / name):
                    start = d.range.start
                    got.add((name, d.code, start.line + 1, start.character + 1, d.message.split("\n")[0]))
                    assert d.source == "trainwright" and d.code_description is not None
            assert got == expected
            assert (
                len(got) >= 13
            )  # the gallery's default findings (TW201's gated `training_step` code included)

    run(scenario())


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("tokenizer_before.py", "TW303"),
        ("checkpoint_extras_before.py", "TW302"),
        ("broken_callback_before.py", "TW402"),
    ],
)
def test_a_quick_fix_applied_equals_trainwright_fix(gallery_project: Path, name: str, code: str) -> None:
    path = gallery_project / name
    text = path.read_text(encoding="utf-8")
    expected = fixed_by_cli(gallery_project, name)
    assert expected != text

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            diag = coded(await editor.open(path), code)
            actions = await editor.actions(path, diag)
            quick = [a for a in actions if a.title.startswith(f"Fix {code}")]
            assert (
                len(quick) == 1 and quick[0].is_preferred and quick[0].kind == types.CodeActionKind.QuickFix
            )
            assert apply_edit(text, quick[0].edit, path.as_uri()) == expected
            fix_all = [a for a in actions if a.kind == "source.fixAll.trainwright"]
            assert len(fix_all) == 1 and apply_edit(text, fix_all[0].edit, path.as_uri()) == expected
            # The fixed text, sent back as the editor would, has no fixable finding left.
            after = await editor.replace(path, expected)
            assert all((d.data or {}).get("fix") != "safe" for d in after)

    run(scenario())


def test_an_unsafe_fix_is_offered_as_unsafe_and_only_on_request(gallery_project: Path) -> None:
    path = gallery_project / "broken_callback_before.py"
    text = path.read_text(encoding="utf-8")

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            diag = coded(await editor.open(path), "TW401")
            assert diag.data == {"fix": "unsafe"}
            actions = await editor.actions(path, diag)
            unsafe = [a for a in actions if a.title.startswith("Fix TW401")]
            assert len(unsafe) == 1 and "unsafe" in unsafe[0].title and not unsafe[0].is_preferred
            renamed = apply_edit(text, unsafe[0].edit, path.as_uri())
            assert "def on_step_end(" in renamed and "def on_batch_end(" not in renamed
            # Only the rename: the safe TW402 fix elsewhere in the file is not part of this action.
            assert renamed.count("**kwargs") == text.count("**kwargs")
            assert "TW401" not in {d.code for d in await editor.replace(path, renamed)}

    run(scenario())


def test_a_tw2xx_finding_offers_its_move_fix_as_a_refactoring(gallery_project: Path) -> None:
    """The TW2xx action is the finding's move fix itself, the one ``fix --suggest`` previews and
    ``fix --unsafe-fixes`` writes: applied, the document is the file ``--unsafe-fixes`` writes (the
    gallery file holds no other fix). Not a quick fix, never preferred; no second action for it."""
    name = "step_timer_before.py"
    path = gallery_project / name
    text = path.read_text(encoding="utf-8")
    expected = fixed_by_cli(gallery_project, name, "--unsafe-fixes")
    assert "class TimedTrainerTrainingStepCallback(TrainerCallback):" in expected
    previewed = cli(gallery_project, "fix", "--suggest", name).stdout
    assert "+class TimedTrainerTrainingStepCallback(TrainerCallback):" in previewed

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            diag = coded(await editor.open(path), "TW202")
            actions = await editor.actions(path, diag)
            moves = [a for a in actions if a.kind == "refactor.move.trainwright"]
            assert len(moves) == 1 and "callback move" in moves[0].title and not moves[0].is_preferred
            assert apply_edit(text, moves[0].edit, path.as_uri()) == expected
            assert not [a for a in actions if a.title.startswith("Fix TW202")]

    run(scenario())


def test_hover_on_a_finding_shows_its_rule_page(gallery_project: Path) -> None:
    path = gallery_project / "tokenizer_before.py"
    page = (ROOT / "docs" / "rules" / "TW303.md").read_text(encoding="utf-8")

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            diag = coded(await editor.open(path), "TW303")
            hover = await editor.client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=diag.range.start
                )
            )
            assert hover is not None and isinstance(hover.contents, types.MarkupContent)
            assert hover.contents.kind == types.MarkupKind.Markdown
            assert diag.message in hover.contents.value
            assert page.strip() in hover.contents.value
            elsewhere = types.Position(line=0, character=0)  # the import line: no finding
            none = await editor.client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=elsewhere
                )
            )
            assert none is None

    run(scenario())


def test_a_change_clears_a_finding_and_noqa_silences_one(gallery_project: Path) -> None:
    path = gallery_project / "tokenizer_before.py"
    text = path.read_text(encoding="utf-8")

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            diag = coded(await editor.open(path), "TW303")
            assert [
                d.code
                for d in await editor.replace(path, text.replace("self.tokenizer", "self.processing_class"))
            ] == []
            diag = coded(await editor.replace(path, text), "TW303")  # back again
            actions = await editor.actions(path, diag)
            noqa = [a for a in actions if "noqa" in a.title]
            assert len(noqa) == 1
            silenced = apply_edit(text, noqa[0].edit, path.as_uri())
            assert "# noqa: TW303" in silenced.splitlines()[diag.range.start.line]
            assert [d.code for d in await editor.replace(path, silenced)] == []

    run(scenario())


def test_survives_a_file_that_does_not_parse_and_one_deleted_while_open(gallery_project: Path) -> None:
    path = gallery_project / "tokenizer_before.py"
    text = path.read_text(encoding="utf-8")
    broken = text.replace("def ", "def (", 1)

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            diagnostics = await editor.open(path, broken)
            assert [d.code for d in diagnostics] == ["TW000"]
            assert "cannot parse" in diagnostics[0].message
            assert diagnostics[0].severity == types.DiagnosticSeverity.Error
            assert diag_codes(await editor.replace(path, text)) == ["TW303"]
            # Deleted on disk while open: the editor still holds the text, and it is still linted.
            # Another file deleted at the same time makes the server rebuild its model and lint the
            # open documents again.
            path.unlink()
            (gallery_project / "memory_before.py").unlink()
            mark = len(editor.published)
            editor.client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(
                    changes=[
                        types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Deleted),
                        types.FileEvent(
                            uri=(gallery_project / "memory_before.py").as_uri(),
                            type=types.FileChangeType.Deleted,
                        ),
                    ]
                )
            )
            assert diag_codes(await editor.wait_for(path.as_uri(), None, mark)) == ["TW303"]
            assert diag_codes(await editor.replace(path, text + "\n")) == ["TW303"]
            assert await editor.actions(path, coded(editor.published[-1].diagnostics, "TW303"))
            mark = len(editor.published)
            editor.client.text_document_did_close(
                types.DidCloseTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=path.as_uri())
                )
            )
            assert await editor.wait_for(path.as_uri(), None, mark) == []
            # The server is still there for the next file.
            assert diag_codes(await editor.open(gallery_project / "legacy_loss_before.py")) == ["TW301"]

    run(scenario())


def test_the_project_settings_apply_and_a_settings_change_is_seen(gallery_project: Path) -> None:
    path = gallery_project / "tokenizer_before.py"
    settings = gallery_project / "pyproject.toml"
    plain = settings.read_text(encoding="utf-8")
    settings.write_text(plain + '\n[tool.trainwright]\nignore = ["TW303"]\n', encoding="utf-8")

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            assert await editor.open(path) == []  # ignored, as `trainwright lint` ignores it
            settings.write_text(plain, encoding="utf-8")
            mark = len(editor.published)
            editor.client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(
                    changes=[types.FileEvent(uri=settings.as_uri(), type=types.FileChangeType.Changed)]
                )
            )
            assert diag_codes(await editor.wait_for(path.as_uri(), None, mark)) == ["TW303"]

    run(scenario())


def test_saving_a_base_class_re_lints_the_open_subclass_in_another_file(gallery_project: Path) -> None:
    base = gallery_project / "legacy_loss_before.py"
    child = gallery_project / "child.py"
    child.write_text(
        "from legacy_loss_before import WeightedLossTrainer\n\n\n"
        "class ChildTrainer(WeightedLossTrainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):\n"
        "        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch=num_items_in_batch)\n",
        encoding="utf-8",
    )
    fixed = base.read_text(encoding="utf-8").replace(
        "return_outputs=False):", "return_outputs=False, num_items_in_batch=None):"
    )

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            assert "TW302" in diag_codes(await editor.open(child))  # the base rejects the keyword
            assert diag_codes(await editor.open(base)) == ["TW301"]
            assert diag_codes(await editor.replace(base, fixed)) == []  # not saved yet
            mark = len(editor.published)
            editor.client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=base.as_uri()))
            )
            assert "TW302" not in diag_codes(await editor.wait_for(child.as_uri(), None, mark))

    run(scenario())


def test_bad_settings_are_one_diagnostic_not_a_crash(gallery_project: Path) -> None:
    path = gallery_project / "tokenizer_before.py"
    settings = gallery_project / "pyproject.toml"
    settings.write_text(settings.read_text(encoding="utf-8") + '\n[tool.trainwright]\nselect = ["XX9"]\n')

    async def scenario() -> None:
        async with editor_session(gallery_project) as editor:
            (only,) = await editor.open(path)
            assert only.code == "TW000" and "settings" in only.message and "XX9" in only.message

    run(scenario())


def test_asks_to_be_told_of_files_changed_outside_the_editor(gallery_project: Path) -> None:
    watching = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
        )
    )

    async def scenario() -> None:
        async with editor_session(gallery_project, watching) as editor:
            await editor.open(gallery_project / "tokenizer_before.py")  # the registration came before this
            (registration,) = editor.registrations
            assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
            options = registration.register_options
            watchers = options["watchers"] if isinstance(options, dict) else options.watchers
            patterns = {w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in watchers}
            assert {"**/*.py", "**/pyproject.toml"} <= patterns

    run(scenario())


def diag_codes(diagnostics: list[types.Diagnostic]) -> list[str]:
    return [str(d.code) for d in diagnostics]
