"""groundwire's evaluations in a real Phoenix: a Phoenix server on 127.0.0.1 (arize-phoenix, from .venv-phoenix,
a temporary working folder and SQLite), spans sent to it over OTLP, verify_many's results logged on those spans
with Phoenix's own client (arize-phoenix-client), and read back through that client.

`make test` builds .venv-phoenix and names its python in GROUNDWIRE_PHOENIX_PYTHON; without a Phoenix server to
start, these tests skip and say so."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_one_rule import CASES

from conftest import BAD, REFUND
from groundwire.adapters.common import Outcome

pytest.importorskip("phoenix.client")
pd = pytest.importorskip("pandas")
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from phoenix.client import Client  # noqa: E402

from groundwire import verify_many  # noqa: E402
from groundwire.adapters.phoenix import log_evaluations, span_annotations  # noqa: E402
from groundwire.core import tracing  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "groundwire-test"
OPENING = {Outcome.PASS: "pass:", Outcome.FAIL: "fail:", Outcome.REVIEW: "needs review:"}
STARTUP_LIMIT_S = 300  # a guard against a hung start, not a measurement: Phoenix took 26 s here on 2 busy cores


def _phoenix_python() -> str | None:
    """The Phoenix env's python: GROUNDWIRE_PHOENIX_PYTHON (relative to the repository, as `make test` gives it),
    else .venv-phoenix's when it is there."""
    given = os.environ.get("GROUNDWIRE_PHOENIX_PYTHON")
    python = ROOT / given if given else ROOT / ".venv-phoenix" / "bin" / "python"
    return str(python) if given or python.exists() else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Phoenix server of this test's own; its base URL."""
    python = _phoenix_python()
    if python is None:
        pytest.skip("no Phoenix server to start: `make test` builds .venv-phoenix (arize-phoenix) for this test")
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(_free_port()), "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = (work / "server.log").open("wb")
    server = subprocess.Popen([python, "-m", "phoenix.server.main", "serve"], env=env, cwd=work, stdout=log,
                              stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_healthy(server, url, work / "server.log")
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _wait_until_healthy(server: subprocess.Popen, url: str, log: Path) -> None:
    import httpx

    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the Phoenix server exited ({server.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the Phoenix server did not answer /healthz:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def sent(phoenix: str, lexical) -> dict[str, str]:
    """One RAG span per answer of the one rule, each with groundwire's verify span inside it, exported to Phoenix
    over OTLP/HTTP: {answer: span id}."""
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": PROJECT}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{phoenix}/v1/traces")))
    tracer = provider.get_tracer("rag-app")
    real = tracing._get_tracer
    tracing._get_tracer = lambda: provider.get_tracer("groundwire")  # groundwire's spans go to this provider too
    ids = {}
    try:
        for answer, context, question, _ in CASES:
            with tracer.start_as_current_span("rag", attributes={"openinference.span.kind": "CHAIN",
                                                                 "input.value": question,
                                                                 "output.value": answer}) as span:
                lexical.verify(answer, [context], question=question)
                ids[answer] = format(span.get_span_context().span_id, "016x")
    finally:
        tracing._get_tracer = real
    provider.force_flush()
    provider.shutdown()
    _wait_for_spans(Client(base_url=phoenix), 2 * len(CASES))
    return ids


def _wait_for_spans(client: Client, count: int) -> None:
    """Phoenix writes spans asynchronously (the project appears with the first): wait until `count` can be read."""
    import httpx

    for _ in range(2 * STARTUP_LIMIT_S):
        try:
            if len(client.spans.get_spans(project_identifier=PROJECT, limit=100)) >= count:
                return
        except httpx.HTTPStatusError as error:
            if error.response.status_code != 404:
                raise
        time.sleep(0.5)
    pytest.fail(f"Phoenix did not list the {count} spans sent to it")


def _frame(ids: dict[str, str]) -> pd.DataFrame:
    """The table a user builds from their spans: answer, context and question, indexed by span id."""
    return pd.DataFrame({"answer": [a for a, *_ in CASES], "context": [[c] for _, c, _, _ in CASES],
                         "question": [q for *_, q, _ in CASES]}, index=[ids[a] for a, *_ in CASES])


def test_verify_many_results_are_annotations_on_the_spans(phoenix, sent, lexical) -> None:
    client = Client(base_url=phoenix)
    results, claims = verify_many(_frame(sent), verifier=lexical, claims=True)
    inserted = log_evaluations(client, results, claims=claims)
    assert len(inserted) == len(CASES)
    annotations = client.spans.get_span_annotations(span_ids=list(sent.values()), project_identifier=PROJECT,
                                                    include_annotation_names=["groundwire_faithfulness"])
    by_span = {annotation["span_id"]: annotation for annotation in annotations}
    assert set(by_span) == set(sent.values())
    for answer, context, question, expected in CASES:
        report = lexical.verify(answer, [context], question=question)
        annotation = by_span[sent[answer]]
        result = annotation["result"]
        assert annotation["annotator_kind"] == "CODE" and annotation["source"] == "API"
        assert result["label"] == report.decision.value
        assert result["score"] == report.supported_share  # the one rule's score
        assert result["explanation"].startswith(OPENING[expected])
        assert annotation["metadata"]["outcome"] == expected.value
        assert annotation["metadata"]["passed"] is (expected is Outcome.PASS)
    fabricated = by_span[sent[BAD]]["result"]["explanation"]
    assert '- "Refunds are accepted within 90 days of purchase.": CONTRADICTED, score' in fabricated


def test_a_run_with_an_identifier_replaces_its_annotation(phoenix, sent, lexical) -> None:
    client = Client(base_url=phoenix)
    results = verify_many(_frame(sent), verifier=lexical)
    log_evaluations(client, results, name="groundwire_min", identifier="nightly")
    log_evaluations(client, results, name="groundwire_min", identifier="nightly", score="min")
    annotations = client.spans.get_span_annotations(span_ids=[sent[BAD]], project_identifier=PROJECT,
                                                    include_annotation_names=["groundwire_min"])
    (annotation,) = annotations  # the second run replaced the first
    assert annotation["result"]["score"] == lexical.verify(BAD, [REFUND], question=CASES[1][2]).score
    assert annotation["identifier"] == "nightly"


def test_groundwire_spans_carry_the_openinference_evaluation(phoenix, sent) -> None:
    client = Client(base_url=phoenix)
    spans = [s for s in client.spans.get_spans(project_identifier=PROJECT, limit=100)
             if s["name"] == "groundwire.verify"]
    assert len(spans) == len(CASES)
    labels = set()
    for span in spans:
        attributes = span["attributes"]
        assert span["span_kind"] == "EVALUATOR"  # Phoenix reads openinference.span.kind into the span's kind
        assert attributes["evaluations.0.evaluation.name"] == "groundwire.grounding"
        assert attributes["evaluations.0.evaluation.score"] == attributes["groundwire.score"]
        labels.add(attributes["evaluations.0.evaluation.label"])
        assert span["parent_id"] in set(sent.values())  # inside the RAG span it checked
        events = [e for e in span["events"] if e["name"] == "gen_ai.evaluation.result"]
        assert len(events) == 1 + attributes["groundwire.claims"]
    assert labels == {"accept", "reject", "escalate"}


def test_a_row_that_could_not_be_checked_is_an_error_annotation(lexical) -> None:
    frame = pd.DataFrame({"answer": [BAD], "context": [[]]}, index=["00000000000000b2"])
    (annotation,) = span_annotations(verify_many(frame, verifier=lexical))
    assert annotation["span_id"] == "00000000000000b2" and annotation["result"]["label"] == "error"
    assert "score" not in annotation["result"] and annotation["result"]["explanation"].startswith("error: ")

