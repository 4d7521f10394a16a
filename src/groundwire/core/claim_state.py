"""One claim through one check: the state the verifier fills in stage by stage (checks, scoring, combiner),
the pair matrix it reads, its evidence (citation and sentence), its note, and the features the combiner learns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from groundwire.core.checks import CLAIM_CHECKS, CheckEffect, ClaimCheckInput
from groundwire.core.checks.citations import resolve_cited_id
from groundwire.core.checks.context import ContextIndex
from groundwire.core.figures import Figure, claim_figures, unreadable_figures
from groundwire.core.meaning import Alignment
from groundwire.core.verbatim import VerbatimMatch, verbatim_match
from groundwire.core.windows import Window
from groundwire.foundation.textutil import WORD_RE, content_words, sentence_spans
from groundwire.foundation.types import Chunk, Claim, Finding, Thresholds, Verdict


@dataclass(frozen=True, slots=True)
class Matrix:
    support: np.ndarray  # (claims, windows)
    contradiction: np.ndarray | None
    truncated: np.ndarray  # (claims,) bool: some pair of the claim was cut by the backend
    pairs_scored: int


@dataclass(frozen=True, slots=True)
class Scoring:
    """What every claim of one answer is scored against: the pair matrix and the context it was built from."""

    matrix: Matrix
    windows: list[Window]
    context: list[Chunk]
    context_words: frozenset[str]
    chunk_ids: list[str]
    thresholds: Thresholds
    compared_claims: list[str]
    compared_windows: list[str]
    """The claims and windows as the model and the lexical features read them (`Verifier.compared`)."""
    compared_context_words: frozenset[str]


@dataclass(frozen=True, slots=True)
class Evidence:
    """A claim's citation: the chunk of its best window, and that window's sentence closest to the claim."""

    chunk: Chunk
    span: tuple[int, int]
    text: str

    @classmethod
    def aligned(cls, alignment: Alignment, context: list[Chunk]) -> Evidence:
        """The citation the meaning layer gives: the claim's aligned sentence and that sentence's chunk."""
        chunk = context[alignment.chunk_index]
        return cls(chunk=chunk, span=alignment.span, text=chunk.text[alignment.span[0] : alignment.span[1]])

    @classmethod
    def copied(cls, match: VerbatimMatch, windows: list[Window], context: list[Chunk]) -> Evidence:
        """The citation of a claim copied from a window: the window's chunk and the sentence it was copied from."""
        window = windows[match.window]
        chunk = context[window.chunk_index]
        start, end = window.start + match.span[0], window.start + match.span[1]
        return cls(chunk=chunk, span=(start, end), text=chunk.text[start:end])


@dataclass(slots=True)
class ClaimState:
    """Everything verify() learns about one claim, filled in stage by stage (checks, scoring, combiner)."""

    position: int
    claim: Claim
    findings: list[tuple[CheckEffect, Finding]] = field(default_factory=list)
    scorable: bool = True
    """False when the claim alone is longer than half the model's window."""
    evidence: Evidence | None = None
    features: dict[str, float] = field(default_factory=dict)
    calibrated: float | None = None
    """The combiner's score, when the scorer has a combiner."""
    figures_match: bool = False
    """The claim states figures and the context contains every one (3,600 == 3600, five == 5)."""
    figures: tuple[Figure, ...] = ()
    """The figures the claim states, read once (`read_figures`) for the figure check and `figures_match`."""
    paraphrase: bool = False
    """The meaning layer's gate passed: the claim says what its aligned evidence sentence says (core.meaning)."""
    copied: VerbatimMatch | None = None
    """The window sentence the claim copies word for word, or nearly (core.verbatim); None: no such sentence."""

    def read_figures(self, index: ContextIndex) -> None:
        self.figures = claim_figures(self.claim.text)
        self.figures_match = bool(self.figures) and all(index.has(figure) for figure in self.figures)

    def run_checks(
        self, index: ContextIndex, chunk_ids: list[str], *, with_evidence: bool, opted_in: frozenset[str] = frozenset()
    ) -> None:
        """The claim checks of this stage (before or after scoring); an opt-in check only when `opted_in` names it."""
        evidence = self.evidence.text if self.evidence is not None else None
        item = ClaimCheckInput(self.claim, index, chunk_ids, evidence, self.figures)
        for check in CLAIM_CHECKS:
            if check.needs_evidence == with_evidence and (not check.opt_in or check.name in opted_in):
                self.findings.extend((check.effect, finding) for finding in check.run(item))

    def deciding(self) -> list[Finding]:
        """Findings of the verdict-deciding checks (figures, dates, hours, record attributes)."""
        return [finding for effect, finding in self.findings if effect is CheckEffect.VERDICT]

    @property
    def hard_verdicts(self) -> list[Verdict]:
        return [finding.verdict for finding in self.deciding() if finding.verdict is not None]

    @property
    def signalled(self) -> bool:
        return any(effect is CheckEffect.SIGNAL for effect, _ in self.findings)

    @property
    def verbatim(self) -> bool:
        """The claim copies a window sentence and no check found anything against it (notes aside): the copy
        decides it. The checks come first: a copy whose figures, negation or roles a check doubts is scored."""
        return self.copied is not None and all(effect is CheckEffect.NOTE for effect, _ in self.findings)


def claim_note(claim: str, *, fully_scored: bool, scorable: bool) -> str | None:
    """What a reader of the claim's verdict should know: what could not be scored, or read as a figure."""
    notes = [] if fully_scored else [_unscored_note(scorable)]
    notes += [f"{written!r} is no date or time that can be real: read as text" for written in unreadable_figures(claim)]
    return "; ".join(notes) or None


def _unscored_note(scorable: bool) -> str:
    if not scorable:
        return "not scored: the claim alone is longer than half the model's window; split it or use a longer model"
    return "not fully scored: the backend had to truncate some pairs"


def claim_features(state: ClaimState, scoring: Scoring, *, n_claims: int) -> dict[str, float]:
    """The claim-level features the hybrid combiner learns from. Names are stable: the combiner stores them."""
    claim, position, matrix, windows = state.claim, state.position, scoring.matrix, scoring.compared_windows
    row = matrix.support[position]
    best = int(np.argmax(row)) if len(row) else 0
    # Words as the model compared them (canonical figures, when on), so the lexical features agree with it.
    words = content_words(scoring.compared_claims[position])
    best_words = frozenset(content_words(windows[best])) if windows else frozenset()
    context_words = scoring.compared_context_words
    novel = [w for w in words if w not in context_words]
    names = [w.lower() for w in WORD_RE.findall(claim.text)[1:] if w[:1].isupper()]
    novel_names = [w for w in names if not any(part in context_words for part in content_words(w))]
    sorted_row = np.sort(row)[::-1]
    contradiction = matrix.contradiction if len(row) else None  # no windows: no contradiction to read
    deciding = state.deciding()
    return {
        "support": float(row[best]) if len(row) else 0.0,
        "support_second": float(sorted_row[1]) if len(sorted_row) > 1 else 0.0,
        "contradiction": float(contradiction[position].max()) if contradiction is not None else 0.0,
        "contradiction_at_best": float(contradiction[position, best]) if contradiction is not None else 0.0,
        "best_window_recall": sum(w in best_words for w in words) / len(words) if words else 1.0,
        "novel_word_share": len(novel) / len(words) if words else 0.0,
        "novel_names": float(len(novel_names)),
        # Named for figures, these count every verdict-deciding finding: figures, hours, record attributes.
        "figures_not_in_context": float(sum(f.verdict is Verdict.NOT_FOUND for f in deciding)),
        "figure_conflicts": float(sum(f.verdict is Verdict.CONTRADICTED for f in deciding)),
        # The opposites check's findings alone (a signal: counted in negation_flip too), recorded so a calibration
        # can tell what that check adds.
        "opposites": float(sum(finding.check == "opposite" for _, finding in state.findings)),
        "fabricated_citation": float(any(resolve_cited_id(i, scoring.chunk_ids) is None for i in claim.cited_ids)),
        "claim_words": float(len(words)),
        "position": position / max(n_claims - 1, 1),
        "n_claims": float(n_claims),
    }


def claim_evidence(claim: str, row: np.ndarray, windows: list[Window], context: list[Chunk]) -> Evidence | None:
    """The claim's citation: the chunk of its best window, and that window's sentence closest to the claim.
    None when there is no window at all (every claim of the answer is too long for the model's window)."""
    if not windows:
        return None
    window = windows[int(np.argmax(row))]  # the row has one score per window, and there is at least one
    chunk = context[window.chunk_index]
    span = best_sentence(claim, chunk.text, window.start, window.end)
    return Evidence(chunk=chunk, span=span, text=chunk.text[span[0] : span[1]])


def copy_of(claim: str, windows: list[Window], own: np.ndarray, row: np.ndarray) -> VerbatimMatch | None:
    """The window sentence the claim copies word for word, or nearly (core.verbatim), among the claim's own windows
    (`own`, a mask); of several, the one in the window the model scored highest (`row`)."""
    ranked = sorted(map(int, np.flatnonzero(own)), key=lambda j: -float(row[j]))
    return verbatim_match(claim, [window.text for window in windows], ranked)


def best_sentence(claim: str, text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence inside text[start:end] that shares the most content words with the claim."""
    claim_words = frozenset(content_words(claim))
    best, best_overlap = (start, end), -1
    for s, e in sentence_spans(text[start:end]):
        overlap = len(claim_words & frozenset(content_words(text[start + s : start + e])))
        if overlap > best_overlap:
            best, best_overlap = (start + s, start + e), overlap
    return best
