"""One claim through one check: the state the verifier fills in stage by stage (checks, scoring, combiner),
the pair matrix it reads, its evidence (citation and sentence), its note, and the features the combiner learns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from groundwire.core.cancel import checkpoint
from groundwire.core.checks import CLAIM_CHECKS, CheckEffect, ClaimCheckInput
from groundwire.core.checks.citations import resolve_cited_id
from groundwire.core.checks.context import ContextIndex
from groundwire.core.figures import Figure, claim_figures, unreadable_figures
from groundwire.core.meaning import Alignment, meaning_features, paraphrase
from groundwire.core.verbatim import VerbatimMatch, verbatim_match
from groundwire.core.verdicts import WindowCaps
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


Findings = list[tuple[CheckEffect, Finding]]


@dataclass(slots=True)
class WindowReading:
    """The claim read at one of its windows: that window's evidence sentence, the findings that stand against the
    claim there (the context-wide ones and the evidence checks' on that sentence), and the features the score is
    computed from. A claim's score is the max over its readings, each capped by its own findings (`best_window`)."""

    window: int
    """The index of the window in the answer's windows (`Scoring.windows`); -1: the claim has no window at all."""
    evidence: Evidence | None
    findings: Findings
    features: dict[str, float] = field(default_factory=dict)
    calibrated: float | None = None
    """The combiner's score of `features`, when the scorer has a combiner."""
    paraphrase: bool = False


def deciding(findings: Findings) -> list[Finding]:
    """Findings of the verdict-deciding checks (figures, dates, hours, record attributes)."""
    return [finding for effect, finding in findings if effect is CheckEffect.VERDICT]


def signalled(findings: Findings) -> bool:
    """A finding is evidence against the claim, not proof (negation, opposites, entities): it caps mid-band."""
    return any(effect is CheckEffect.SIGNAL for effect, _ in findings)


def window_caps(features: Mapping[str, float], *, gate: bool = True) -> WindowCaps:
    """What caps (or lifts) a reading's score, read from its features, so that the verifier and a replay of cached
    features (calibration.combine) cap alike. `gate`: the paraphrase gate lifts (a replay of a recipe without the
    meaning layer passes False; the verifier records the gate's feature only with the meaning layer on)."""
    return WindowCaps(
        hard=features.get("figures_not_in_context", 0.0) + features.get("figure_conflicts", 0.0) > 0,
        negation=features.get("negation_flip", 0.0) > 0,
        contradiction=features.get("contradiction_at_best", 0.0),
        paraphrase=gate and features.get("paraphrase", 0.0) > 0,
    )


@dataclass(slots=True)
class ClaimState:
    """Everything verify() learns about one claim, filled in stage by stage (checks, scoring, combiner)."""

    position: int
    claim: Claim
    findings: Findings = field(default_factory=list)
    """Before scoring, the context-wide findings (figures); after, with those of the reading the score comes from."""
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
    readings: list[WindowReading] = field(default_factory=list)
    """The claim read at its best window and, where a check found something there, at the next best ones."""
    other_windows: tuple[dict[str, float], ...] = ()
    """The features of the readings the score does not come from (what a calibration replays)."""

    def read_figures(self, index: ContextIndex) -> None:
        self.figures = claim_figures(self.claim.text)
        self.figures_match = bool(self.figures) and all(index.has(figure) for figure in self.figures)

    def run_checks(self, index: ContextIndex, chunk_ids: list[str], *, opted_in: frozenset[str] = frozenset()) -> None:
        """The checks that read the context alone (before scoring); an opt-in check only when `opted_in` names it."""
        self.findings.extend(self._checked(index, chunk_ids, None, after_scoring=False, opted_in=opted_in))

    def read_at(
        self,
        window: int,
        evidence: Evidence | None,
        index: ContextIndex,
        chunk_ids: list[str],
        *,
        opted_in: frozenset[str] = frozenset(),
    ) -> WindowReading:
        """The claim read at one window: the context-wide findings and the evidence checks' on `evidence`."""
        text = evidence.text if evidence is not None else None
        found = self._checked(index, chunk_ids, text, after_scoring=True, opted_in=opted_in)
        return WindowReading(window, evidence, [*self.findings, *found])

    def read_windows(
        self,
        aligned: Alignment | None,
        scoring: Scoring,
        own: np.ndarray,
        index: ContextIndex,
        *,
        describe: Callable[[WindowReading], None],
        opted_in: frozenset[str] = frozenset(),
    ) -> list[WindowReading]:
        """The claim read at its best window (the model's argmax; its evidence the sentence the claim copies, or the
        one the meaning layer aligns, where there is one) and, while a check finds something against every reading
        so far, at its next best windows of its own (`own`, a mask), best-supported first, until one where nothing
        does. Of the windows whose findings cap alike, the best-supported gives the best capped score, so one
        reading of each kind is kept.

        The meaning layer's sentence is the claim's, not one window's: with it, the claim has that one reading.
        `describe` fills in a reading's features, from which its caps are read (`window_caps`)."""
        windows, context = scoring.windows, scoring.context
        row = scoring.matrix.support[self.position]

        def read(window: int, evidence: Evidence | None) -> WindowReading:
            reading = self.read_at(window, evidence, index, scoring.chunk_ids, opted_in=opted_in)
            describe(reading)
            return reading

        if not windows:  # every claim of the answer is too long for the model's window
            return [read(-1, None)]
        top = int(np.argmax(row))
        self.copied = copy_of(self.claim.text, windows, own, row)
        if self.copied is not None:  # a copied claim cites the sentence it copies
            first = read(top, Evidence.copied(self.copied, windows, context))
        elif aligned is not None:
            return [read(top, Evidence.aligned(aligned, context))]
        else:
            first = read(top, claim_evidence(self.claim.text, windows[top], context))
        readings, kinds = [first], {window_caps(first.features).kind}
        for window in sorted(map(int, np.flatnonzero(own)), key=lambda j: -float(row[j])):
            if "none" in kinds:
                break
            if window == top:
                continue
            checkpoint()  # a reading at a time: a claim read at many windows stops at the time budget
            reading = read(window, claim_evidence(self.claim.text, windows[window], context))
            if (kind := window_caps(reading.features).kind) not in kinds:
                readings.append(reading)
                kinds.add(kind)
        return readings

    def _checked(
        self,
        index: ContextIndex,
        chunk_ids: list[str],
        evidence: str | None,
        *,
        after_scoring: bool,
        opted_in: frozenset[str],
    ) -> Findings:
        """The findings of one stage's checks: before scoring, those of the context alone; after, those that read
        the evidence sentence (`evidence`, None where there is none)."""
        item = ClaimCheckInput(self.claim, index, chunk_ids, evidence, self.figures)
        return [
            (check.effect, finding)
            for check in CLAIM_CHECKS
            if check.needs_evidence == after_scoring and (not check.opt_in or check.name in opted_in)
            for finding in check.run(item)
        ]

    def choose(self, reading: WindowReading) -> None:
        """The reading the claim's score comes from: its evidence, findings and features become the claim's."""
        self.evidence, self.findings, self.features = reading.evidence, reading.findings, reading.features
        self.calibrated, self.paraphrase = reading.calibrated, reading.paraphrase
        self.other_windows = tuple(other.features for other in self.readings if other is not reading)
        if reading is not self.readings[0]:
            self.copied = None  # the copy is the first reading's evidence: not the one the claim now cites

    def deciding(self) -> list[Finding]:
        """Findings of the verdict-deciding checks (figures, dates, hours, record attributes)."""
        return deciding(self.findings)

    @property
    def hard_verdicts(self) -> list[Verdict]:
        return [finding.verdict for finding in self.deciding() if finding.verdict is not None]

    @property
    def signalled(self) -> bool:
        return signalled(self.findings)

    @property
    def found_against(self) -> bool:
        """A deciding finding stands against the claim at its chosen reading (a figure, date, hours or record attribute
        the context lacks or contradicts, or a negation the scorer reads as a contradiction): what the reject guard
        asks for before a REJECT (core.routing.Router.reject_needs_finding)."""
        return window_caps(self.features).kind == "reject"

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


def names_in(claim: str) -> list[list[str]]:
    """The content words of each capitalised word after the claim's first: the names a context must hold. In a
    claim written in capitals (a heading, a shouted line) capitals mark no name, and a figure ("9AM", which
    canonical figures rewrite in the context) is the figure checks' to judge, not a name. A capitalised stopword
    ("The" of "The Scissor Sisters") has no content word and counts as a name the context lacks, as the shipped
    combiner was fitted: dropping those too moved 55 dev routes, 12 of them hallucinated answers to ACCEPT
    (results/RESULTS.md, issue 49)."""
    if _written_in_capitals(claim):
        return []
    words = (w for w in WORD_RE.findall(claim)[1:] if w[:1].isupper() and not any(c.isdigit() for c in w))
    return [content_words(w) for w in words]


def _written_in_capitals(claim: str) -> bool:
    letters = [c for c in claim if c.isalpha()]
    return len(letters) >= 8 and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def claim_features(state: ClaimState, reading: WindowReading, scoring: Scoring, *, n_claims: int) -> dict[str, float]:
    """The features the hybrid combiner learns from, of the claim read at one window (`reading`): the model's
    support and contradiction there, that window's word recall and the findings of that reading; the rest is the
    claim's (its novel words, its largest contradiction anywhere). Names are stable: the combiner stores them."""
    claim, position, matrix, windows = state.claim, state.position, scoring.matrix, scoring.compared_windows
    row = matrix.support[position]
    best = max(reading.window, 0)
    # Words as the model compared them (canonical figures, when on), so the lexical features agree with it.
    words = content_words(scoring.compared_claims[position])
    best_words = frozenset(content_words(windows[best])) if windows else frozenset()
    context_words = scoring.compared_context_words
    novel = [w for w in words if w not in context_words]
    novel_names = [name for name in names_in(claim.text) if not any(part in context_words for part in name)]
    sorted_row = np.sort(row)[::-1]
    contradiction = matrix.contradiction if len(row) else None  # no windows: no contradiction to read
    decided = deciding(reading.findings)
    return {
        "support": float(row[best]) if len(row) else 0.0,
        "support_second": float(sorted_row[1]) if len(sorted_row) > 1 else 0.0,
        "contradiction": float(contradiction[position].max()) if contradiction is not None else 0.0,
        "contradiction_at_best": float(contradiction[position, best]) if contradiction is not None else 0.0,
        "best_window_recall": sum(w in best_words for w in words) / len(words) if words else 1.0,
        "novel_word_share": len(novel) / len(words) if words else 0.0,
        "novel_names": float(len(novel_names)),
        # Named for figures, these count every verdict-deciding finding: figures, hours, record attributes.
        "figures_not_in_context": float(sum(f.verdict is Verdict.NOT_FOUND for f in decided)),
        "figure_conflicts": float(sum(f.verdict is Verdict.CONTRADICTED for f in decided)),
        # The opposites check's findings alone (a signal: counted in negation_flip too), recorded so a calibration
        # can tell what that check adds.
        "opposites": float(sum(finding.check == "opposite" for _, finding in reading.findings)),
        # Any signal (negation, opposites, moved figures, entities): the name is the first signal's.
        "negation_flip": float(signalled(reading.findings)),
        "fabricated_citation": float(any(resolve_cited_id(i, scoring.chunk_ids) is None for i in claim.cited_ids)),
        "claim_words": float(len(words)),
        "position": position / max(n_claims - 1, 1),
        "n_claims": float(n_claims),
    }


def describe(
    state: ClaimState,
    reading: WindowReading,
    *,
    scoring: Scoring,
    aligned: Alignment | None,
    lexical_support: float,
    n_claims: int,
    meaning: bool,
) -> None:
    """A reading's features (and, with the meaning layer on, its paraphrase gate), from which it is scored and
    capped; `lexical_support` is the claim's (the lexical baseline's best over its windows)."""
    reading.features = claim_features(state, reading, scoring, n_claims=n_claims) | {"lexical_support": lexical_support}
    if meaning:  # one reading, at the sentence the meaning layer aligned
        figures_ok = not state.figures or state.figures_match
        reading.paraphrase = paraphrase(aligned, findings=bool(reading.findings), figures_ok=figures_ok)
        reading.features |= meaning_features(aligned, gate=reading.paraphrase)


def claim_evidence(claim: str, window: Window, context: list[Chunk]) -> Evidence:
    """The claim's evidence at one window: the window's chunk, and its sentence closest to the claim."""
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
