"""What a rewritten text adds to its sources: the LLM tier may reword (repair's edits, the decomposer's claims)
but never add a fact, so each rewrite is held against the texts it was made from."""

from __future__ import annotations

from groundwire.core.figures import extract_figures
from groundwire.core.textutil import content_words


def added_content(original: str, edited: str, context: str) -> list[str]:
    """Content words and figures in `edited` found neither in `original` nor in `context`."""
    allowed = set(content_words(original)) | set(content_words(context))
    words = [word for word in content_words(edited) if word not in allowed]
    known_figures = {f.key for f in extract_figures(original + "\n" + context)}
    figures = [f.text for f in extract_figures(edited) if f.key not in known_figures]
    return list(dict.fromkeys(words + figures))
