"""``headline._clauses`` visits only the marks that matter; it splits as the per-character reading of
the module docstring does (kept here as the reference)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from trainwright_lint.output.headline import _clauses, split_message


def reference_clauses(text: str) -> list[str]:
    """Split at ``"; "`` where the character is outside code spans and brackets, one character at a time."""
    top: list[bool] = []
    depth, code = 0, False
    for ch in text:
        if ch == "`":
            code = not code
            top.append(False)
        elif not code and ch in "([{":
            depth += 1
            top.append(False)
        elif not code and ch in ")]}" and depth:
            depth -= 1
            top.append(False)
        else:
            top.append(depth == 0 and not code)
    parts, start = [], 0
    for i in range(len(text) - 1):
        if text[i] == ";" and text[i + 1] == " " and top[i]:
            parts.append(text[start:i])
            start = i + 2
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


messages = st.lists(
    st.sampled_from(["; ", ";", " ", "`", "(", ")", "[", "]", "{", "}", "x", "é"]), max_size=30
)


@settings(max_examples=500, deadline=None)
@given(messages.map("".join))
def test_clauses_split_as_the_per_character_reading(text: str) -> None:
    assert _clauses(text) == reference_clauses(text)


def test_a_real_message() -> None:
    message = (
        "`compute_loss` cannot accept what transformers 4.47.1 passes (`f(a; b)`); "
        "add `num_items_in_batch=None`; see [the notes; here] (4.46+)"
    )
    parts = split_message(message)
    assert parts.headline == "`compute_loss` cannot accept what transformers 4.47.1 passes (`f(a; b)`)"
    assert parts.help == ("add `num_items_in_batch=None`", "see [the notes; here]")
    assert parts.notes == ("4.46+",)
