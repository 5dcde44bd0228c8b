"""Text from inputs, made safe to show: in a terminal, a CI log, XML, a workflow command.

A name or a message read from a stack, an export or telemetry may hold control characters. Shown raw, an escape
sequence clears the terminal or sets its title (``ESC[2J``, an OSC), a carriage return overwrites the line before
it, and a C0 control or a non-character (``U+FFFE``) makes XML not well-formed (XML 1.0 allows only tab, LF, CR
and U+0020 and above, without the surrogates, U+FFFE and U+FFFF). `printable` writes each of them as a visible
escape (``\\x1b``, ``\\ufffe``), so the text stays readable and says what was there.
"""

from __future__ import annotations

import re

#: C0 controls but tab and newline, DEL and the C1 controls (CSI is U+009B), the bidirectional overrides and
#: isolates (they reorder what a reader sees: "Trojan Source"), lone surrogates, the non-characters.
_CLASS = "\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f{_CLASS}]")
#: The same, with newline and tab: for one-line places (a table title, an attribute).
_UNSAFE_LINE = re.compile(f"[\x00-\x1f{_CLASS}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with each control character, lone surrogate and non-character written as an escape; with
    ``one_line`` newlines and tabs too."""
    return (_UNSAFE_LINE if one_line else _UNSAFE).sub(_escape, text)
