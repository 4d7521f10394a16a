"""GroundwireFaithfulness and GroundwireOutcome as MLflow GenAI scorers, in the real `mlflow.genai.evaluate`
(mlflow-skinny, a SQLite tracking store in a temporary folder, telemetry off): the three answers of the adapters'
one rule, contexts read from the inputs or from a traced retriever, and `result.passed`."""

from __future__ import annotations

import os

import pytest
from test_one_rule import CASES

from conftest import BAD, GOOD, HOURS, HOURS_QUESTION, PLAUSIBLE, QUESTION, REFUND
from groundwire.adapters.common import Outcome

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # before mlflow is imported: no usage reports
os.environ.setdefault("DO_NOT_TRACK", "true")
mlflow = pytest.importorskip("mlflow")
pytest.importorskip("mlflow.genai")
from mlflow.entities import Document  # noqa: E402

from groundwire.adapters.mlflow import GroundwireFaithfulness, GroundwireOutcome  # noqa: E402

OPENING = {Outcome.PASS: "pass:", Outcome.FAIL: "fail:", Outcome.REVIEW: "needs review:"}


@pytest.fixture(scope="module", autouse=True)
def tracking(tmp_path_factory: pytest.TempPathFactory):
    """MLflow's store and artifacts (traces) in a temporary folder, never the working directory; and no
    autologging: evaluate would otherwise trace the frameworks other tests of this process import (Haystack,
    LangChain...), and go on tracing them after this module."""
    mlflow.autolog(disable=True)
    folder = tmp_path_factory.mktemp("mlflow")
    mlflow.set_tracking_uri(f"sqlite:///{folder}/mlflow.db")
    experiment = mlflow.create_experiment("groundwire-test", artifact_location=(folder / "artifacts").as_uri())
    mlflow.set_experiment(experiment_id=experiment)
    yield
    mlflow.flush_trace_async_logging()  # traces still queued go to this store, not to the next default one
    mlflow.set_tracking_uri(None)


def _rows(result) -> dict[str, dict]:
    """{answer: {assessment name: (value, rationale, metadata)}} from an evaluation's result table."""
    rows = {}
    for row in result.result_df.to_dict("records"):
        rows[row["response"]] = {a["assessment_name"]: (a["feedback"]["value"], a.get("rationale"), a["metadata"])
                                 for a in row["assessments"]}
    return rows


@pytest.fixture(scope="module")
def evaluated(lexical):
    data = [{"inputs": {"question": question, "context": [context]}, "outputs": answer}
            for answer, context, question, _ in CASES]
    result = mlflow.genai.evaluate(data=data, scorers=[GroundwireFaithfulness(verifier=lexical),
                                                       GroundwireOutcome(verifier=lexical)])
    return result


@pytest.mark.parametrize(("answer", "context", "question", "expected"), CASES, ids=["faithful", "fabricated",
                                                                                   "plausible"])
def test_mlflow_reports_the_routing_outcome_and_the_supported_share(
        evaluated, lexical, answer: str, context: str, question: str, expected: Outcome) -> None:
    report = lexical.verify(answer, [context], question=question)
    row = _rows(evaluated)[answer]
    score, reason, metadata = row["groundwire_supported_share"]
    rating, outcome_reason, _ = row["groundwire_outcome"]
    assert Outcome(metadata["groundwire.outcome"]) is expected
    assert {"accept": Outcome.PASS, "reject": Outcome.FAIL, "escalate": Outcome.REVIEW}[report.route.value] is expected
    assert (rating == "yes") is (expected is Outcome.PASS)  # review is "no", never a pass
    assert metadata["groundwire.passed"] == str(expected is Outcome.PASS)
    assert score == report.supported_share
    assert reason.startswith(OPENING[expected]) and outcome_reason == reason


def test_metrics_aggregate_the_share(evaluated, lexical) -> None:
    shares = [lexical.verify(a, [c], question=q).supported_share for a, c, q, _ in CASES]
    assert evaluated.metrics["groundwire_supported_share/mean"] == pytest.approx(sum(shares) / len(shares))
    assert evaluated.metrics["groundwire_outcome/mean"] == pytest.approx(1 / 3)  # MLflow counts "yes" as 1


def test_result_passed_reads_the_outcome(lexical) -> None:
    good = [{"inputs": {"question": QUESTION, "context": REFUND}, "outputs": GOOD}]
    assert mlflow.genai.evaluate(data=good, scorers=[GroundwireOutcome(verifier=lexical)]).passed
    plausible = [{"inputs": {"question": HOURS_QUESTION, "context": [HOURS]}, "outputs": {"response": PLAUSIBLE}}]
    result = mlflow.genai.evaluate(data=plausible, scorers=[GroundwireOutcome(verifier=lexical)])
    assert not result.passed and result.reason.startswith("groundwire_outcome: needs review:")


def test_context_comes_from_the_traced_retriever(lexical) -> None:
    @mlflow.trace(span_type="RETRIEVER")
    def retrieve(question: str) -> list[Document]:
        return [Document(page_content=REFUND, metadata={"doc_uri": "policy.md"})]

    @mlflow.trace  # the trace's root: its output is the answer the scorers read
    def app(question: str) -> str:
        retrieve(question)
        return BAD

    result = mlflow.genai.evaluate(data=[{"inputs": {"question": QUESTION}}], predict_fn=app,
                                   scorers=[GroundwireFaithfulness(verifier=lexical, metric="score")])
    ((name, (value, reason, metadata)),) = _rows(result)[BAD].items()
    assert name == "groundwire_score"  # named after the quantity metric= chose
    assert value == lexical.verify(BAD, [REFUND], question=QUESTION).score
    assert metadata["groundwire.outcome"] == "fail" and "90 days" in reason


def test_missing_context_is_an_error_mlflow_records(lexical) -> None:
    result = mlflow.genai.evaluate(data=[{"inputs": {"question": QUESTION}, "outputs": GOOD}],
                                   scorers=[GroundwireOutcome(verifier=lexical)])
    assert not result.passed and "needs the retrieved context" in result.reason


def test_bad_settings_are_refused(lexical) -> None:
    with pytest.raises(TypeError, match="takes no threshold"):
        GroundwireFaithfulness(threshold=0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="either a verifier"):
        GroundwireOutcome(verifier=lexical, reject_at=0.1)
    with pytest.raises(ValueError, match="(?s)metric.*'supported_share' or 'score'"):
        GroundwireFaithfulness(metric="mean")
