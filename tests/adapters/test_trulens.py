"""GroundwireProvider as TruLens metrics, through the real TruLens 2 (OpenTelemetry records, a SQLite session):
the three answers of the adapters' one rule, recorded by a TruApp and scored by TruLens' own feedback computation.

trulens-core pins rich<14, which .venv does not have: `make test-trulens` runs this file in .venv-trulens (the
core, the [trulens] extra, pytest); in .venv it is skipped."""

from __future__ import annotations

import os

import pytest
from test_one_rule import CASES

from conftest import BAD, GOOD, HOURS, QUESTION, REFUND, SAME_ANSWERS, SAME_QUESTION, checked
from groundwire.adapters.common import Outcome

pytest.importorskip("trulens.core")
pytest.importorskip("trulens.feedback")
from groundwire.adapters.trulens import GroundwireProvider  # after the skips: without TruLens it names the extra

os.environ["TRULENS_OTEL_TRACING"] = "1"  # TruLens 2's default, said here so that a user's setting cannot change it
from trulens.apps.app import TruApp
from trulens.core import Metric, Selector, TruSession
from trulens.core.otel.instrument import instrument
from trulens.core.utils.pyschema import FunctionOrMethod
from trulens.otel.semconv.trace import SpanAttributes

OPENING = {Outcome.PASS: "pass:", Outcome.FAIL: "fail:", Outcome.REVIEW: "needs review:"}


class RAG:
    """A RAG app with a retriever span, as TruLens instruments one: each question has its context and answer."""

    def __init__(self, cases: list[tuple[str, str, str, Outcome]]) -> None:
        self.cases = {question + answer: (context, answer) for answer, context, question, _ in cases}

    @instrument(span_type=SpanAttributes.SpanType.RETRIEVAL,
                attributes={SpanAttributes.RETRIEVAL.QUERY_TEXT: "key",
                            SpanAttributes.RETRIEVAL.RETRIEVED_CONTEXTS: "return"})
    def retrieve(self, key: str) -> list[str]:
        return [self.cases[key][0]]

    @instrument()
    def query(self, key: str) -> str:
        self.retrieve(key)
        return self.cases[key][1]


def _metric(implementation, name: str) -> Metric:
    return Metric(implementation=implementation, name=name,
                  selectors={"source": Selector.select_context(collect_list=True),
                             "statement": Selector.select_record_output()})


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory, lexical):
    """The three answers recorded by a TruApp; TruLens computes both metrics: {answer: (score, passed, meta)}."""
    session = TruSession(database_url=f"sqlite:///{tmp_path_factory.mktemp('trulens')}/trulens.sqlite")
    provider = GroundwireProvider(verifier=lexical)
    rag = RAG(CASES)
    app = TruApp(rag, app_name="groundwire-test", app_version="1", main_method=rag.query,
                 feedbacks=[_metric(provider.groundedness, "groundwire"), _metric(provider.passed, "passed")])
    try:
        with app:
            for key in rag.cases:
                rag.query(key)
    finally:
        # TruApp starts an evaluator, a daemon thread that computes the metrics of new records every 10 s; left
        # running, it was still computing when the interpreter shut down, and each record's computation ended in
        # "cannot schedule new futures after interpreter shutdown". The test computes them itself, below.
        app.stop_evaluator()
    session.force_flush()
    app.compute_feedbacks()
    session.force_flush()
    records, names = session.get_records_and_feedback(app_name="groundwire-test")
    assert sorted(names) == ["groundwire", "passed"]
    out = {}
    for record in records.to_dict("records"):
        (call,) = [c for c in record["groundwire_calls"] if c["span_type"] == "eval"]
        out[call["args"]["statement"]] = (record["groundwire"], record["passed"], call["args"]["source"], call["meta"])
    session.reset_database()
    return out


@pytest.mark.parametrize(("answer", "context", "question", "expected"), CASES, ids=["faithful", "fabricated",
                                                                                   "plausible"])
def test_trulens_reports_the_routing_outcome_and_the_supported_share(
        scored, lexical, answer: str, context: str, question: str, expected: Outcome) -> None:
    report = lexical.verify(answer, [context], question=question)
    score, passed, source, meta = scored[answer]
    assert source == [context]  # the whole retrieved context, as one list (collect_list=True)
    assert Outcome(meta["metadata"]["outcome"]) is expected
    assert {"accept": Outcome.PASS, "reject": Outcome.FAIL, "escalate": Outcome.REVIEW}[report.route.value] is expected
    assert (passed == 1.0) is (expected is Outcome.PASS) and meta["metadata"]["passed"] is (expected is Outcome.PASS)
    assert score == report.supported_share
    assert meta["explanation"].startswith(OPENING[expected])  # TruLens shows the "reason" as the explanation


def test_methods_score_the_share_or_the_weakest_claim(lexical) -> None:
    share, meta = GroundwireProvider(verifier=lexical).groundedness([REFUND], BAD, QUESTION)
    assert share == 0.5 and meta["outcome"] == "fail" and '"Refunds are accepted within 90 days' in meta["reason"]
    weakest, _ = GroundwireProvider(verifier=lexical, metric="score").groundedness(REFUND, BAD)
    assert weakest == lexical.verify(BAD, [REFUND]).score < share
    assert GroundwireProvider(verifier=lexical).passed(REFUND, GOOD)[0] == 1.0


def test_a_saved_metric_loads_with_its_settings() -> None:
    """TruLens saves a metric's implementation (deferred evaluation); loading it rebuilds the provider."""
    metric = _metric(GroundwireProvider(scorer="lexical", metric="score", accept_at=0.9).groundedness, "groundwire")
    loaded = FunctionOrMethod.model_validate(metric.implementation.model_dump()).load()
    assert loaded.__self__ == GroundwireProvider(scorer="lexical", metric="score", accept_at=0.9)
    score, meta = loaded(source=[HOURS], statement="Support is available Monday to Friday, 9am to 5pm.")
    assert meta["accept_at"] == 0.9 and score == meta["score"]


def test_bad_settings_are_refused(lexical) -> None:
    with pytest.raises(TypeError, match="takes no threshold"):
        GroundwireProvider(threshold=0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="either a verifier"):
        GroundwireProvider(verifier=lexical, accept_at=0.5)
    with pytest.raises(ValueError, match="(?s)metric.*'supported_share' or 'score'"):  # pydantic's ValidationError
        GroundwireProvider(metric="mean")
    with pytest.raises(ValueError, match="needs the retrieved context"):
        GroundwireProvider(verifier=lexical).groundedness([], GOOD)


def test_the_provider_follows_the_one_option_rule() -> None:
    """The option rule of every adapter (tests/adapters/test_option_rule.py runs in .venv, without TruLens)."""
    with pytest.raises(TypeError, match="accept_at"):
        GroundwireProvider(threshold=0.5)
    with pytest.raises(TypeError, match="acept_at"):
        GroundwireProvider(acept_at=0.5)
    with pytest.raises(ValueError):
        GroundwireProvider(accept_at=1.5)
    lenient = GroundwireProvider(scorer="lexical", accept_at=0.01, reject_at=0.0)
    strict = GroundwireProvider(scorer="lexical", accept_at=0.99, reject_at=0.98)
    assert (lenient.assess([REFUND], GOOD).accept_at, strict.assess([REFUND], GOOD).accept_at) == (0.01, 0.99)


@pytest.mark.parametrize("key", sorted(SAME_ANSWERS))
def test_the_same_score_and_route_as_every_surface(key: str) -> None:
    """Issue 57: with metric="score", TruLens gets the answer score, the CLI's, the frames' and the spans' (checked()
    is verify()'s, which test_same_meaning.py holds every other surface to), and the route in the metadata."""
    answer = SAME_ANSWERS[key]
    value, meta = GroundwireProvider(scorer="lexical", metric="score").groundedness([HOURS], answer, SAME_QUESTION)
    assert (value, meta["route"]) == (meta["score"], meta["route"]) == checked(answer)
