"""Self-RAG reflection tokens: parse them out of a Self-RAG model's output.

Self-RAG (Asai et al., 2023) interleaves its answer with four kinds of token:
[Retrieve] (written [Retrieval] / [No Retrieval] / [Continue to Use Evidence] by the released models),
[IsRel] ([Relevant] / [Irrelevant]), [IsSup] ([Fully supported] / [Partially supported] /
[No support / Contradictory]) and [IsUse] ([Utility:1] .. [Utility:5]). Evidence it was given appears
between <paragraph> tags. This module only parses; generate.py acts on what it finds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RETRIEVE = {"[retrieval]": True, "[retrieve]": True, "[no retrieval]": False, "[continue to use evidence]": False}
_IS_REL = {"[relevant]": "relevant", "[irrelevant]": "irrelevant"}
_IS_SUP = {"[fully supported]": "fully", "[partially supported]": "partially", "[no support / contradictory]": "none"}
IS_SUP_SCORE = {"fully": 1.0, "partially": 0.5, "none": 0.0}
_TOKEN_RE = re.compile(
    r"\[(?:Retrieval|Retrieve|No Retrieval|Continue to Use Evidence|Relevant|Irrelevant|Fully supported|"
    r"Partially supported|No support / Contradictory|Utility:\s*[1-5])\]",
    re.IGNORECASE,
)
_PARAGRAPH_RE = re.compile(r"<paragraph>(?P<evidence>.*?)</paragraph>", re.DOTALL | re.IGNORECASE)
_ANY_RE = re.compile(f"{_TOKEN_RE.pattern}|{_PARAGRAPH_RE.pattern}", re.DOTALL | re.IGNORECASE)
_END_RE = re.compile(r"</s>|<\|endoftext\|>")


@dataclass(frozen=True, slots=True)
class Segment:
    text: str
    span: tuple[int, int]
    """Where the segment's text sits in Reflection.text."""
    retrieve: bool | None = None
    is_rel: str | None = None
    is_sup: str | None = None
    is_use: int | None = None
    evidence: str | None = None
    """The <paragraph> the segment was written from, when the model was given one."""


@dataclass(frozen=True, slots=True)
class Reflection:
    text: str
    """The answer with every reflection token and evidence paragraph removed."""
    segments: tuple[Segment, ...]

    @property
    def wants_retrieval(self) -> bool:
        """A [Retrieve] token that no evidence paragraph answered: the model asks for passages."""
        return any(segment.retrieve and segment.evidence is None for segment in self.segments)

    @property
    def has_tokens(self) -> bool:
        return any(s.retrieve is not None or s.is_rel or s.is_sup or s.is_use for s in self.segments)


def parse_reflection(output: str) -> Reflection:
    """Split the output into segments; a [Retrieve]-type token opens a new segment, the others annotate it."""
    raw = _END_RE.sub("", output)
    segments: list[Segment] = []
    current: dict[str, object] = {}
    pieces: list[str] = []
    text = ""
    cursor = 0

    def close() -> None:
        nonlocal text
        body = " ".join(" ".join(pieces).split())
        if body or current:
            start = len(text) + (1 if text and body else 0)
            text = f"{text} {body}".strip() if body else text
            segments.append(Segment(body, (start, start + len(body)), **current))  # type: ignore[arg-type]
        current.clear()
        pieces.clear()

    for match in _ANY_RE.finditer(raw):
        pieces.append(raw[cursor : match.start()])
        cursor = match.end()
        token = match.group().lower()
        if match.group("evidence") is not None:
            current["evidence"] = match.group("evidence").strip()
        elif token in _RETRIEVE:
            if "".join(pieces).strip():
                close()
            current["retrieve"] = _RETRIEVE[token]
        elif token in _IS_REL:
            current["is_rel"] = _IS_REL[token]
        elif token in _IS_SUP:
            current["is_sup"] = _IS_SUP[token]
        else:
            current["is_use"] = int(re.sub(r"\D", "", token))
    pieces.append(raw[cursor:])
    close()
    return Reflection(text, tuple(segments))
