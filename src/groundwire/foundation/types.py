"""The vocabulary of groundwire: frozen dataclasses shared by every module.

Nothing here imports a model, a network client or a heavy dependency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol
from warnings import warn

REFUSAL_TOKEN = "NOT_IN_CONTEXT"
NO_CLAIMS_SHARE = 1.0

Thresholds = tuple[float, float]
"""(accept_at, reject_at): a support score at or above accept_at accepts; at or below reject_at rejects."""


def ordered(thresholds: Thresholds) -> Thresholds:
    """The one rule for a threshold pair, the settings' own, as a verifier resolves it (calibrated values in place
    of those not given) or as a profile records it: reject_at below accept_at. Returns the pair; raises ValueError
    otherwise."""
    accept_at, reject_at = thresholds
    if reject_at >= accept_at:
        raise ValueError(f"reject_at ({reject_at}) must be below accept_at ({accept_at})")
    return thresholds


class Verdict(StrEnum):
    """What is known about a claim. UNRESOLVED is the escalation band: some evidence, not enough to accept;
    NOT_FOUND says the context does not support the claim (its score is at or below the reject threshold, or a
    check found a figure the context does not state)."""

    SUPPORTED = "SUPPORTED"
    CONTRADICTED = "CONTRADICTED"
    NOT_FOUND = "NOT_FOUND"
    UNRESOLVED = "UNRESOLVED"


class Route(StrEnum):
    """Where an answer or a claim goes: accepted, escalated to the judge (or a reviewer), or rejected."""

    ACCEPT = "accept"
    ESCALATE = "escalate"
    REJECT = "reject"


class DecidedBy(StrEnum):
    """Who set a claim's verdict (`ClaimResult.decided_by`); a plain string in the report's JSON. A StrEnum, as
    `Verdict` and `Route` are: each member documents itself, and a member equals its string ("judge")."""

    SCORER = "scorer"
    """The scorer's score (through the combiner, where the scorer has one) against the thresholds."""
    CHECKS = "checks"
    """A verdict-deciding deterministic check: a figure, date, hour or record attribute the context contradicts or
    lacks."""
    MEANING = "meaning"
    """The meaning layer's paraphrase gate (core.meaning)."""
    VERBATIM = "verbatim"
    """The claim is in one window word for word, or nearly so (core.verbatim), and no check found anything."""
    JUDGE = "judge"
    """The LLM judge (llm.judge)."""


RouteMode = Literal["three-way", "decide"]
"""How a verifier routes ([verify] route): "three-way" accepts, escalates or rejects; "decide" accepts or rejects
at one threshold (decide_at), escalating nothing, for a check with no judge (docs/how-it-works.md "Three-way routing or decided
verdicts")."""


class ChunkType(StrEnum):
    """What a chunk's text is: prose, the transcript of an image, or a table."""

    TEXT = "text"
    IMAGE_TRANSCRIPT = "image_transcript"
    TABLE = "table"


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieved passage. `id` is what an answer cites ([S1], [c_ab12...])."""

    id: str
    text: str
    doc_id: str | None = None
    page: int | None = None
    type: str = ChunkType.TEXT.value


@dataclass(frozen=True, slots=True)
class Claim:
    """One atomic, self-contained statement taken from the answer.

    `span` is the (start, end) character range in the answer it came from (end exclusive);
    `sentence` is the full answer sentence, kept so a reader sees the claim in context.
    """

    text: str
    span: tuple[int, int]
    sentence: str
    cited_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Finding:
    """A deterministic check or output validator that fired.

    `verdict` is the verdict the check implies on its own (None for a mere signal).
    """

    check: str
    detail: str
    verdict: Verdict | None = None


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """One claim's outcome: its verdict, score and route, the chunk it cites and the evidence span, the checks'
    findings, and who decided it (the verifier or the judge)."""

    claim: Claim
    verdict: Verdict
    score: float
    """Effective support score in [0, 1] after deterministic checks; routing uses this."""
    support: float | None
    """The scorer's own support probability (max over chunks and windows); None if unscored."""
    contradiction: float | None
    """The largest contradiction probability over the claim's windows (any chunk, not only the cited one), where the
    backend gives one."""
    chunk_id: str | None
    """The argmax chunk: the claim's citation."""
    evidence_span: tuple[int, int] | None
    """(start, end) of the evidence sentence inside the cited chunk's text."""
    evidence: str | None
    checks: tuple[Finding, ...]
    route: Route
    scored: bool = True
    """False when some (window, claim) pair could not be scored, e.g. the claim alone overflows the model."""
    decided_by: DecidedBy = DecidedBy.SCORER
    """Who set the verdict (`DecidedBy`): "scorer", "checks", "meaning", "verbatim" or "judge"."""
    note: str | None = None
    features: dict[str, float] = field(default_factory=dict)
    """The features the score was computed from (model, lexical, checks), at the window it cites; see
    core.claim_state.claim_features."""
    other_windows: tuple[dict[str, float], ...] = ()
    """The features at the claim's other windows its score was the max over (`core.verdicts.best_window`): read
    where a check found something at its best window, so the cited window may be another. Empty otherwise; a
    calibration replays the choice from them (calibration.combine)."""
    unsupported_spans: tuple[tuple[int, int], ...] = ()
    """For a claim that is not SUPPORTED: (start, end) in the answer of its words found nowhere in the context,
    or the whole claim when every word occurs somewhere (see groundwire.core.spans)."""


@dataclass(frozen=True, slots=True)
class RoutedThresholds:
    """The thresholds an answer was routed by (`ReportMeta.thresholds`): its calibration's pair, and in decide mode
    (`[verify] route = "decide"`) the one threshold it was decided at."""

    accept_at: float
    reject_at: float
    decide_at: float | None = None
    """Only in decide mode: accept at or above it, reject below (None: three-way routing)."""


@dataclass(frozen=True, slots=True)
class SkippedSentence:
    """An answer sentence that was not checked, and why ("greeting_or_too_short", "filler", ...)."""

    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class CascadeStage:
    """One stage of a cascade (`escalate_to`): the model, its answer score and route, and its seconds."""

    model_id: str
    score: float
    route: Route
    seconds: float
    calibrated_after: str | None = None
    """For a later stage: the model id of the stage its thresholds were calibrated after (None: its own)."""


@dataclass(frozen=True, slots=True)
class JudgeOutcome:
    """The LLM judge on one escalated claim (`claim`, its index): its verdict, quote and reason, or the `error`
    that kept it from judging."""

    claim: int
    verdict: Verdict | None = None
    model_verdict: Verdict | None = None
    """The judge's own ruling before groundwire checked its quote (it may differ from `verdict`)."""
    quote: str | None = None
    chunk_id: str | None = None
    reason: str | None = None
    finding: str | None = None
    """The check its quote failed, if any ("confabulated_support", "fabricated_citation", ...)."""
    error: str | None = None
    """Why the claim was not judged (endpoint failure, unparseable reply); the other fields are then None."""


@dataclass(frozen=True, slots=True)
class JudgeSummary:
    """The judge's work on one answer (`ReportMeta.judge`): calls and their cost, the claims it decided, the claims
    it could not (`not_judged`), and every outcome."""

    calls: int
    failed_calls: int
    decided: tuple[int, ...]
    not_judged: tuple[int, ...]
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    http_requests: int
    outcomes: tuple[JudgeOutcome, ...]


@dataclass(frozen=True, slots=True)
class Consistency:
    """Self-consistency of a generated answer (`ReportMeta.consistency`): per claim, the share of the other
    samples that state it."""

    samples: int
    agreement: tuple[float, ...]
    mean: float


@dataclass(frozen=True, slots=True)
class LowConfidenceSpan:
    """A run of `answer[start:end]` whose tokens' least probability is `min_prob` (rounded to 4 places)."""

    start: int
    end: int
    min_prob: float
    text: str


@dataclass(frozen=True, slots=True)
class SelfRagSegment:
    """A Self-RAG segment with its own reflection tokens, next to the verifier's verdicts on the claims in it."""

    text: str
    span: tuple[int, int]
    retrieve: bool | None
    is_rel: str | None
    is_sup: str | None
    is_use: int | None
    verifier: tuple[Verdict, ...]


@dataclass(frozen=True, slots=True)
class ReportMeta:
    """How an answer was checked, beside its verdict (`Report.meta`). A field is None where it does not apply: an
    abstention is not split into sentences, an answer without claims is not scored, the judge did not run."""

    task: str | None = None
    """The kind of answer given or inferred ("qa", "summary", "data2text", "dialogue", "claim"); None: not given."""
    calibration: str | None = None
    """The calibration key the thresholds and combiner came from ("qa", "summary/long", ...); None: pooled."""
    thresholds: RoutedThresholds | None = None
    """What the answer was routed by, so a reader can tell why 0.04 escalates (reject_at 0) or 0.79 does."""
    skipped: tuple[SkippedSentence, ...] | None = None
    """Answer sentences not checked, and why; None for an abstention (not split into sentences)."""
    windows: int | None = None
    """Context windows built for the scorer."""
    pairs_scored: int | None = None
    """(window, claim) pairs the scorer ran on."""
    rendered_chunks: dict[str, str] | None = None
    """Chunks holding a JSON record, by id, as rendered to statements; evidence spans index this text."""
    cascade: tuple[CascadeStage, ...] | None = None
    """Every stage an escalated answer went through, first to last; None without a cascade or when the first
    stage decided."""
    judge: JudgeSummary | None = None
    """The LLM judge's calls, cost and outcomes; None when it did not run."""
    consistency: Consistency | None = None
    """Self-consistency across generated samples (`groundwire generate`)."""
    low_confidence_spans: tuple[LowConfidenceSpan, ...] | None = None
    """Spans of a generated answer whose token probabilities were low."""
    self_rag: tuple[SelfRagSegment, ...] | None = None
    """Self-RAG's own reflection, per segment, beside the verifier's verdicts."""
    repaired_from: str | None = None
    """For a repair that abstained: the answer it replaced."""
    profile: str | None = None
    """The domain profile that routed the answer; None: no profile."""
    profile_version: str | None = None
    """The version of that profile in force when the answer was routed ("v0002"); None: no profile, or a profile
    folder without versions."""


@dataclass(frozen=True, slots=True)
class Report:
    """One answer's check: its score (the weakest claim's), its route, every claim's result, the answer-level
    findings and warnings, the model that scored it and how it was checked (`meta`). `to_dict()` is the JSON every
    surface writes."""

    answer: str
    score: float
    """Answer score: min over the scores of the claims that could be scored. An answer with no claims scores 1.0
    (nothing is asserted); a claim the model could not see at all is left out and the answer is escalated."""
    route: Route
    """Where the answer goes: accepted, escalated or rejected (`ClaimResult.route` at claim level)."""
    claims: tuple[ClaimResult, ...]
    abstained: bool
    model_id: str
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per stage, and `total`."""
    findings: tuple[Finding, ...] = ()
    """Answer-level output-validator findings (fabricated citations, misplaced refusal token...)."""
    warnings: tuple[str, ...] = ()
    question: str | None = None
    meta: ReportMeta = field(default_factory=ReportMeta)

    @property
    def grounded(self) -> bool:
        """Whether the answer is accepted as it is."""
        return self.route is Route.ACCEPT

    @property
    def decision(self) -> Route:
        """Deprecated: `route`, its name at claim level too. Kept for one release (CHANGELOG.md)."""
        warn("Report.decision is deprecated: read Report.route", DeprecationWarning, stacklevel=2)
        return self.route

    @property
    def extra(self) -> dict[str, Any]:
        """Deprecated: `meta`, typed. Kept for one release (CHANGELOG.md): `meta` as the dict `extra` was
        (`legacy_extra`)."""
        warn("Report.extra is deprecated: read Report.meta", DeprecationWarning, stacklevel=2)
        return legacy_extra(self.meta)

    @property
    def supported_share(self) -> float:
        """The share of claims that are SUPPORTED: what RAGAS calls faithfulness, shown next to `score` (the
        weakest claim) for comparison. An answer with no claims gets 1.0, as its score does."""
        if not self.claims:
            return NO_CLAIMS_SHARE
        return sum(result.verdict is Verdict.SUPPORTED for result in self.claims) / len(self.claims)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values (enums as their values, tuples as lists, every `meta` field with null
        where it does not apply), with `supported_share`."""
        data: dict[str, Any] = _jsonable(asdict(self)) | {"supported_share": self.supported_share}
        return data


def legacy_extra(meta: ReportMeta) -> dict[str, Any]:
    """`meta` as JSON in the shape of the report's former `extra` dict: a key only where its field applies (so a
    three-way route's thresholds have no decide_at), and a cascade stage's route named "decision"."""

    def present(values: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in values.items() if value is not None}

    legacy = present(_jsonable(asdict(meta)))
    if "thresholds" in legacy:
        legacy["thresholds"] = present(legacy["thresholds"])
    if "cascade" in legacy:
        legacy["cascade"] = [
            {("decision" if key == "route" else key): value for key, value in present(stage).items()}
            for stage in legacy["cascade"]
        ]
    return legacy


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, StrEnum):
        return value.value
    return value


class AnswerCheck(Protocol):
    """How a component below `groundwire.pipeline` checks an answer of its own (the generator's attempts, repair's
    edits, the citations it adds): `pipeline.Checker`, a verifier bound to `pipeline.check`, the one path a check
    takes. The command, the service or the adapter that builds the verifier hands it in."""

    @property
    def model_id(self) -> str:
        """The scorer's model id."""
        ...

    @property
    def accept_at(self) -> float:
        """The accept threshold of the verifier's default calibration."""
        ...

    def __call__(
        self,
        answer: str,
        chunks: Sequence[Chunk],
        *,
        question: str | None = None,
        claims: Sequence[Claim] | None = None,
        task: str | None = None,
    ) -> Report:
        """The answer checked against the chunks, through `pipeline.check`."""
        ...
