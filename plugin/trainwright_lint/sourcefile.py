"""A source file's text, decoded the way Python decodes it, or why it cannot be.

Python reads source as UTF-8 (a UTF-8 byte-order mark dropped) unless a PEP 263 coding line declares
another encoding. The linter reads it the same way, and so does the fixer (``fixes.segment``): a file
that ``trainwright fix`` refuses to decode is one that ``trainwright lint`` reports as TW000, never one
it lints under a guessed encoding. A file Python cannot decode (UTF-16, or bytes that are not UTF-8
without a coding line) cannot run either, so it is reported, not skipped: the reason says what to do.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import blake2b as Blake2b

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


#: the largest source file read at all (32 MiB; the largest ``.py`` in torch, transformers and their
#: dependencies is 1.4 MB). A larger file is one TW000 and is never read past this.
MAX_SOURCE_BYTES = 32 << 20
#: the most "items" (commas plus lines) a file may hold to be parsed. ``ast`` memory follows the nodes,
#: not the bytes: a 20 MB data literal (5 million list items) took 9.3 GB and ended the whole run in
#: ``MemoryError``, while ten megabytes of comments cost little. A million items is about 2 GB at the
#: parse's peak; the largest real source seen has under 60,000.
MAX_PARSE_ITEMS = 1_000_000


def read_bytes(path: str) -> bytes | None:
    """``path``'s bytes; ``None`` when it cannot be read or is over :data:`MAX_SOURCE_BYTES` (never
    read past the limit, so a huge file costs nothing)."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size > MAX_SOURCE_BYTES:
                return None
            data = fh.read(MAX_SOURCE_BYTES + 1)  # a file growing while read, or not a regular file
    except OSError:
        return None
    return None if len(data) > MAX_SOURCE_BYTES else data


def parse_items(text: str) -> int:
    """What parsing ``text`` costs in memory, roughly: its commas and lines (two passes in C)."""
    return text.count(",") + text.count("\n")


def _too_large(path: str) -> str | None:
    """The TW000 reason for a file over a size limit, else ``None``."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return None
    if size > MAX_SOURCE_BYTES:
        return (
            f"skipped: {size / 2**20:.1f} MiB is over the {MAX_SOURCE_BYTES >> 20} MiB a source file may "
            "have; exclude generated or data files"
        )
    data = read_bytes(path)
    text = decode_source(data) if data is not None else None
    if text is not None and parse_items(text) > MAX_PARSE_ITEMS:
        return (
            f"skipped: {parse_items(text):,} items (commas and lines) are over the {MAX_PARSE_ITEMS:,} a "
            "source file may have (parsing takes about 2 KB of memory per item); exclude generated or "
            "data files"
        )
    return None


def decode_source(data: bytes) -> str | None:
    """The text Python would read from ``data``; ``None`` when it cannot decode it."""
    if data.startswith(_UTF8_BOM):  # the "utf-8-sig" codec is slower
        try:  # a BOM beside a coding line naming another codec: Python refuses the file
            tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:
            return None
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _as_declared(data, None)
    if "\0" in text and _looks_utf16(data):
        return None  # UTF-16 of ASCII text is valid UTF-8, with a NUL byte after every letter
    if "coding" in text[: text.find("\n", text.find("\n") + 1) + 1 or len(text)]:
        return _as_declared(data, text)  # a coding line (PEP 263: on line 1 or 2) may name another codec
    return text


def _blake2b() -> type[Blake2b]:
    """``hashlib.blake2b``, which is CPython's ``_blake2.blake2b``: taken from there, the import costs
    0.3 ms instead of ``hashlib``'s 3 ms (it loads OpenSSL for every other algorithm)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - another Python
        from hashlib import blake2b
    return blake2b


def text_digest(text: str) -> bytes:
    """What identifies one decoded text: the lint records it for every file it linted, and the fixer
    applies the lint's edits (addressed by line and column) only to a snapshot with the same digest.
    Any other text (a save during the lint) is linted again before anything is changed."""
    return _blake2b()(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_INDENT = re.compile(r"^([ \t\f]*)\S", re.MULTILINE)


def fix_blocker(text: str) -> str | None:
    """Why the fixer cannot rewrite ``text`` although every rule's fix is valid, else ``None``: lint
    then shows no ``[*]`` (``fix_note`` says why), so that lint and fix agree. libcst's tokenizer
    cannot read a form feed inside a line's indentation (one alone on a line, or before code in
    column 0, it reads)."""
    if "\f" not in text:
        return None
    for match in _INDENT.finditer(text):
        indent = match[1]
        if "\f" in indent and indent.strip("\f"):
            line = text.count("\n", 0, match.start()) + 1
            return f"no automatic fix: line {line} has a form feed inside its indentation"
    return None


def read_source(path: str) -> str | None:
    """``path``'s text as Python reads it; ``None`` when it cannot be read or decoded, or is over a
    size limit (:func:`unreadable_reason` says why)."""
    data = read_bytes(path)
    text = None if data is None else decode_source(data)
    if text is None:
        return None
    # Each item is a character: a text no longer than the limit cannot be over it (nearly every file).
    return None if len(text) > MAX_PARSE_ITEMS and parse_items(text) > MAX_PARSE_ITEMS else text


def unreadable_reason(path: str) -> str:
    """Why :func:`read_source` gave nothing for ``path``: the TW000 message."""
    large = _too_large(path)
    if large is not None:
        return large
    try:
        with open(path, "rb") as fh:  # again, for the error itself: this is the rare path
            data = fh.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        return f"cannot read file ({exc.strerror or exc.__class__.__name__})"
    if data.startswith(_UTF16_BOMS) or _looks_utf16(data):
        return (
            "cannot decode: the file is UTF-16 text, and Python reads source as UTF-8 (or as a coding line "
            "declares); save it as UTF-8"
        )
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if data.startswith(_UTF8_BOM):
            return (
                "cannot decode: a UTF-8 byte-order mark with a coding line naming another encoding (Python "
                "refuses the file: encoding problem with BOM); remove the mark or the coding line"
            )
        return f"cannot decode: {exc.msg}"
    if encoding.replace("_", "-").lower() in ("utf-8", "utf-8-sig"):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return (
                f"cannot decode: byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8 and no coding "
                "line declares another encoding (Python cannot run it either); save it as UTF-8 or add a "
                "coding line"
            )
    return f"cannot decode: the bytes are not valid {encoding}, the encoding its coding line declares"


def _as_declared(data: bytes, utf8: str | None) -> str | None:
    """``data`` as its coding line declares (``utf8``, the caller's UTF-8 decoding if it had one, when
    that is UTF-8); ``None`` when Python would refuse it. Falling back to UTF-8 linted a ``# coding: ascii`` file with non-ASCII bytes, which
    Python cannot run and the fixer (rightly) refused: lint offered fixes that fix then refused."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        if encoding.replace("_", "-").lower() in ("utf-8", "utf-8-sig"):
            return utf8
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None


def _looks_utf16(data: bytes) -> bool:
    """A NUL in at least two of every five even (or odd) bytes of the start: UTF-16 of mostly ASCII
    text, which no Python source is (Python rejects NUL bytes in source)."""
    head = data[:2048]
    if len(head) < 4 or b"\0" not in head:
        return False
    half = len(head) // 2
    return head[0::2].count(0) * 5 >= half * 2 or head[1::2].count(0) * 5 >= half * 2
