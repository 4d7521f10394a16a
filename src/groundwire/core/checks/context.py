"""The context as the checks read it, built once per request: its figures, dates and years, the sentences that
hold a figure, a schedule of opening hours, a JSON record's yes/no attributes, and the chunk texts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from groundwire.core.cancel import checkpoint
from groundwire.core.checks.attributes import RecordAttribute, record_attributes
from groundwire.core.checks.hours import context_schedule
from groundwire.core.figures import Figure, extract_figures
from groundwire.core.memo import remembered
from groundwire.foundation.textutil import content_words, sentence_spans
from groundwire.foundation.types import Chunk


@dataclass(frozen=True, slots=True)
class ContextIndex:
    """The context's figures, precomputed once per request."""

    keys: frozenset[str]
    dates: tuple[Figure, ...]
    years: frozenset[str]
    sentences: tuple[tuple[str, frozenset[str], tuple[Figure, ...]], ...]
    """The sentences that hold a figure, with their content words and figures."""
    schedule: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """Opening hours per day, where the context lists them day by day (a business record)."""
    attributes: tuple[RecordAttribute, ...] = ()
    """Yes/no/not-given attributes of the JSON records among the chunks."""
    texts: tuple[str, ...] = ()
    """The chunks' texts as scored, for checks that ask whether the context names something at all."""
    sentence_keys: tuple[frozenset[str], ...] = ()
    """Per sentence of `sentences`, the values its figures state (as `has` compares them): which sentences hold a
    figure, answered without a pass over their figures."""

    @classmethod
    def shared(cls, chunks: Sequence[Chunk], *, sources: Sequence[Chunk] = ()) -> ContextIndex:
        """`build`, once for every check of a task on these chunks (repair's checks: core.memo)."""
        return remembered("context_index", (tuple(chunks), tuple(sources)), partial(cls.build, chunks, sources=sources))

    @classmethod
    def build(cls, chunks: Sequence[Chunk], *, sources: Sequence[Chunk] = ()) -> ContextIndex:
        """`sources`: the chunks as retrieved, where `chunks` are their rendered statements (a JSON record's
        attributes are read from the record itself)."""
        keys: set[str] = set()
        dates: list[Figure] = []
        years: set[str] = set()
        rows = []
        for chunk in chunks:
            for start, end in sentence_spans(chunk.text):
                checkpoint()  # a large context's index is long work: it stops at the time budget (core.cancel)
                sentence = chunk.text[start:end]
                figures = tuple(extract_figures(sentence))
                for figure in figures:
                    keys.add(_match_key(figure))
                    if figure.kind == "date":
                        dates.append(figure)
                        years.add(figure.key[:4])
                    elif figure.kind == "number" and len(figure.key) == 4:
                        years.add(figure.key)
                if figures:
                    rows.append((sentence, frozenset(content_words(sentence)), figures))
        texts = dict.fromkeys(chunk.text for chunk in (*chunks, *sources))
        return cls(
            frozenset(keys),
            tuple(dates),
            frozenset(years),
            tuple(rows),
            context_schedule(chunk.text for chunk in chunks),
            record_attributes(texts),
            tuple(chunk.text for chunk in chunks),
            tuple(frozenset(_match_key(figure) for figure in figures) for _, _, figures in rows),
        )

    def has(self, figure: Figure) -> bool:
        if figure.kind == "date":
            return self._has_date(figure)
        # "in 2013" is supported by "in July 2013": the context's dates count as their years.
        if figure.kind == "number" and figure.key in self.years and _looks_like_year(figure.key):
            return True
        return _match_key(figure) in self.keys

    def _has_date(self, figure: Figure) -> bool:
        year, month, day = figure.key.split("-")
        if year != "*" and year not in self.years:
            return False
        for other in self.dates:
            o_year, o_month, o_day = other.key.split("-")
            if o_month != month:
                continue
            if year != "*" and o_year not in ("*", year):
                continue
            if day != "00" and o_day not in ("00", day):
                continue
            return True
        return False

    def holding(self, figure: Figure) -> list[bool]:
        """Per sentence of `sentences`, whether it states the figure's value ("$49" and "49 dollars" alike)."""
        key = _match_key(figure)
        return [key in keys for keys in self.sentence_keys]

    def conflicting(self, figure: Figure, claim_words: frozenset[str]) -> str | None:
        """A context figure of the same kind in a sentence about the same thing, if any."""
        best: tuple[int, str] | None = None
        for _sentence, sentence_words, figures in self.sentences:
            overlap = len(claim_words & sentence_words)
            if overlap < 2:
                continue
            for other in figures:
                same_kind = other.kind == figure.kind and other.unit == figure.unit and other.key != figure.key
                if same_kind and (best is None or overlap > best[0]):
                    best = (overlap, other.text)
        return best[1] if best else None


def _match_key(figure: Figure) -> str:
    # Money, percentages and plain numbers compare by value: "$49" in a claim matches "49 dollars".
    kind = "n" if figure.kind in ("number", "money", "percent") else figure.kind
    return f"{kind}:{figure.key}"


def _looks_like_year(key: str) -> bool:
    return len(key) == 4 and key.isdigit() and 1000 <= int(key) <= 2199
