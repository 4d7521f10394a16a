"""The vocabulary of groundwire: frozen dataclasses shared by every module.

Nothing here imports a model, a network client or a heavy dependency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol

REFUSAL_TOKEN = "NOT_IN_CONTEXT"
NO_CLAIMS_SHARE = 1.0

Thresholds = tuple[float, float]
"""(accept_at, reject_at): a support score at or above accept_at accepts; at or below reject_at rejects."""


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
    """Who set a claim's verdict (`ClaimResult.decided_by`); a plain string in the report's JSON."""

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
    """Contradiction probability at the cited chunk, where the backend gives one."""
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
    """The claim-level features the score was computed from (model, lexical, checks); see verify.claim_features."""
    unsupported_spans: tuple[tuple[int, int], ...] = ()
    """For a claim that is not SUPPORTED: (start, end) in the answer of its words found nowhere in the context,
    or the whole claim when every word occurs somewhere (see groundwire.core.spans)."""


@dataclass(frozen=True, slots=True)
class Report:
    """One answer's check: its score (the weakest claim's), its route, every claim's result, the answer-level
    findings and warnings, and the model that scored it. `to_dict()` is the JSON every surface writes."""

    answer: str
    score: float
    """Answer score: min over the scores of the claims that could be scored. An answer with no claims scores 1.0
    (nothing is asserted); a claim the model could not see at all is left out and the answer is escalated."""
    decision: Route
    claims: tuple[ClaimResult, ...]
    abstained: bool
    model_id: str
    timings: dict[str, float] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()
    """Answer-level output-validator findings (fabricated citations, misplaced refusal token...)."""
    warnings: tuple[str, ...] = ()
    question: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def grounded(self) -> bool:
        """Whether the answer is accepted as it is."""
        return self.decision is Route.ACCEPT

    @property
    def supported_share(self) -> float:
        """The share of claims that are SUPPORTED: what RAGAS calls faithfulness, shown next to `score` (the
        weakest claim) for comparison. An answer with no claims gets 1.0, as its score does."""
        if not self.claims:
            return NO_CLAIMS_SHARE
        return sum(result.verdict is Verdict.SUPPORTED for result in self.claims) / len(self.claims)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values (enums as their values), with `supported_share`."""
        data: dict[str, Any] = _jsonable(asdict(self)) | {"supported_share": self.supported_share}
        return data


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
