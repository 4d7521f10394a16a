"""Structured context (JSON records) -> one checkable statement per line.

Real retrieved context is not always prose: a JSON business record scored as raw text gives a model braces
and camelCase keys, and gives the figure checks "11:0-17:0". Rendering each leaf as "Key path: value."
lets windows split at statement boundaries and lets every check read the record.
"""

from __future__ import annotations

import json
import re
from typing import Any

from groundwire.foundation.types import Chunk, ChunkType

# Split camelCase after three lower-case letters, so "OutdoorSeating" splits but "WiFi" stays one word.
_CAMEL_RE = re.compile(r"(?<=[a-z]{2}[a-z0-9])(?=[A-Z])")
_MAX_DEPTH = 8


def parse_json(text: str) -> dict[str, Any] | list[Any] | None:
    """The JSON object or array the text holds, or None when it holds something else."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, (dict, list)) else None


def render_structured(text: str) -> str | None:
    """Statements for a JSON object or array, or None when the text is not JSON."""
    data = parse_json(text)
    if data is None:
        return None
    lines: list[str] = []
    _render(data, [], lines, 0)
    return "\n".join(lines) if lines else None


def rendered_chunk(chunk: Chunk) -> Chunk:
    """The chunk itself, or a copy whose text is the rendered statements (same id, type "table")."""
    rendered = render_structured(chunk.text)
    if rendered is None:
        return chunk
    return Chunk(id=chunk.id, text=rendered, doc_id=chunk.doc_id, page=chunk.page, type=ChunkType.TABLE.value)


def _render(value: Any, path: list[str], lines: list[str], depth: int) -> None:
    if isinstance(value, dict) and depth < _MAX_DEPTH:
        for key, item in value.items():
            _render(item, [*path, humanize(str(key))], lines, depth + 1)
    elif isinstance(value, list) and depth < _MAX_DEPTH and any(isinstance(v, (dict, list)) for v in value):
        for number, item in enumerate(value, start=1):
            _render(item, [*path[:-1], f"{path[-1] if path else 'item'} {number}"], lines, depth + 1)
    else:
        label = " ".join(path) or "value"
        lines.append(f"{label[:1].upper()}{label[1:]}: {_leaf(value)}" + ("" if _ends_sentence(value) else "."))


def humanize(key: str) -> str:
    """'OutdoorSeating' -> 'outdoor seating', 'business_stars' -> 'business stars'."""
    return _CAMEL_RE.sub(" ", key).replace("_", " ").strip().lower()


def _leaf(value: Any) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if value is None:
        return "not given"
    if isinstance(value, list):
        return ", ".join(_leaf(v) for v in value)
    return str(value).strip()


def _ends_sentence(value: Any) -> bool:
    return isinstance(value, str) and value.strip()[-1:] in (".", "!", "?")
