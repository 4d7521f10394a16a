"""One meaning per word (issue 57 item 3): the CLI, the frames, the spans and every adapter give the same `score`
(the answer score, the weakest claim's) and the same `route` on the three answers of conftest.SAME_ANSWERS
(faithful A, fabricated figure B, unsupported addition C), through the real frameworks. Each adapter reports the
score in its framework's own field with `metric="score"`, under a name that says so where groundwire names it.
Eight adapters here; TruLens and Guardrails, which run in environments of their own, in test_trulens.py and
test_guardrails.py. A surface whose framework is not installed is skipped."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import HOURS, SAME_ANSWERS, SAME_QUESTION, SAME_ROUTES, checked

ROUTE_OF_OUTCOME = {"pass": "accept", "fail": "reject", "review": "escalate"}
"""For the frameworks whose only field for it is the outcome (RAGAS's GroundwireOutcome, LlamaIndex's `outcome`):
one outcome per route."""
Said = tuple[float, str]


def _cli(answer: str) -> Said:
    from groundwire.cli.main import run_cli

    Path("ctx.txt").write_text(HOURS, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        run_cli(["check", "-c", "ctx.txt", "-a", answer, "-q", SAME_QUESTION, "--scorer", "lexical", "--json",
                 "--fail-on", "never"])
    report = json.loads(out.getvalue())
    return report["score"], report["route"]


def _frame(answer: str) -> Said:
    pd = pytest.importorskip("pandas")
    from groundwire import verify_many

    (row,) = verify_many(pd.DataFrame({"answer": [answer], "context": [[HOURS]], "question": [SAME_QUESTION]}),
                         scorer="lexical").to_dict("records")
    return row["score"], row["route"]


def _spans(answer: str) -> Said:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from groundwire import verify
    from groundwire.core import tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tracing, "_get_tracer", lambda: provider.get_tracer("groundwire"))
        verify(answer, [HOURS], question=SAME_QUESTION, scorer="lexical")
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "groundwire.verify"]
    attributes = dict(span.attributes or {})
    # groundwire's own attributes and the OpenInference evaluation say the same
    assert attributes["evaluations.0.evaluation.score"] == attributes["groundwire.score"]
    assert attributes["evaluations.0.evaluation.label"] == attributes["groundwire.route"]
    return attributes["groundwire.score"], attributes["groundwire.route"]


def _deepeval(answer: str) -> Said:
    pytest.importorskip("deepeval")
    from deepeval.test_case import LLMTestCase

    from groundwire.adapters.deepeval import GroundwireFaithfulness

    metric = GroundwireFaithfulness(metric="score", scorer="lexical", async_mode=False)
    metric.measure(LLMTestCase(input=SAME_QUESTION, actual_output=answer, retrieval_context=[HOURS]))
    assert metric.__name__ == "Groundwire Score" and metric.report is not None
    return metric.score, metric.report.route.value


def _ragas(answer: str) -> Said:
    pytest.importorskip("ragas")
    from groundwire.adapters.ragas import GroundwireFaithfulness, GroundwireOutcome

    inputs = {"user_input": SAME_QUESTION, "response": answer, "retrieved_contexts": [HOURS]}
    metric = GroundwireFaithfulness(metric="score", scorer="lexical")
    assert metric.name == "groundwire_score"
    value = asyncio.run(metric.ascore(**inputs)).value
    outcome = asyncio.run(GroundwireOutcome(scorer="lexical").ascore(**inputs)).value
    return value, ROUTE_OF_OUTCOME[outcome]


def _llamaindex(answer: str) -> Said:
    pytest.importorskip("llama_index.core")
    from groundwire.adapters.llamaindex import GroundwireEvaluator

    result = GroundwireEvaluator(metric="score", scorer="lexical").evaluate(query=SAME_QUESTION, contexts=[HOURS],
                                                                             response=answer)
    return result.score, ROUTE_OF_OUTCOME[result.outcome]


def _langchain(answer: str) -> Said:
    pytest.importorskip("langchain_core")
    from groundwire.adapters.langchain import GroundwireRunnable

    grounded = GroundwireRunnable(context=[HOURS], metric="score", scorer="lexical").invoke(answer)
    assert grounded.value == grounded.score  # with metric="score" the metric value is the answer score
    report = GroundwireRunnable(scorer="lexical").invoke({"question": SAME_QUESTION, "context": [HOURS],
                                                          "answer": answer})
    assert (report.score, report.route) == (grounded.score, grounded.route)  # the mapping form's Report
    return grounded.score, grounded.route.value


def _haystack(answer: str) -> Said:
    pytest.importorskip("haystack")
    from groundwire.adapters.haystack import GroundwireFaithfulnessEvaluator

    out = GroundwireFaithfulnessEvaluator(metric="score", scorer="lexical").run(
        questions=[SAME_QUESTION], contexts=[[HOURS]], predicted_answers=[answer])
    (result,) = out["results"]
    return result["score"], result["route"]


def _mlflow(answer: str) -> Said:
    pytest.importorskip("mlflow.genai")
    from groundwire.adapters.mlflow import GroundwireFaithfulness

    feedback = GroundwireFaithfulness(metric="score", scorer="lexical")(
        inputs={"question": SAME_QUESTION, "context": [HOURS]}, outputs=answer)
    assert feedback.name == "groundwire_score"
    assert float(feedback.metadata["groundwire.score"]) == feedback.value
    return feedback.value, feedback.metadata["groundwire.route"]


def _phoenix(answer: str) -> Said:
    pytest.importorskip("phoenix.client")
    pd = pytest.importorskip("pandas")
    from groundwire import verify_many
    from groundwire.adapters.phoenix import span_annotations

    frame = pd.DataFrame({"answer": [answer], "context": [[HOURS]], "question": [SAME_QUESTION]},
                         index=["00000000000000a1"])
    annotations = {a["name"]: a for a in span_annotations(verify_many(frame, scorer="lexical"), metric="score")}
    assert set(annotations) == {"groundwire_score", "groundwire_route"}
    value, route = annotations["groundwire_score"], annotations["groundwire_route"]
    assert value["result"]["label"] == route["result"]["label"] == value["metadata"]["route"]
    assert value["result"]["score"] == value["metadata"]["score"]
    return value["result"]["score"], route["result"]["label"]


def _langfuse(answer: str) -> Said:
    pytest.importorskip("langfuse")
    from langfuse import Langfuse

    from groundwire.adapters.langfuse import check_and_score, score_assessment

    with pytest.MonkeyPatch.context() as patch:
        for variable in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"):
            patch.delenv(variable, raising=False)
        disabled = Langfuse(base_url="http://127.0.0.1:9")  # no keys: sends nothing, gives back what it would
        assessment = check_and_score(disabled, answer, [HOURS], SAME_QUESTION, metric="score", scorer="lexical")
        evaluation = score_assessment(disabled, assessment)
    assert (evaluation.name, evaluation.route_name) == ("groundwire_score", "groundwire_route")
    assert evaluation.metadata["score"] == evaluation.value and evaluation.metadata["route"] == evaluation.route
    return evaluation.value or 0.0, evaluation.route


SURFACES: dict[str, Callable[[str], Said]] = {
    "cli": _cli, "frame": _frame, "spans": _spans, "deepeval": _deepeval, "ragas": _ragas,
    "llamaindex": _llamaindex, "langchain": _langchain, "haystack": _haystack, "mlflow": _mlflow,
    "phoenix": _phoenix, "langfuse": _langfuse,
}


def test_the_three_answers_take_the_three_routes() -> None:
    assert {key: checked(answer)[1] for key, answer in SAME_ANSWERS.items()} == SAME_ROUTES


@pytest.mark.parametrize("key", sorted(SAME_ANSWERS))
@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_every_surface_says_the_same_score_and_route(surface: str, key: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ROUTE", "DECIDE_AT", "JUDGE", "SCORER", "ACCEPT_AT", "REJECT_AT", "CASCADE"):
        monkeypatch.delenv(f"GROUNDWIRE_VERIFY_{name}", raising=False)
    monkeypatch.delenv("GROUNDWIRE_CONFIG", raising=False)
    answer = SAME_ANSWERS[key]
    assert SURFACES[surface](answer) == checked(answer)
