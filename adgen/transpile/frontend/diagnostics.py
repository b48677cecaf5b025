"""Located diagnostics in gcc's format.

    model.py:4:11: error: unknown name 'y' (use a parameter, a local or a module constant)
        return y * 2.0
               ^
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from ..ir.core import Loc


@dataclass
class Note:
    loc: Loc
    message: str


class AdgenError(Exception):
    """Bad input: reported as ``file:line:col: error: ...`` with exit code 2."""

    def __init__(self, loc: Loc, message: str, notes: list[Note] | None = None) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message
        self.notes: list[Note] = notes or []


@dataclass
class Warning_:
    loc: Loc
    message: str


@dataclass
class Diagnostics:
    """Warnings collected while compiling (errors are raised)."""

    warnings: list[Warning_] = field(default_factory=list)

    def warn(self, loc: Loc, message: str) -> None:
        self.warnings.append(Warning_(loc, message))


def source_lines(text: str) -> list[str]:
    """The lines of a module as Python numbers them: ended by \\n, \\r\\n or \\r only
    (``str.splitlines`` also ends a line at \\f, \\v, \\x1c-\\x1e, \\x85, U+2028 and
    U+2029, which Python reads inside a line: a page break between two functions, a U+2028
    in a comment); a UTF-8 byte order mark, which Python skips, is not part of line 1."""
    lines = re.split(r"\r\n|\r|\n", text.removeprefix("\ufeff"))
    if lines[-1] == "":  # the end of the last line, as splitlines has it
        lines.pop()
    return lines


def _excerpt(loc: Loc, lines: list[str]) -> str:
    if not (1 <= loc.line <= len(lines)):
        return ""
    text = lines[loc.line - 1].rstrip("\n").expandtabs(1)
    return f"    {text}\n    {' ' * _width(text[:max(loc.col - 1, 0)])}^\n"


def _width(text: str) -> int:
    """The columns ``text`` takes on a terminal: two for a wide character (East Asian wide
    and full-width: 漢), none for a combining mark, one for the others."""
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def format_message(kind: str, loc: Loc, message: str, lines: list[str]) -> str:
    return f"{loc}: {kind}: {message}\n" + _excerpt(loc, lines)


def format_error(err: AdgenError, lines: list[str]) -> str:
    out = format_message("error", err.loc, err.message, lines)
    for note in err.notes:
        out += format_message("note", note.loc, note.message, lines)
    return out
