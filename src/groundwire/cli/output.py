"""Printing user and model text literally: never as rich markup, emoji codes or terminal control sequences.

Every piece of text that came from a file, a flag, a model or an exception goes through `literal()` (a
rich Text, which is never parsed for markup); JSON goes to stdout through `print_json()`, untouched by rich.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from rich.text import Text

# C0/C1 control characters other than newline and tab: shown as \xNN so an answer cannot drive the terminal.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def literal(text: object, style: str = "") -> Text:
    """`text` exactly as written (control characters made visible), in one optional style."""
    return Text(_CONTROL_RE.sub(lambda match: f"\\x{ord(match.group()):02x}", str(text)), style=style)


def styled(*parts: str | tuple[object, str]) -> Text:
    """A line of literal pieces; a (text, style) pair is styled, a bare string is plain."""
    line = Text()
    for part in parts:
        line.append_text(literal(*part) if isinstance(part, tuple) else literal(part))
    return line


def print_json(payload: dict[str, Any] | list[Any]) -> None:
    """One JSON document on stdout; json.dumps escapes every control character, rich never sees it."""
    sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    sys.stdout.flush()
