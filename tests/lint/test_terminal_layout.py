"""``trainwright_lint.terminal``: width and colour detection, word-boundary wrapping, tables that fit."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import termios
from collections import Counter

import pytest
from trainwright_lint.terminal import (
    GLUE,
    Column,
    Terminal,
    detect_colour,
    detect_width,
    render_table,
    visible,
)


class Tty(io.StringIO):
    """A stream that says it is a terminal (without a size: ``os.get_terminal_size`` fails on it)."""

    def isatty(self) -> bool:
        return True


def test_width_columns_then_terminal_then_80() -> None:
    pipe = io.StringIO()
    assert detect_width(pipe, {}) == 80  # a pipe: 80, whatever the window
    assert detect_width(pipe, {"COLUMNS": "132"}) == 132  # COLUMNS is honoured everywhere
    assert detect_width(pipe, {"COLUMNS": "0"}) == 80 and detect_width(pipe, {"COLUMNS": "wide"}) == 80
    leader, follower = pty.openpty()
    try:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 71, 0, 0))
        with os.fdopen(os.dup(follower), "w") as tty:
            assert detect_width(tty, {}) == 71
            assert detect_width(tty, {"COLUMNS": "90"}) == 90
    finally:
        os.close(leader)
        os.close(follower)


@pytest.mark.parametrize(
    ("tty", "environ", "colour"),
    [
        (False, {}, False),
        (True, {"TERM": "xterm"}, True),
        (True, {"TERM": "xterm", "NO_COLOR": "1"}, False),
        (True, {"TERM": "xterm", "NO_COLOR": ""}, True),  # no-color.org: an empty value does not count
        (True, {"TERM": "dumb"}, False),
        (False, {"FORCE_COLOR": "1"}, True),
        (False, {"FORCE_COLOR": "0"}, False),
        (True, {"TERM": "xterm", "FORCE_COLOR": "1", "NO_COLOR": "1"}, False),  # NO_COLOR wins
    ],
)
def test_colour_only_on_a_terminal_and_never_with_no_color(
    tty: bool, environ: dict[str, str], colour: bool
) -> None:
    assert detect_colour(Tty() if tty else io.StringIO(), environ) is colour


def test_arrow_falls_back_where_the_stream_cannot_encode_it() -> None:
    ascii_pipe = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert Terminal.detect(ascii_pipe, {}).arrow == "->"
    assert Terminal.detect(io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), {}).arrow == "→"


def test_wrap_breaks_at_spaces_with_hanging_indents() -> None:
    term = Terminal(width=30)
    sig = "(self, model, inputs, return_outputs=False, num_items_in_batch=None)"
    assert term.wrap(sig) == ["(self, model, inputs,", " return_outputs=False,", " num_items_in_batch=None)"]
    bullet = "→ verdict: do not override; instead override create_optimizer"
    assert term.wrap(bullet) == ["→ verdict: do not override;", "  instead override", "  create_optimizer"]
    assert term.wrap("see https://example.org/a/very/long/path/that/cannot/break now", indent="  ") == [
        "  see",
        "  https://example.org/a/very/long/path/that/cannot/break",  # overflows whole, never cut
        "  now",
    ]
    glued = term.wrap(f"(self, model, inputs, return_outputs=False)  <-{GLUE}target")
    assert glued[-1].endswith("<- target") and "<-" not in glued[-2]
    assert term.wrap("intro text", lead="  4.46 .. now  ", indent=" " * 16, width=22) == [
        "  4.46 .. now  intro",
        " " * 16 + "text",
    ]


WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda"]
WORDS += ["mu", "nu", "xi", "omicron", "pi", "rho", "sigma"]


def _table() -> tuple[list[Column], list[list[object]]]:
    columns = [
        Column("NAME", "spill"),
        Column("V", "fixed"),
        Column("NOTES", "wrap"),
        Column("DETAIL", "wrap", min_width=24),
    ]
    rows: list[list[object]] = []
    for i in range(12):
        name = "a_rather_long_method_name_here" if i == 3 else f"name_{i}"
        notes = " ".join(WORDS[i : i + 3])
        detail = [f"({', '.join(WORDS[: i + 2])})", "→ " + " ".join(reversed(WORDS[: i + 4]))]
        rows.append([name, str(i), notes, detail])
    return columns, rows


@pytest.mark.parametrize("width", list(range(40, 161, 6)))
def test_tables_fit_every_width_and_keep_every_word(width: int) -> None:
    columns, rows = _table()
    lines = render_table(Terminal(width=width), columns, rows)  # type: ignore[arg-type]
    assert max(len(line) for line in lines) <= width, width
    wide = render_table(Terminal(width=10_000), columns, rows)  # type: ignore[arg-type]
    words = Counter(w for line in lines for w in line.split() if w.strip("-"))
    assert words == Counter(w for line in wide for w in line.split() if w.strip("-"))


def test_table_layouts_from_wide_to_narrow() -> None:
    columns, rows = _table()
    wide = render_table(Terminal(width=200), columns, rows)  # type: ignore[arg-type]
    assert wide[0].split() == ["NAME", "V", "NOTES", "DETAIL"]  # side by side, natural widths
    assert len(wide) == 2 + sum(2 for _ in rows)  # header, rule, one line per paragraph
    medium = render_table(Terminal(width=70), columns, rows)  # type: ignore[arg-type]
    assert "a_rather_long_method_name_here" in medium  # the long name spills onto a line of its own
    spilled = medium.index("a_rather_long_method_name_here")
    assert medium[spilled + 1].startswith(" ") and medium[spilled + 1].split()[0] == "3"
    narrow = render_table(Terminal(width=44), columns, rows)  # type: ignore[arg-type]
    assert narrow[1] == "    DETAIL"  # stacked: the last column under each row
    first, second = (
        next(i for i, line in enumerate(narrow) if line.startswith(n)) for n in ("name_0", "name_1")
    )
    assert any(line.startswith("    (alpha, beta)") for line in narrow[first:second])


def test_paint_after_layout() -> None:
    text = "Title\nNOT CALLED by Trainer"
    assert Terminal(colour=False).paint(text, ((r"NOT CALLED", "warning"),)) == text
    painted = Terminal(colour=True).paint(text, ((r"NOT CALLED", "warning"), (r"\ATitle", "heading")))
    assert painted == "\x1b[1mTitle\x1b[0m\n\x1b[1;31mNOT CALLED\x1b[0m by Trainer"
    assert visible(painted) == text
