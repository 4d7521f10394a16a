"""OpenTelemetry spans around groundwire's steps (verify, judge, generate), when opentelemetry-api is installed
(the `otel` extra). Without it, or without a configured SDK, `traced` costs one dictionary lookup per call.

A span whose step returns a report carries its evaluation in the conventions observability tools read, next to
groundwire's own `groundwire.*` attributes (docs/observability.md):

- OpenInference (Phoenix, Arize): `openinference.span.kind` and one span evaluation, `evaluations.0.evaluation.*`
  (name, score, label, explanation, annotator_kind, metadata);
- OpenTelemetry GenAI: a `gen_ai.evaluation.result` event for the answer and one per claim (its verdict and score).

The score is the answer score (the weakest claim's, what routing reads), the label the decision (accept, escalate,
reject). Spans never carry the answer, the context or a claim's text: explanations count claims, and a claim's
event names it by its position in the answer.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from groundwire.core.types import ClaimResult, Report, Verdict

P = ParamSpec("P")
R = TypeVar("R")

# OpenInference semantic conventions (openinference-semantic-conventions, openinference.semconv.trace): the
# names are written out so that the core needs no package for them; tests/adapters/test_span_conventions.py
# checks each against the installed package.
OPENINFERENCE_SPAN_KIND = "openinference.span.kind"  # SpanAttributes.OPENINFERENCE_SPAN_KIND
EVALUATIONS = "evaluations"  # SpanAttributes.EVALUATIONS: a list, flattened as evaluations.<index>.<field>
EVALUATION_NAME = "evaluation.name"  # EvaluationAttributes.EVALUATION_NAME
EVALUATION_SCORE = "evaluation.score"  # EvaluationAttributes.EVALUATION_SCORE
EVALUATION_LABEL = "evaluation.label"  # EvaluationAttributes.EVALUATION_LABEL
EVALUATION_EXPLANATION = "evaluation.explanation"  # EvaluationAttributes.EVALUATION_EXPLANATION
EVALUATION_ANNOTATOR_KIND = "evaluation.annotator_kind"  # EvaluationAttributes.EVALUATION_ANNOTATOR_KIND
EVALUATION_METADATA = "evaluation.metadata"  # EvaluationAttributes.EVALUATION_METADATA (a JSON object string)
SPAN_KINDS = {"groundwire.verify": "EVALUATOR", "groundwire.judge": "EVALUATOR", "groundwire.generate": "CHAIN"}
"""OpenInferenceSpanKindValues per span: checking an answer is an evaluator's work; generating one, a chain's."""

# OpenTelemetry GenAI semantic conventions (opentelemetry-semantic-conventions,
# opentelemetry.semconv._incubating.attributes.gen_ai_attributes; the event is `gen_ai.evaluation.result` of
# the GenAI events model, EVENT_GEN_AI_EVALUATION_RESULT in the JavaScript package).
GEN_AI_EVALUATION_RESULT = "gen_ai.evaluation.result"
GEN_AI_EVALUATION_NAME = "gen_ai.evaluation.name"  # GEN_AI_EVALUATION_NAME
GEN_AI_EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"  # GEN_AI_EVALUATION_SCORE_VALUE
GEN_AI_EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"  # GEN_AI_EVALUATION_SCORE_LABEL
GEN_AI_EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"  # GEN_AI_EVALUATION_EXPLANATION

ANSWER_EVALUATION = "groundwire.grounding"
"""The evaluation's name for the answer: score = answer score, label = decision."""
CLAIM_EVALUATION = "groundwire.claim"
"""The evaluation's name for one claim: score = the claim's score, label = its verdict."""
OUTCOME_WORDS = {"accept": "pass", "reject": "fail", "escalate": "needs review"}
"""How an explanation opens, as the adapters' reasons do (docs/adapters.md)."""

Attribute = str | float | int | bool


@functools.cache
def _get_tracer() -> Any:
    """The tracer, looked up once (None when opentelemetry is not installed); `cache_clear()` looks again."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer("groundwire")


def traced(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Run the function inside a span `name`; a result with score / decision / claims is summarised on it, and
    its evaluation recorded as OpenInference attributes and GenAI `gen_ai.evaluation.result` events."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            tracer = _get_tracer()
            if tracer is None:
                return function(*args, **kwargs)
            kind = {OPENINFERENCE_SPAN_KIND: SPAN_KINDS[name]} if name in SPAN_KINDS else {}
            with tracer.start_as_current_span(name, attributes=kind) as span:
                result = function(*args, **kwargs)
                for key, value in _summary(result).items():
                    span.set_attribute(f"groundwire.{key}", value)
                if span.is_recording():
                    _record_evaluation(span, result)
                return result

        return wrapper

    return decorate


def _summary(result: object) -> dict[str, str | float | int | bool]:
    report = getattr(result, "report", result)  # a Generation carries its report
    out: dict[str, str | float | int | bool] = {}
    score = getattr(report, "score", None)
    if isinstance(score, float):
        out["score"] = score
    decision = getattr(report, "decision", None)
    if decision is not None:
        out["decision"] = str(getattr(decision, "value", decision))
    claims = getattr(report, "claims", None)
    if isinstance(claims, tuple):
        out["claims"] = len(claims)
    judge = getattr(report, "extra", {}).get("judge") if isinstance(getattr(report, "extra", None), dict) else None
    if isinstance(judge, dict):
        out["judge_calls"] = int(judge.get("calls", 0))
        out["judge_failed_calls"] = int(judge.get("failed_calls", 0))
    return out


def _record_evaluation(span: Any, result: object) -> None:
    """The report's evaluation on the span: OpenInference attributes, then the GenAI events."""
    evaluation = evaluation_of(getattr(result, "report", result))
    if evaluation is None:
        return
    prefix = f"{EVALUATIONS}.0."
    span.set_attributes({prefix + key: value for key, value in evaluation["openinference"].items()})
    span.add_event(GEN_AI_EVALUATION_RESULT, evaluation["answer_event"])
    for event in evaluation["claim_events"]:
        span.add_event(GEN_AI_EVALUATION_RESULT, event)


def evaluation_of(report: object) -> dict[str, Any] | None:
    """A report's evaluation as span attributes and events (None for a result that is not a report):
    {"openinference": {field: value}, "answer_event": {...}, "claim_events": [{...}, ...]}. No user text."""
    if not isinstance(report, Report):
        return None
    label = report.decision.value
    verdicts = [result.verdict for result in report.claims]
    explanation = explain(label, verdicts, report.score, abstained=report.abstained)
    metadata = {
        "supported_share": report.supported_share,
        "claims": len(verdicts),
        "verdicts": {verdict.value: verdicts.count(verdict) for verdict in Verdict if verdict in verdicts},
        "model_id": report.model_id,
    }
    judged = any(result.decided_by == "judge" for result in report.claims)
    openinference: dict[str, Attribute] = {
        EVALUATION_NAME: ANSWER_EVALUATION,
        EVALUATION_SCORE: report.score,
        EVALUATION_LABEL: label,
        EVALUATION_EXPLANATION: explanation,
        EVALUATION_ANNOTATOR_KIND: "LLM" if judged else "CODE",  # OpenInferenceAnnotatorKindValues
        EVALUATION_METADATA: json.dumps(metadata, sort_keys=True),
    }
    answer_event: dict[str, Attribute] = {
        GEN_AI_EVALUATION_NAME: ANSWER_EVALUATION,
        GEN_AI_EVALUATION_SCORE_VALUE: report.score,
        GEN_AI_EVALUATION_SCORE_LABEL: label,
        GEN_AI_EVALUATION_EXPLANATION: explanation,
    }
    claim_events = [_claim_event(index, result) for index, result in enumerate(report.claims)]
    return {"openinference": openinference, "answer_event": answer_event, "claim_events": claim_events}


def _claim_event(index: int, result: ClaimResult) -> dict[str, Attribute]:
    verdict, route = result.verdict.value, result.route.value
    event: dict[str, Attribute] = {
        GEN_AI_EVALUATION_NAME: CLAIM_EVALUATION,
        GEN_AI_EVALUATION_SCORE_VALUE: result.score,
        GEN_AI_EVALUATION_SCORE_LABEL: verdict,
        GEN_AI_EVALUATION_EXPLANATION: f"claim {index}: {verdict}, score {result.score:.2f}, route {route}, "
        f"decided by {result.decided_by}",
        "groundwire.claim.index": index,
        "groundwire.claim.route": route,
        "groundwire.claim.decided_by": result.decided_by,
    }
    if result.chunk_id is not None:  # the cited chunk's id, never its text
        event["groundwire.claim.chunk_id"] = result.chunk_id
    return event


def explain(decision: str, verdicts: list[Verdict], score: float, *, abstained: bool = False) -> str:
    """An explanation without user text: the outcome first, as the adapters' reasons start, then the counts.

    >>> explain("reject", [Verdict.SUPPORTED, Verdict.CONTRADICTED], 0.12)
    'fail: 1 of 2 claims are not supported by the context (1 contradicted); answer score 0.12'
    """
    head = OUTCOME_WORDS.get(decision, decision)
    if abstained:
        return f"{head}: the answer abstains (NOT_IN_CONTEXT); nothing is claimed"
    if not verdicts:
        return f"{head}: the answer makes no checkable claim; answer score {score:.2f}"
    missing = [verdict for verdict in verdicts if verdict is not Verdict.SUPPORTED]
    if not missing:
        every = f"every claim is supported by the context ({len(verdicts)} of {len(verdicts)})"
        return f"{head}: {every}; answer score {score:.2f}"
    counts = ", ".join(
        f"{missing.count(verdict)} {verdict.value.lower().replace('_', ' ')}"
        for verdict in Verdict
        if verdict in missing
    )
    return (
        f"{head}: {len(missing)} of {len(verdicts)} claims are not supported by the context ({counts}); "
        f"answer score {score:.2f}"
    )
