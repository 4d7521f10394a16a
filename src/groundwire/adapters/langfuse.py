"""groundwire's checks as Langfuse scores, through Langfuse's own SDK (langfuse >= 3, the OpenTelemetry-based one).

    from langfuse import Langfuse
    from groundwire.adapters.langfuse import check_and_score, log_scores

    langfuse = Langfuse()
    with langfuse.start_as_current_observation(name="rag") as span:
        answer = ...
        check_and_score(langfuse, answer, contexts, question)   # scores the current trace and observation

    log_scores(langfuse, verify_many(frame))                     # frame indexed by trace id: one pair per row

Each answer gets two scores, after the adapters' one rule (adapters/evaluations.py):
- `groundwire_supported_share` (NUMERIC): the share of supported claims (with `metric="score"`, the score is
  `groundwire_score`, the answer score, the weakest claim's); its comment is the reason (the outcome first: pass /
  fail / needs review, then the unsupported claims), its metadata the `route`, `outcome`, `passed`, `score`,
  `supported_share` and the claim count;
- `groundwire_route` (CATEGORICAL): accept, escalate or reject; "error" for a row verify_many could not check
  (that row gets no numeric score). With a `name=` of your own, the two are `name` and `name` + "_route".

The SDK sends scores in the background (POST /api/public/scores): call `langfuse.flush()` before a short script
ends.

groundwire's own spans (`groundwire.verify`, with the GenAI evaluation events) go through the client's tracer
provider while `check_and_score` runs, so they reach Langfuse also when the client was given one of its own
(`Langfuse(tracer_provider=tp)`); to send the spans of checks made outside it through that provider too, call
`groundwire.core.tracing.use_tracer_provider(tp)` (docs/observability.md).

A disabled client (`Langfuse()` without keys, as in local development and CI, or with tracing off) sends
nothing: the check still runs and its Assessment or Evaluation comes back, and each call logs that no score was
sent (INFO, logger `groundwire.adapters.langfuse`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Never, Unpack

from groundwire.adapters.common import (
    DEFAULT_METRIC,
    AdapterCheck,
    AdapterOptions,
    Assessment,
    Metric,
    refuse_check_options,
)
from groundwire.adapters.evaluations import Evaluation, from_assessment, from_frame
from groundwire.core.tracing import tracer_provider_scope
from groundwire.foundation.extras import optional_import

with optional_import("langfuse", needed_by=__name__):
    from langfuse import Langfuse

if TYPE_CHECKING:
    import pandas as pd
    from opentelemetry.trace import TracerProvider

    from groundwire.foundation.types import Chunk

logger = logging.getLogger(__name__)


def log_scores(langfuse: Langfuse, results: pd.DataFrame, *, claims: pd.DataFrame | None = None,
               metric: Metric = DEFAULT_METRIC, name: str | None = None, trace_ids: Sequence[str] | None = None,
               observation_ids: Sequence[str | None] | None = None, **refused: Never) -> list[Evaluation]:
    """Score each row of `verify_many(df)`'s result on its trace: the row's index label, or the matching item of
    `trace_ids`; `observation_ids` (one per row, None for the trace itself) scores an observation of it. A check
    option (`accept_at=`, `threshold=`...) is refused: it belongs to the verify_many() call that made `results`."""
    refuse_check_options("log_scores()", refused, ("claims", "metric", "name", "trace_ids", "observation_ids"))
    evaluations = from_frame(results, claims=claims, metric=metric, name=name, targets=trace_ids)
    observations = list(observation_ids) if observation_ids is not None else [None] * len(evaluations)
    if len(observations) != len(evaluations):
        raise ValueError(f"{len(observations)} observation ids for {len(evaluations)} results")
    if _disabled(langfuse):
        logger.info("Langfuse client is disabled (no keys, or tracing off): %d results not scored", len(evaluations))
        return evaluations
    for evaluation, observation in zip(evaluations, observations, strict=True):
        _send(langfuse, evaluation, evaluation.target, observation)
    return evaluations


def score_assessment(langfuse: Langfuse, assessment: Assessment, *, trace_id: str | None = None,
                     observation_id: str | None = None, name: str | None = None) -> Evaluation:
    """Score one adapter check on a trace (default: the current one) and, where given or current, an observation.
    With a disabled client, nothing is sent (a log line says so) and the Evaluation's target is `trace_id` or ""."""
    if _disabled(langfuse):
        logger.info("Langfuse client is disabled (no keys, or tracing off): %s not scored", assessment.outcome.value)
        return from_assessment(assessment, trace_id or "", name=name)
    if trace_id is None:
        trace_id = langfuse.get_current_trace_id()
        observation_id = observation_id or langfuse.get_current_observation_id()
    if not trace_id:
        raise ValueError("no trace to score: pass trace_id=, or call this inside a Langfuse observation")
    evaluation = from_assessment(assessment, trace_id, name=name)
    _send(langfuse, evaluation, trace_id, observation_id)
    return evaluation


def check_and_score(langfuse: Langfuse, answer: str, contexts: Sequence[Chunk | str], question: str | None = None,
                    *, check: AdapterCheck | None = None, trace_id: str | None = None,
                    observation_id: str | None = None, name: str | None = None,
                    response_id: str | None = None, **options: Unpack[AdapterOptions]) -> Assessment:
    """Check an answer (AdapterCheck: the one rule) and score it on the trace; the Assessment comes back. `options`
    as every adapter's (AdapterOptions), or `check`, made of them already. `response_id`: the id of the model
    response that wrote the answer, on groundwire's span and GenAI events."""
    if check is not None and options:
        raise ValueError(f"pass either check or its options ({', '.join(options)}), not both")
    with tracer_provider_scope(_tracer_provider(langfuse)):  # groundwire's spans go where the client's go
        assessment = (check or AdapterCheck("check_and_score()", **options)).run(
            answer, contexts, question, response_id=response_id
        )
    score_assessment(langfuse, assessment, trace_id=trace_id, observation_id=observation_id, name=name)
    return assessment


def _disabled(langfuse: Langfuse) -> bool:
    """A client that sends nothing: made without keys (the SDK then builds no resources, and its observations are
    no-op spans that no trace id can be read from), or with tracing disabled."""
    return getattr(langfuse, "_resources", None) is None or not getattr(langfuse, "_tracing_enabled", True)


def _tracer_provider(langfuse: Langfuse) -> TracerProvider | None:
    """The provider the client's spans go through (its `tracer_provider=`, or the one it made or found global);
    the SDK keeps it on its resources (langfuse 5.2), none for a disabled client."""
    return getattr(getattr(langfuse, "_resources", None), "tracer_provider", None)


def _send(langfuse: Langfuse, evaluation: Evaluation, trace_id: str, observation_id: str | None) -> None:
    if evaluation.value is not None:
        langfuse.create_score(name=evaluation.name, value=evaluation.value, data_type="NUMERIC", trace_id=trace_id,
                              observation_id=observation_id, comment=evaluation.explanation,
                              metadata=evaluation.metadata)
    langfuse.create_score(name=evaluation.route_name, value=evaluation.route, data_type="CATEGORICAL",
                          trace_id=trace_id, observation_id=observation_id, comment=evaluation.headline,
                          metadata=evaluation.metadata)
