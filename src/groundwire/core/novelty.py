"""What a rewritten text adds to its sources: the LLM tier may reword (repair's edits, the decomposer's claims)
but never add a fact, so each rewrite is held against the texts it was made from."""

from __future__ import annotations

from dataclasses import dataclass

from groundwire.core.figures import extract_figures
from groundwire.foundation.textutil import content_words


@dataclass(frozen=True, slots=True)
class KnownContent:
    """The content words and figures of a rewrite's sources, read once for any number of rewrites (repair tries
    every part of a split claim against the same 200k-character context)."""

    words: frozenset[str]
    figure_keys: frozenset[str]

    @classmethod
    def of(cls, original: str, context: str) -> KnownContent:
        return cls(
            frozenset(content_words(original)) | frozenset(content_words(context)),
            frozenset(f.key for f in extract_figures(original + "\n" + context)),
        )

    def added(self, edited: str) -> list[str]:
        """Content words and figures in `edited` found in neither source."""
        words = [word for word in content_words(edited) if word not in self.words]
        figures = [f.text for f in extract_figures(edited) if f.key not in self.figure_keys]
        return list(dict.fromkeys(words + figures))


def added_content(original: str, edited: str, context: str) -> list[str]:
    """Content words and figures in `edited` found neither in `original` nor in `context`."""
    return KnownContent.of(original, context).added(edited)
