"""A fix whose original runs on none of the asked releases is judged against an older one (issue 32).

``trl.DPOTrainer(tokenizer=tok)`` fails on 4.46.3 (TRL 0.17) and 5.24.0 (TRL 1.16): TRL removed the
keyword in 0.16. TW304 renames it to ``processing_class=``; "where the original fails, the fixed program
must train as the original did on the last release where it ran". That release is 4.45.2 with TRL
0.11.4 (the 4.45 folder had TRL 0.12.2, whose trainers pass ``processing_class=`` to a ``Trainer`` that
4.45 does not have, so nothing ran there). The matrix runs such an original on 4.45.2 as a reference and
says so in the case's line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))


def test_a_twin_that_does_not_move_gives_a_ratio_of_one_not_a_crash() -> None:
    pytest.importorskip("transformers")
    import oracle_matrix

    assert oracle_matrix._relative(0.0, 0.0) == 1.0
    assert oracle_matrix._relative(0.5, 0.0) == float("inf")
    assert oracle_matrix._relative(0.5, 0.25) == 2.0


@pytest.mark.slow
def test_a_tokenizer_rename_is_judged_against_the_last_release_where_the_original_ran(
    tmp_path: Path,
    installed_release,
) -> None:
    pytest.importorskip("transformers")
    import oracle_matrix

    from trainwright.testing.renames import Rename

    newer, _reference = installed_release("4.46.3", "4.45.2")
    releases = {"4.46.3": newer, oracle_matrix.PINNED: None}
    rename = Rename("trl.DPOTrainer", "tokenizer", "processing_class", "tokenizer")
    same = oracle_matrix.stand_in_cases("dpo", [rename], tmp_path / "w", ">=4.44,<6")[0]
    planted = same.fixed.with_name("planted.py")  # the rename, and a beta the original did not have
    planted.write_text(
        same.fixed.read_text().replace(
            "super().__init__(", 'kwargs["args"].beta = 0.5\n        super().__init__('
        )
    )
    wrong = oracle_matrix.Case("planted", same.original, planted, False, same.target, same.trainer)
    wrong.plain = same.plain
    # TRL 0.11's RewardTrainer reads token columns, not text: the toy rows are tokenised for it
    reward = Rename("trl.RewardTrainer", "tokenizer", "processing_class", "tokenizer")
    (rm,) = oracle_matrix.stand_in_cases("rm", [reward], tmp_path / "rm", ">=4.44,<6")
    oracle_matrix.run([same, wrong, rm], releases)
    assert same.verdicts == {"4.46.3": "equal", "5.24.0": "equal"}, same.differences
    assert rm.verdicts == {"4.46.3": "equal", "5.24.0": "equal"}, (rm.reasons, rm.differences)
    assert rm.references == {"4.46.3": "4.45.2", "5.24.0": "4.45.2"}
    assert same.references == {"4.46.3": "4.45.2", "5.24.0": "4.45.2"}
    assert "against the original on 4.45.2, a reference release" in oracle_matrix.report([same])
    assert wrong.verdicts == {"4.46.3": "different", "5.24.0": "different"}


def test_a_case_whose_range_starts_above_an_asked_release_is_judged_on_its_floor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("transformers")
    import oracle_matrix

    from trainwright.testing.releases import release_dir, requirements

    monkeypatch.setenv("TRAINWRIGHT_ORACLE_DIR", str(tmp_path))
    floor = release_dir("4.56.2", tmp_path)  # as installed: ``ensure`` reuses it, no pip
    (floor / "transformers").mkdir(parents=True)
    (floor / "transformers" / "__init__.py").write_text("__version__ = '4.56.2'\n")
    (floor / ".complete").write_text(" ".join(requirements("4.56.2")) + "\n")
    older = tmp_path / "transformers-4.46.3"
    plain = oracle_matrix.Case("plain", Path("a.py"), Path("b.py"), False, ">=4.44,<6")
    trl = oracle_matrix.Case("trl", Path("a.py"), Path("b.py"), False, ">=4.44,<6,>=4.56.2")
    groups = oracle_matrix.in_ranges([plain, trl], {"4.46.3": older, oracle_matrix.PINNED: None})
    assert [([c.name for c in cases], on) for cases, on in groups] == [
        (["plain"], {"4.46.3": older, oracle_matrix.PINNED: None}),
        (["trl"], {"4.56.2": floor, oracle_matrix.PINNED: None}),
    ]


def test_a_fix_about_trls_api_is_judged_where_the_trl_target_runs() -> None:
    # On 4.44.2/4.45.2 the oracle's folders hold TRL 0.11.4, which the fix was not made for: 11 dev
    # renames to `processing_class=`/`max_length=` failed there (2026-12-07). TRL 1.16, the linter's TRL
    # target, declares transformers>=4.56.2: a TRL-API fix is judged on that range, as TRL's own code is.
    pytest.importorskip("transformers")
    import oracle_matrix
    from trainwright_lint.rules.tw304_removed_argument import RemovedArgument

    from trainwright.testing.releases import range_floor

    assert range_floor(oracle_matrix.trl_api_range(">=4.44,<6")) == "4.56.2"
    said = RemovedArgument.message.format(
        keyword="tokenizer", owner="trl.DPOTrainer", library="trl", version="1.16.0", when="", instead="x"
    )
    assert oracle_matrix.TRL_API in said  # the words the matrix reads the finding's library from
    on_transformers = RemovedArgument.message.format(
        keyword="tokenizer", owner="Trainer", library="transformers", version="5.24.0", when="", instead="x"
    )
    assert oracle_matrix.TRL_API not in on_transformers
