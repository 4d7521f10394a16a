"""groundwire's checks as Phoenix span annotations, through Phoenix's own client (arize-phoenix-client).

    from phoenix.client import Client
    from groundwire import verify_many
    from groundwire.adapters.phoenix import log_evaluations

    frame = ...                          # answer / context (/ question) per span, indexed by span id
    results, claims = verify_many(frame, claims=True)
    log_evaluations(Client(), results, claims=claims)   # two annotations per span

Each span gets two annotations, after the adapters' one rule (adapters/evaluations.py), as Langfuse gets two scores:
- `groundwire_supported_share`: score = the share of supported claims (with `metric="score"`, the annotation is
  `groundwire_score` and its score the answer score, the weakest claim's), label = the route (accept / escalate /
  reject), explanation = the outcome first (pass / fail / needs review) and, given the claims frame, the
  unsupported claims; metadata holds the route, the outcome, `passed`, `score`, `supported_share` and the claim
  count;
- `groundwire_route`: the route as a label alone, with the explanation's first line. Phoenix's
  span list shows an annotation's score when it has one and its label otherwise, so this is the chip that tells
  an escalated answer from a rejected one of the same score. A row verify_many could not check gets only this
  one, labelled "error", with the reason.

Annotator kind CODE: groundwire's check calls no LLM. groundwire's own `groundwire.verify` spans carry the same
evaluation as OpenInference attributes (`evaluations.0.evaluation.*`, core/tracing.py); Phoenix 20 shows those as
span attributes, and this module is how a result becomes an annotation on the span you choose (your RAG chain's,
usually).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Never

from groundwire.adapters.common import DEFAULT_METRIC, Metric, refuse_check_options
from groundwire.adapters.evaluations import Evaluation, from_frame
from groundwire.foundation.extras import optional_import

with optional_import("phoenix", needed_by=__name__):
    from phoenix.client import Client

if TYPE_CHECKING:
    import pandas as pd
    from phoenix.client.__generated__.v1 import AnnotationResult, SpanAnnotationData

AnnotatorKind = Literal["LLM", "CODE", "HUMAN"]
_LOG_KEYWORDS = ("claims", "metric", "name", "span_ids", "annotator_kind", "identifier")


def span_annotations(results: pd.DataFrame, *, claims: pd.DataFrame | None = None,
                     metric: Metric = DEFAULT_METRIC, name: str | None = None,
                     span_ids: Sequence[str] | None = None, annotator_kind: AnnotatorKind = "CODE",
                     identifier: str | None = None, **refused: Never) -> list[SpanAnnotationData]:
    """verify_many's results as Phoenix span annotations (SpanAnnotationData), two per row (one for a row that was
    not checked): the span is the row's index label, or the matching item of `span_ids`. `identifier` lets a later
    run replace these annotations (Phoenix keeps one annotation per span, name and identifier). `name`: the
    value's annotation, its route's then `name` + "_route" (None: named after the quantity, and
    `groundwire_route`)."""
    refuse_check_options("span_annotations()", refused, _LOG_KEYWORDS)
    return [annotation
            for evaluation in from_frame(results, claims=claims, metric=metric, name=name, targets=span_ids)
            for annotation in _annotations(evaluation, annotator_kind, identifier)]


def log_evaluations(client: Client, results: pd.DataFrame, *, claims: pd.DataFrame | None = None,
                    metric: Metric = DEFAULT_METRIC, name: str | None = None,
                    span_ids: Sequence[str] | None = None, annotator_kind: AnnotatorKind = "CODE",
                    identifier: str | None = None, sync: bool = True, **refused: Never) -> list[str]:
    """Log verify_many's results on their spans with `client.spans.log_span_annotations`; returns the ids Phoenix
    gave the annotations (with `sync=False` Phoenix inserts them later and returns none). A check option
    (`accept_at=`, `threshold=`...) is refused: it belongs to the verify_many() call that made `results`."""
    refuse_check_options("log_evaluations()", refused, (*_LOG_KEYWORDS, "sync"))
    annotations = span_annotations(results, claims=claims, metric=metric, name=name, span_ids=span_ids,
                                   annotator_kind=annotator_kind, identifier=identifier)
    if not annotations:
        return []
    inserted = client.spans.log_span_annotations(span_annotations=annotations, sync=sync)
    return [item["id"] for item in inserted or []]


def _annotations(evaluation: Evaluation, annotator_kind: AnnotatorKind,
                 identifier: str | None) -> list[SpanAnnotationData]:
    """The scored annotation (when the row was checked), then the route's, a label without a score."""
    results: list[tuple[str, AnnotationResult]] = []
    if evaluation.value is not None:
        results.append((evaluation.name, {"label": evaluation.route, "score": evaluation.value,
                                          "explanation": evaluation.explanation}))
    results.append((evaluation.route_name, {"label": evaluation.route, "explanation": evaluation.headline}))
    annotations: list[SpanAnnotationData] = []
    for name, result in results:
        annotation: SpanAnnotationData = {"name": name, "annotator_kind": annotator_kind, "span_id": evaluation.target,
                                          "result": result, "metadata": evaluation.metadata}
        if identifier is not None:
            annotation["identifier"] = identifier
        annotations.append(annotation)
    return annotations
