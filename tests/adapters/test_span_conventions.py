"""The [otel] spans' evaluation, in the names OpenInference and OpenTelemetry's GenAI conventions define: each
name groundwire writes is the installed package's constant, and a verify span carries the score, the label, the
explanation and one event per claim, with no answer or context text."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import BAD, GOOD, HOURS, HOURS_QUESTION, PLAUSIBLE, QUESTION, REFUND

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from groundwire.core import tracing
from groundwire.foundation.types import Verdict

CASES = [(GOOD, REFUND, QUESTION, "accept", "pass:"), (BAD, REFUND, QUESTION, "reject", "fail:"),
         (PLAUSIBLE, HOURS, HOURS_QUESTION, "escalate", "needs review:")]


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    """groundwire's tracer on a provider of this test's own (the process-wide one may belong to another test)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "_get_tracer", lambda: provider.get_tracer("groundwire"))
    return exporter


def test_openinference_names_are_the_packages_constants() -> None:
    semconv = pytest.importorskip("openinference.semconv.trace")
    assert tracing.OPENINFERENCE_SPAN_KIND == semconv.SpanAttributes.OPENINFERENCE_SPAN_KIND
    assert tracing.EVALUATIONS == semconv.SpanAttributes.EVALUATIONS
    names = semconv.EvaluationAttributes
    assert (tracing.EVALUATION_NAME, tracing.EVALUATION_SCORE, tracing.EVALUATION_LABEL, tracing.EVALUATION_EXPLANATION,
            tracing.EVALUATION_ANNOTATOR_KIND, tracing.EVALUATION_METADATA) == (
        names.EVALUATION_NAME, names.EVALUATION_SCORE, names.EVALUATION_LABEL, names.EVALUATION_EXPLANATION,
        names.EVALUATION_ANNOTATOR_KIND, names.EVALUATION_METADATA)
    kinds = {kind.value for kind in semconv.OpenInferenceSpanKindValues}
    assert set(tracing.SPAN_KINDS.values()) <= kinds
    assert {"CODE", "LLM"} <= {kind.value for kind in semconv.OpenInferenceAnnotatorKindValues}


def test_gen_ai_names_are_the_packages_constants() -> None:
    gen_ai = pytest.importorskip("opentelemetry.semconv._incubating.attributes.gen_ai_attributes")
    assert (tracing.GEN_AI_EVALUATION_NAME, tracing.GEN_AI_EVALUATION_SCORE_VALUE,
            tracing.GEN_AI_EVALUATION_SCORE_LABEL, tracing.GEN_AI_EVALUATION_EXPLANATION) == (
        gen_ai.GEN_AI_EVALUATION_NAME, gen_ai.GEN_AI_EVALUATION_SCORE_VALUE, gen_ai.GEN_AI_EVALUATION_SCORE_LABEL,
        gen_ai.GEN_AI_EVALUATION_EXPLANATION)
    # The event's name, gen_ai.evaluation.result, has no Python constant in this package (the GenAI events model;
    # EVENT_GEN_AI_EVALUATION_RESULT in the JavaScript one): the verify-span test pins it.


@pytest.mark.parametrize(("answer", "context", "question", "label", "opening"), CASES,
                         ids=["faithful", "fabricated", "plausible"])
def test_verify_span_carries_the_evaluation(spans, lexical, answer: str, context: str, question: str,
                                            label: str, opening: str) -> None:
    report = lexical.verify(answer, [context], question=question)
    (span,) = [s for s in spans.get_finished_spans() if s.name == "groundwire.verify"]
    attributes = dict(span.attributes)
    assert attributes["openinference.span.kind"] == "EVALUATOR"
    assert attributes["evaluations.0.evaluation.name"] == "groundwire.grounding"
    assert attributes["evaluations.0.evaluation.label"] == label == report.route.value
    assert attributes["evaluations.0.evaluation.score"] == report.score == attributes["groundwire.score"]
    assert attributes["evaluations.0.evaluation.annotator_kind"] == "CODE"
    explanation = attributes["evaluations.0.evaluation.explanation"]
    assert explanation.startswith(opening) and f"answer score {report.score:.2f}" in explanation
    metadata = json.loads(attributes["evaluations.0.evaluation.metadata"])
    assert metadata["supported_share"] == report.supported_share and metadata["claims"] == len(report.claims)

    answer_event, *claim_events = span.events
    assert {event.name for event in span.events} == {"gen_ai.evaluation.result"} == {tracing.GEN_AI_EVALUATION_RESULT}
    assert dict(answer_event.attributes) == {
        "gen_ai.evaluation.name": "groundwire.grounding", "gen_ai.evaluation.score.value": report.score,
        "gen_ai.evaluation.score.label": label, "gen_ai.evaluation.explanation": explanation}
    assert [(e.attributes["groundwire.claim.index"], e.attributes["gen_ai.evaluation.score.label"],
             e.attributes["gen_ai.evaluation.score.value"]) for e in claim_events] == [
        (index, result.verdict.value, result.score) for index, result in enumerate(report.claims)]
    assert all(e.attributes["gen_ai.evaluation.name"] == "groundwire.claim" for e in claim_events)

    text = str(attributes) + str([dict(event.attributes) for event in span.events])
    assert not [claim.claim.text for claim in report.claims if claim.claim.text in text]  # no user text
    assert answer not in text and context not in text


def test_fabricated_answer_counts_its_unsupported_claims(spans, lexical) -> None:
    lexical.verify(BAD, [REFUND], question=QUESTION)
    (span,) = spans.get_finished_spans()
    assert span.attributes["evaluations.0.evaluation.explanation"].startswith(
        "fail: 1 of 2 claims are not supported by the context (1 contradicted)")
    verdicts = json.loads(span.attributes["evaluations.0.evaluation.metadata"])["verdicts"]
    assert verdicts == {"SUPPORTED": 1, "CONTRADICTED": 1}


def test_a_claim_the_judge_decided_makes_the_annotator_an_llm(lexical) -> None:
    report = lexical.verify(PLAUSIBLE, [HOURS], question=HOURS_QUESTION)
    judged = dataclasses.replace(report, claims=tuple(dataclasses.replace(c, decided_by="judge") for c in report.claims))
    assert tracing.evaluation_of(report)["openinference"]["evaluation.annotator_kind"] == "CODE"
    assert tracing.evaluation_of(judged)["openinference"]["evaluation.annotator_kind"] == "LLM"
    assert tracing.evaluation_of("not a report") is None


def test_explanations_without_claims() -> None:
    assert tracing.explain("accept", [], 1.0, abstained=True).startswith("pass: the answer abstains")
    assert tracing.explain("accept", [], 1.0) == "pass: the answer makes no checkable claim; answer score 1.00"
    assert tracing.explain("escalate", [Verdict.UNRESOLVED, Verdict.NOT_FOUND], 0.4) == (
        "needs review: 2 of 2 claims are not supported by the context (1 not found, 1 unresolved); answer score 0.40")


def test_no_span_without_a_recording_tracer(monkeypatch: pytest.MonkeyPatch, lexical) -> None:
    from opentelemetry.trace import NoOpTracer

    monkeypatch.setattr(tracing, "_get_tracer", NoOpTracer)
    assert lexical.verify(BAD, [REFUND]).route.value == "reject"  # nothing recorded, nothing raised


def _caller(spans_provider: TracerProvider, name: str = "chat", **kwargs):
    return spans_provider.get_tracer("rag-app").start_as_current_span(name, **kwargs)


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> tuple[TracerProvider, InMemorySpanExporter]:
    """The caller's spans and groundwire's on one provider of this test's own."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "_get_tracer", lambda: provider.get_tracer("groundwire"))
    return provider, exporter


def _by_name(exporter: InMemorySpanExporter) -> dict[str, list]:
    found: dict[str, list] = {}
    for span in exporter.get_finished_spans():
        found.setdefault(span.name, []).append(span)
    return found


def test_the_events_go_on_the_evaluated_span_with_the_response_id(provider, lexical) -> None:
    """Under the caller's model-call span, the GenAI events are that span's (once per check), groundwire's span
    keeps the attributes; both carry gen_ai.response.id."""
    from groundwire.pipeline import CheckItem, check

    tracer_provider, exporter = provider
    with _caller(tracer_provider):
        report = check(lexical, CheckItem(BAD, (REFUND,), question=QUESTION, response_id="chatcmpl-42"))
    spans = _by_name(exporter)
    (chat,), (verify,) = spans["chat"], spans["groundwire.verify"]
    assert verify.parent.span_id == chat.context.span_id
    assert not verify.events  # no copy: a tool counting evaluations counts this one once
    answer_event, *claim_events = chat.events
    assert {event.name for event in chat.events} == {"gen_ai.evaluation.result"}
    assert len(claim_events) == len(report.claims)
    assert answer_event.attributes["gen_ai.evaluation.score.label"] == "reject"
    assert {event.attributes["gen_ai.response.id"] for event in chat.events} == {"chatcmpl-42"}
    assert verify.attributes["gen_ai.response.id"] == "chatcmpl-42"
    # the answer's GenAI evaluation as attributes of groundwire's span: what Langfuse's export filter looks for
    assert {key: verify.attributes[key] for key in answer_event.attributes if key != "gen_ai.response.id"} == {
        key: value for key, value in answer_event.attributes.items() if key != "gen_ai.response.id"}


def test_a_verifier_called_directly_records_on_the_callers_span(provider, lexical) -> None:
    tracer_provider, exporter = provider
    with _caller(tracer_provider):
        lexical.verify(GOOD, [REFUND], question=QUESTION)
    spans = _by_name(exporter)
    assert [e.attributes["gen_ai.evaluation.score.label"] for e in spans["chat"][0].events][0] == "accept"
    assert not spans["groundwire.verify"][0].events
    assert "gen_ai.response.id" not in spans["groundwire.verify"][0].attributes  # none given, none made up


def test_a_server_span_is_not_the_evaluated_one(provider, lexical) -> None:
    """A request span (the service's) is not the model call that wrote the answer: the events stay on
    groundwire's span."""
    from opentelemetry.trace import SpanKind

    tracer_provider, exporter = provider
    with _caller(tracer_provider, "POST /v1/verify", kind=SpanKind.SERVER):
        lexical.verify(BAD, [REFUND], question=QUESTION)
    spans = _by_name(exporter)
    assert not spans["POST /v1/verify"][0].events
    assert len(spans["groundwire.verify"][0].events) == 1 + spans["groundwire.verify"][0].attributes["groundwire.claims"]


def test_verify_many_nests_its_rows_under_the_current_span(provider, lexical) -> None:
    """One trace for the table: the caller's span, groundwire.verify_many inside it, a verify span per row inside
    that, each row's events on its own span (a table evaluates no one span of the caller's)."""
    pd = pytest.importorskip("pandas")
    from groundwire import verify_many

    tracer_provider, exporter = provider
    frame = pd.DataFrame({"answer": [a for a, *_ in CASES] + [BAD], "context": [[c] for _, c, *_ in CASES] + [[]],
                          "question": [q for _, _, q, *_ in CASES] + [QUESTION]})
    with _caller(tracer_provider, "evaluate-nightly"):
        results = verify_many(frame, verifier=lexical)
    spans = _by_name(exporter)
    (caller,), (batch,), rows = spans["evaluate-nightly"], spans["groundwire.verify_many"], spans["groundwire.verify"]
    assert len({span.context.trace_id for span in exporter.get_finished_spans()}) == 1
    assert batch.parent.span_id == caller.context.span_id
    assert len(rows) == len(CASES) and all(row.parent.span_id == batch.context.span_id for row in rows)
    assert [row.events[0].attributes["gen_ai.evaluation.score.label"] for row in rows] == [
        label for *_, label, _ in CASES]
    assert not caller.events and not batch.events
    assert batch.attributes["openinference.span.kind"] == "CHAIN"
    assert batch.attributes["gen_ai.evaluation.name"] == "groundwire.grounding"
    assert (batch.attributes["groundwire.rows"], batch.attributes["groundwire.failed_rows"]) == (4, 1)
    counts = results["route"].value_counts()
    assert {label: batch.attributes[f"groundwire.route.{label}"] for label in counts.index} == counts.to_dict()


def test_without_a_current_span_verify_many_is_one_trace(provider, lexical) -> None:
    pd = pytest.importorskip("pandas")
    from groundwire import verify_many

    _, exporter = provider
    frame = pd.DataFrame({"answer": [a for a, *_ in CASES], "context": [[c] for _, c, *_ in CASES]})
    verify_many(frame, verifier=lexical)
    finished = exporter.get_finished_spans()
    assert len(finished) == 1 + len(CASES) and len({span.context.trace_id for span in finished}) == 1


def test_averify_many_in_a_worker_thread_keeps_the_current_span(provider, lexical) -> None:
    """averify_many checks the rows in a worker thread: the OpenTelemetry context goes with them."""
    import asyncio

    pd = pytest.importorskip("pandas")
    from groundwire import averify_many

    tracer_provider, exporter = provider
    frame = pd.DataFrame({"answer": [GOOD, BAD], "context": [[REFUND], [REFUND]]})

    async def main() -> None:
        with _caller(tracer_provider, "async-eval"):
            await averify_many(frame, verifier=lexical)

    asyncio.run(main())
    spans = _by_name(exporter)
    (caller,), (batch,) = spans["async-eval"], spans["groundwire.verify_many"]
    assert batch.parent.span_id == caller.context.span_id
    assert {row.parent.span_id for row in spans["groundwire.verify"]} == {batch.context.span_id}


def test_averify_passes_the_response_id(provider, lexical) -> None:
    import asyncio

    from groundwire import averify

    tracer_provider, exporter = provider

    async def main() -> None:
        with _caller(tracer_provider):
            await averify(GOOD, [REFUND], verifier=lexical, response_id="resp-7")

    asyncio.run(main())
    spans = _by_name(exporter)
    assert spans["chat"][0].events[0].attributes["gen_ai.response.id"] == "resp-7"
    assert spans["groundwire.verify"][0].parent.span_id == spans["chat"][0].context.span_id
