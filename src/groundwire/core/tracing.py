"""OpenTelemetry spans around groundwire's steps (verify, judge, generate), when opentelemetry-api is installed
(the `otel` extra). Without it, or without a configured SDK, `traced` costs one dictionary lookup per call. The
spans go through OpenTelemetry's global tracer provider, or the one given to `use_tracer_provider` (for the whole
process) or `tracer_provider_scope` (for a block: the Langfuse adapter gives its client's this way).

A span whose step returns a report carries its evaluation in the conventions observability tools read, next to
groundwire's own `groundwire.*` attributes (docs/observability.md):

- OpenInference (Phoenix, Arize): `openinference.span.kind` and one span evaluation, `evaluations.0.evaluation.*`
  (name, score, label, explanation, annotator_kind, metadata);
- OpenTelemetry GenAI: the answer's `gen_ai.evaluation.*` attributes on groundwire's span (Langfuse's SDK exports
  only spans with a `gen_ai.*` attribute), and a `gen_ai.evaluation.result` event for the answer and one per claim
  (its verdict and score), with `gen_ai.response.id` when the caller gives it.

The events go on the span being evaluated, as the GenAI conventions ask: the caller's span current when the check
began (its model call or RAG step; never an HTTP server's request span), once per check, for the final report
(after the judge, after every cascade stage). With no such span, each groundwire span carries its own step's
events. A generation evaluates its own answer: its events go on its `groundwire.generate` span.

The score is the answer score (the weakest claim's, what routing reads), the label the route (accept, escalate,
reject). Spans never carry the answer, the context or a claim's text: explanations count claims, and a claim's
event names it by its position in the answer.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from groundwire.foundation.types import ClaimResult, JudgeSummary, Report, Verdict

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

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
SPAN_KINDS = {
    "groundwire.verify": "EVALUATOR",
    "groundwire.judge": "EVALUATOR",
    "groundwire.generate": "CHAIN",
    "groundwire.verify_many": "CHAIN",
}
"""OpenInferenceSpanKindValues per span: checking an answer is an evaluator's work; generating one, or checking a
table of them, a chain's."""
SELF_EVALUATED = frozenset({"groundwire.generate"})
"""Steps whose report evaluates their own output: their events go on their own span, not on the caller's."""

# OpenTelemetry GenAI semantic conventions (opentelemetry-semantic-conventions,
# opentelemetry.semconv._incubating.attributes.gen_ai_attributes; the event is `gen_ai.evaluation.result` of
# the GenAI events model, EVENT_GEN_AI_EVALUATION_RESULT in the JavaScript package).
GEN_AI_EVALUATION_RESULT = "gen_ai.evaluation.result"
GEN_AI_EVALUATION_NAME = "gen_ai.evaluation.name"  # GEN_AI_EVALUATION_NAME
GEN_AI_EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"  # GEN_AI_EVALUATION_SCORE_VALUE
GEN_AI_EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"  # GEN_AI_EVALUATION_SCORE_LABEL
GEN_AI_EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"  # GEN_AI_EVALUATION_EXPLANATION
GEN_AI_RESPONSE_ID = "gen_ai.response.id"  # GEN_AI_RESPONSE_ID: the evaluated completion's id

ANSWER_EVALUATION = "groundwire.grounding"
"""The evaluation's name for the answer: score = answer score, label = route."""
CLAIM_EVALUATION = "groundwire.claim"
"""The evaluation's name for one claim: score = the claim's score, label = its verdict."""
OUTCOME_WORDS = {"accept": "pass", "reject": "fail", "escalate": "needs review"}
"""How an explanation opens, as the adapters' reasons do (docs/adapters.md)."""

Attribute = str | float | int | bool


_PROVIDER: TracerProvider | None = None
"""The tracer provider groundwire's spans go through (use_tracer_provider); None: OpenTelemetry's global one."""
_SCOPED_TRACER: ContextVar[Tracer | None] = ContextVar("groundwire_scoped_tracer", default=None)


def use_tracer_provider(provider: TracerProvider | None) -> None:
    """Send groundwire's spans through `provider` from now on, in every thread, instead of OpenTelemetry's global
    provider (None: back to the global one). For an application whose spans go through a provider it did not set
    globally, such as `Langfuse(tracer_provider=...)`'s (the Langfuse adapter passes its client's provider by itself,
    for the checks it runs) or an OpenTelemetry SDK provider of its own:

        from opentelemetry.sdk.trace import TracerProvider
        from groundwire.core.tracing import use_tracer_provider

        provider = TracerProvider()
        use_tracer_provider(provider)
    """
    global _PROVIDER
    _PROVIDER = provider
    _process_tracer.cache_clear()


@contextlib.contextmanager
def tracer_provider_scope(provider: TracerProvider | None) -> Iterator[None]:
    """Inside the block (this context only), groundwire's spans go through `provider`; None changes nothing."""
    if provider is None:
        yield
        return
    token = _SCOPED_TRACER.set(provider.get_tracer("groundwire"))
    try:
        yield
    finally:
        _SCOPED_TRACER.reset(token)


def _get_tracer() -> Any:
    """The tracer in force: a scope's (tracer_provider_scope), else the process's (None when opentelemetry is not
    installed)."""
    scoped = _SCOPED_TRACER.get()
    return scoped if scoped is not None else _process_tracer()


@functools.cache
def _process_tracer() -> Any:
    """The provider of use_tracer_provider's tracer, or the global provider's, looked up once (the global one's
    ProxyTracer follows a provider set later)."""
    if _PROVIDER is not None:
        return _PROVIDER.get_tracer("groundwire")
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer("groundwire")


@dataclass(slots=True)
class CheckSpan:
    """One check (or table of checks) in progress in this context: the span its evaluation events go on (None:
    each groundwire span carries its own) and the evaluated response's id. The outermost groundwire step or
    `check_span` opens it; steps inside it (cascade stages, the judge, a generation's checks) share it."""

    evaluated: Span | None
    response_id: str | None = None

    def record(self, result: object) -> None:
        """The result's GenAI evaluation events on the evaluated span (nothing without one, or once it ended)."""
        evaluation = evaluation_of(getattr(result, "report", result))  # a Generation carries its report
        if evaluation is not None and self.evaluated is not None and self.evaluated.is_recording():
            _add_events(self.evaluated, evaluation, self.response_id)


_SCOPE: ContextVar[CheckSpan | None] = ContextVar("groundwire_check_span", default=None)


@contextlib.contextmanager
def check_span(response_id: str | None = None, *, evaluated: bool = True) -> Iterator[CheckSpan | None]:
    """The scope of one check (pipeline.check) or of a table of them (`evaluated=False`: a batch evaluates no one
    span, so each row's spans carry their own events). Yields the scope whose `record(report)` puts the final
    report's events on the evaluated span; None without a tracer, or inside a check already in progress (whose
    outermost step records)."""
    if _get_tracer() is None or _SCOPE.get() is not None:
        yield None
        return
    scope = CheckSpan(_caller_span() if evaluated else None, response_id)
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def _caller_span() -> Span | None:
    """The span current when a check begins, if it records and is not a server's request span (the request is not
    the model call that wrote the answer; the service's checks keep their events on their own spans)."""
    from opentelemetry import trace

    span = trace.get_current_span()
    if not span.is_recording() or getattr(span, "kind", None) is trace.SpanKind.SERVER:
        return None
    return span


def traced(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Run the function inside a span `name`; a result with score / route / claims is summarised on it, and
    its evaluation recorded as OpenInference and GenAI attributes and GenAI `gen_ai.evaluation.result` events
    (on the evaluated span: see the module's docstring)."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            tracer = _get_tracer()
            if tracer is None:
                return function(*args, **kwargs)
            scope = _SCOPE.get()
            owner = scope is None
            if scope is None:
                scope = CheckSpan(None if name in SELF_EVALUATED else _caller_span())
            token = _SCOPE.set(scope) if owner else None
            try:
                with tracer.start_as_current_span(name, attributes=start_attributes(name, scope)) as span:
                    if owner and name in SELF_EVALUATED and span.is_recording():
                        scope.evaluated = span
                    result = function(*args, **kwargs)
                    for key, value in _summary(result).items():
                        span.set_attribute(f"groundwire.{key}", value)
                    if span.is_recording():
                        _record_evaluation(span, result, scope, owner)
                    return result
            finally:
                if token is not None:
                    _SCOPE.reset(token)

        return wrapper

    return decorate


def start_attributes(name: str, scope: CheckSpan | None) -> dict[str, Attribute]:
    """What a groundwire span carries from its start: its OpenInference kind, the evaluation's name (a `gen_ai.*`
    attribute, which Langfuse's export filter reads when the span starts and ends) and the response id."""
    attributes: dict[str, Attribute] = {GEN_AI_EVALUATION_NAME: ANSWER_EVALUATION}
    if name in SPAN_KINDS:
        attributes[OPENINFERENCE_SPAN_KIND] = SPAN_KINDS[name]
    if scope is not None and scope.response_id is not None:
        attributes[GEN_AI_RESPONSE_ID] = scope.response_id
    return attributes


@contextlib.contextmanager
def batch_span(name: str, rows: int) -> Iterator[Callable[[Mapping[str, Attribute]], None]]:
    """A span around a table of checks (verify_many), its rows' spans inside it; yields a function that sets
    `groundwire.<key>` attributes on it (counts, once the rows are done). Without a tracer, nothing."""
    tracer = _get_tracer()
    if tracer is None:
        yield lambda _: None
        return
    with check_span(evaluated=False) as scope:
        with tracer.start_as_current_span(name, attributes=start_attributes(name, scope)) as span:
            span.set_attribute("groundwire.rows", rows)
            yield lambda summary: span.set_attributes({f"groundwire.{key}": value for key, value in summary.items()})


def _summary(result: object) -> dict[str, str | float | int | bool]:
    report = getattr(result, "report", result)  # a Generation carries its report
    out: dict[str, str | float | int | bool] = {}
    score = getattr(report, "score", None)
    if isinstance(score, float):
        out["score"] = score
    route = getattr(report, "route", None)
    if route is not None:
        out["route"] = str(getattr(route, "value", route))
    claims = getattr(report, "claims", None)
    if isinstance(claims, tuple):
        out["claims"] = len(claims)
    judge = getattr(getattr(report, "meta", None), "judge", None)
    if isinstance(judge, JudgeSummary):
        out["judge_calls"] = judge.calls
        out["judge_failed_calls"] = judge.failed_calls
    return out


def _record_evaluation(span: Span, result: object, scope: CheckSpan, owner: bool) -> None:
    """The report's evaluation on groundwire's span (OpenInference and GenAI attributes), and its GenAI events on
    the evaluated span: by the step that opened the scope, once; on this span when there is no evaluated span."""
    evaluation = evaluation_of(getattr(result, "report", result))
    if evaluation is None:
        return
    prefix = f"{EVALUATIONS}.0."
    span.set_attributes({prefix + key: value for key, value in evaluation["openinference"].items()})
    span.set_attributes(evaluation["answer_event"])
    if scope.evaluated is None:
        _add_events(span, evaluation, scope.response_id)
    elif owner and scope.evaluated.is_recording():
        _add_events(scope.evaluated, evaluation, scope.response_id)


def _add_events(span: Span, evaluation: dict[str, Any], response_id: str | None) -> None:
    """The answer's `gen_ai.evaluation.result` event, then one per claim."""
    extra: dict[str, Attribute] = {} if response_id is None else {GEN_AI_RESPONSE_ID: response_id}
    span.add_event(GEN_AI_EVALUATION_RESULT, {**evaluation["answer_event"], **extra})
    for event in evaluation["claim_events"]:
        span.add_event(GEN_AI_EVALUATION_RESULT, {**event, **extra})


def evaluation_of(report: object) -> dict[str, Any] | None:
    """A report's evaluation as span attributes and events (None for a result that is not a report):
    {"openinference": {field: value}, "answer_event": {...}, "claim_events": [{...}, ...]}. No user text."""
    if not isinstance(report, Report):
        return None
    label = report.route.value
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
