"""The HTTP contract: request and response bodies of the /v1 endpoints.

Field limits live here so a malformed or oversized field gets a 422 that names it,
before any model runs. Reports travel as `Report.to_dict()` writes them, serialised once per check (`report_json`) and
described by the report's own dataclasses (groundwire.foundation.types, `ReportJson`), so /openapi.json documents
claims, verdicts, citations and thresholds.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    WrapSerializer,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError

from groundwire.foundation.types import Chunk, Report
from groundwire.llm.repair import RepairAction

# Generous per-field caps; the byte limit on the whole body (settings.max_body_bytes) and the per-request work
# limits (settings.max_claims, max_chunks, max_pairs; see limits.enforce_work_limits) are the real guards.
MAX_TEXT = 200_000
MAX_CHUNKS = 1_000
MAX_PAGE = 2**31 - 1
"""Page numbers are stored in a 32-bit column (PostgreSQL INTEGER); a larger one is a 422, not a 500."""


BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Unicode's Bidi_Control characters (ALM, LRM, RLM, the embeddings and overrides U+202A-U+202E, the isolates
U+2066-U+2069): in an id they reorder what a reader sees around them."""


def refused_id_character(text: str) -> tuple[int, str] | None:
    """The first character an id may not hold, and its index: a control character (Unicode category Cc, NUL, tab
    and newline included) or a bidi control; None for an id without one."""
    for index, char in enumerate(text):
        if char in BIDI_CONTROLS or unicodedata.category(char) == "Cc":
            return index, char
    return None


def _plain_id(what: str) -> Callable[[str], str]:
    """The validator of every id a request may store (chunk ids, doc ids) or name: a 422 that names the field and
    the character. Ids are stored as sent and shown back (the log, the review queue, the page, citations), where a
    NUL or a right-to-left override would hide or reorder what a reader sees, so such an id is refused, not
    cleaned: a cleaned id would no longer be the caller's."""

    def check(value: str) -> str:
        found = refused_id_character(value)
        if found is None:
            return value
        index, char = found
        kind = "bidi control" if char in BIDI_CONTROLS else "control character"
        name = unicodedata.name(char, "")
        raise PydanticCustomError(
            "id_character",
            "{what} contains {kind} {code}{name} at index {index}; ids may not hold control characters "
            "(Unicode Cc, NUL included) or bidi controls",
            {"what": what, "kind": kind, "code": f"U+{ord(char):04X}", "name": f" ({name})" if name else "",
             "index": index})

    return check


# Every id field of a request is one of these (tests/service/test_service_ids.py checks that none is a bare str).
ChunkId = Annotated[str, AfterValidator(_plain_id("chunk id"))]
DocId = Annotated[str, AfterValidator(_plain_id("document id"))]
RequestId = Annotated[str, AfterValidator(_plain_id("request id"))]


class _Body(BaseModel):
    # A misspelt field is an error, not silently ignored; NaN and Infinity (which Python's JSON parser
    # accepts) are refused, since they could not be written back out as JSON. strict: no coercion that hides a
    # mistake ("page": true is not page 1, "judge": "no" is not a bool, 3 is not the string "3").
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)


class ChunkIn(_Body):
    id: ChunkId = Field(min_length=1, max_length=200)
    text: str = Field(min_length=1, max_length=MAX_TEXT)
    doc_id: DocId | None = Field(None, max_length=500)
    page: int | None = Field(None, ge=1, le=MAX_PAGE)
    """1-based, as at ingest: page 0 is refused (422) everywhere; null for a source without pages."""
    type: Literal["text", "image_transcript", "table"] = "text"
    score: float | None = None
    """The retriever's score for this chunk, logged with the request."""


class _WithContext(_Body):
    chunks: list[ChunkIn] | None = Field(None, max_length=MAX_CHUNKS)
    """The retrieved chunks, as sent to the generator."""
    doc_ids: list[DocId] | None = Field(None, max_length=MAX_CHUNKS)
    """Or: use the chunks of these documents ingested earlier in the caller's scope."""
    question: str | None = Field(None, max_length=MAX_TEXT)

    @model_validator(mode="after")
    def _one_context(self) -> _WithContext:
        if (self.chunks is None) == (self.doc_ids is None):
            raise ValueError("give exactly one of 'chunks' (the retrieved passages) or 'doc_ids' (ingested documents)")
        if self.chunks is not None:
            ids = [chunk.id for chunk in self.chunks]
            if len(set(ids)) != len(ids):
                raise ValueError("chunk ids must be unique within a request")
        return self


class VerifyRequest(_WithContext):
    answer: str = Field(max_length=MAX_TEXT)
    require_citations: bool = False
    judge: bool = False
    """Send claims in the escalation band to the LLM judge (needs the service started with --llm)."""
    task: Literal["qa", "summary", "data2text", "dialogue", "claim"] | None = None
    """The kind of answer, which selects the verifier's calibration for it; by default a JSON context is data2text."""


class RepairRequest(VerifyRequest):
    pass


class GenerateRequest(_WithContext):
    question: str = Field(min_length=1, max_length=MAX_TEXT)
    use_cache: bool = True


class DocumentIn(_Body):
    doc_id: DocId = Field(min_length=1, max_length=500)
    title: str = Field("", max_length=2_000)
    page: int | None = Field(None, ge=1, le=MAX_PAGE)
    """1-based; null for a source without pages (cited at document level)."""
    type: Literal["text", "image_transcript", "table"] = "text"
    text: str = Field(min_length=1, max_length=MAX_TEXT)


class IngestRequest(_Body):
    documents: list[DocumentIn] = Field(min_length=1, max_length=MAX_CHUNKS)


MAX_MARKED_CLAIMS = 1_000


class FeedbackRequest(_Body):
    request_id: RequestId = Field(min_length=1, max_length=100)
    thumbs: Literal["up", "down"] | None = None
    correction: str | None = Field(None, max_length=MAX_TEXT)
    faithful: bool | None = None
    """The reviewer's verdict: true when the context supports the whole answer, false when it does not. The newest
    verdict on a request is the one in force (the label `groundwire adapt --from-log` reads); earlier ones are kept."""
    unfaithful_claims: list[Annotated[int, Field(ge=0)]] | None = Field(None, max_length=MAX_MARKED_CLAIMS)
    """With faithful=false, optionally: the claims that are not faithful, as 0-based indexes into the request's
    `claims` (as GET /v1/requests/{id} and the review queue list them)."""

    @model_validator(mode="after")
    def _something(self) -> FeedbackRequest:
        if self.thumbs is None and not self.correction and self.faithful is None:
            raise ValueError("feedback needs 'thumbs' ('up' or 'down'), 'correction' text, a verdict ('faithful': "
                             "true or false), or several of them")
        if self.unfaithful_claims and self.faithful is not False:
            raise ValueError("'unfaithful_claims' marks claims of an answer that is not faithful: send 'faithful': "
                             "false with them")
        if self.unfaithful_claims and len(set(self.unfaithful_claims)) != len(self.unfaithful_claims):
            raise ValueError("'unfaithful_claims' names a claim twice")
        return self


class Review(BaseModel):
    queued: bool
    reasons: list[str]


class IngestedChunk(BaseModel):
    """A current chunk of an ingested document, with its durable cite id. The field order is the JSON's."""

    id: str
    doc_id: str
    title: str
    page: int | None
    type: str
    text: str


def _report_with_share(report: Report, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
    return {**handler(report), "supported_share": report.supported_share}


class _SupportedShareSchema:
    """The report's JSON has `supported_share` beside the dataclass's fields (as `Report.to_dict()` has): the
    schema says so too."""

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        # The schema of the dataclass itself (its serializer, which adds the share, would be described as a bare
        # object), and the share added to it.
        described = handler({key: value for key, value in schema.items() if key != "serialization"})
        target = handler.resolve_ref_schema(described)
        target["properties"]["supported_share"] = {
            "type": "number", "title": "Supported Share",
            "description": "The share of claims that are SUPPORTED (RAGAS's faithfulness), beside `score`."}
        target["required"] = list(target["properties"])  # every field is always sent
        return described


ReportJson = Annotated[Report, WrapSerializer(_report_with_share), _SupportedShareSchema()]
"""A report in a response: the report's own dataclasses (groundwire.foundation.types) describe it in /openapi.json,
and it is serialised as `Report.to_dict()` writes it (tests/service/test_service_schema.py checks both)."""

REPORT_JSON: TypeAdapter[Report] = TypeAdapter(ReportJson)


def report_json(report: Report) -> dict[str, Any]:
    """The report as a response sends it and the request log keeps it: serialised once per check, and that one
    dump is both the response's `report` and the log row's."""
    dumped: dict[str, Any] = REPORT_JSON.dump_python(report, mode="json")
    return dumped


def chunks_json(chunks: Sequence[Chunk]) -> list[dict[str, Any]]:
    """The chunks an answer was checked against, as a response lists them (`Chunk`'s fields, in order)."""
    return [dataclasses.asdict(chunk) for chunk in chunks]


class _Out(BaseModel):
    """A response body. The report's dataclasses' attribute docstrings become the schema's descriptions, and every
    field is required in the responses' schema (a field with a default is always sent)."""

    model_config = ConfigDict(use_attribute_docstrings=True, json_schema_serialization_defaults_required=True)


class RepairedOut(_Out):
    """`Repaired.to_dict()` (groundwire.llm.repair) and a one-line `summary`."""

    answer: str
    abstained: bool
    surviving_share: float
    actions: list[RepairAction]
    report: ReportJson
    """The repaired answer, checked again."""
    original_score: float
    summary: str


class VerifyResponse(_Out):
    request_id: str
    report: ReportJson
    """One answer's check (`Report.to_dict()`): its score and route, every claim's verdict, score, citation
    (`chunk_id`) and evidence, and how it was checked (`meta`: calibration, thresholds, cascade...)."""
    review: Review
    chunks: list[Chunk]
    """The chunks the answer was checked against (so a page can show the evidence span)."""


class RepairResponse(VerifyResponse):
    repaired: RepairedOut


class GenerateResponse(_Out):
    request_id: str
    answer: str
    cached: bool
    report: ReportJson | None
    review: Review
    detail: dict[str, Any] = Field(default_factory=dict)
    """`Generation.to_dict()` less its report (groundwire.llm.generate); a cached answer adds `cache`."""


class IngestResponse(BaseModel):
    doc_set_version: str
    chunks: list[IngestedChunk]
    """Every current chunk of the ingested documents, with its durable cite id."""
    changed_doc_ids: list[str]
    retired_ids: list[str]
    cache_invalidated: int


class MarkedClaimOut(BaseModel):
    index: int
    """0-based, into the request's `claims`."""
    text: str
    """The claim's text as the request's report lists it."""


class VerdictOut(BaseModel):
    """A reviewer's verdict on a logged request."""

    id: str
    faithful: bool
    unfaithful_claims: list[MarkedClaimOut]
    created_at: str


class FeedbackResponse(BaseModel):
    feedback_id: str | None
    """The thumbs and correction's row; null when the review gave only a verdict."""
    request_id: str
    verdict: VerdictOut | None = None
    """The verdict recorded, now the one in force; null when the review gave none."""
    replaces: str | None = None
    """The id of the verdict in force before this one (kept in the request's `verdicts`, no longer in force)."""


class RequestList(BaseModel):
    requests: list[dict[str, Any]]
    """The newest logged requests first, each summarised (a failed request adds its status, route and error)."""


class ReviewQueue(BaseModel):
    threshold: float | None
    """`--review-threshold`: a score below it is a reason to queue (`low_score`); None: none."""
    patterns: list[str]
    order: Literal["teach", "arrival"]
    audit_share: float
    """The share of accepted and rejected answers queued as an audit (by a hash of the request id)."""
    total: int
    """Queued requests in all (of the newest `review_window` unreviewed ones); `items` holds the first `limit`."""
    items: list[dict[str, Any]]
    """The queued requests without feedback or a verdict, summarised as in /v1/requests, in `order`, each with its
    `claims` (index, text, verdict, score, chunk_id, evidence: the sentence it was checked against, lacking: the
    [start, end) offsets into its text of the words and figures the evidence lacks) for a reviewer to mark, its
    `reason` ("escalated", "audit", "failure", "high_risk", "validator", "low_score": what placed it), every
    `reasons` code, its `position` (1 = first) and the teach order's components `teach` {scarcity, novelty,
    total} (evaluation/review_order.py)."""


class ScorePoint(BaseModel):
    created_at: str | None
    score: float


class EvalSummary(BaseModel):
    """The eval-loop dashboard: its metrics are `groundwire.evaluation.evalloop`'s, flattened one level."""

    metrics: dict[str, Any]
    releases: list[dict[str, Any]]
    segments: list[dict[str, Any]]
    by_day: dict[str, Any]
    series: list[ScorePoint]
    failure_examples: list[dict[str, Any]]
    history: list[dict[str, Any]]
    meta: dict[str, Any]
    labels: dict[str, Any] | None = None
    """The scope's reviewers' labels (per task and class) and what `groundwire adapt --from-log` would fit on them,
    or its refusal with how many more labels it needs (`groundwire.evaluation.labels.LabelsSection.to_dict`)."""


class HealthResponse(BaseModel):
    status: Literal["ok"]
    model_id: str | None
    model_form: str | None = None
    """The form the model runs in ("int8", or "fp32" on a CPU without VNNI where that is faster: `groundwire
    doctor`); None for a scorer without forms."""
    model_loads: int
    release: str
    store: str


class ErrorDetail(BaseModel):
    status: int
    code: str
    message: str
    details: Any = None


class ErrorResponse(BaseModel):
    error: ErrorDetail
