"""groundwire scores through Langfuse's real SDK, sent to a recorder on 127.0.0.1.

Langfuse's server needs PostgreSQL and ClickHouse (and Redis, S3), which this machine does not run, so the test
stands a small HTTP server where the SDK's base_url points and records what the SDK sends: the OTLP trace export
(/api/public/otel/v1/traces) and the score batches (POST /api/public/scores), answered as Langfuse answers them
(202 {"message": "Accepted"}). The assertions read those payloads."""

from __future__ import annotations

import base64
import gzip
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from test_one_rule import CASES

from conftest import BAD, GOOD, QUESTION, REFUND
from groundwire.adapters.common import AdapterCheck, Outcome

pytest.importorskip("langfuse")
pd = pytest.importorskip("pandas")
from langfuse import Langfuse  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402

from groundwire import verify_many  # noqa: E402
from groundwire.adapters.langfuse import check_and_score, log_scores  # noqa: E402
from groundwire.core import tracing  # noqa: E402

PUBLIC, SECRET = "pk-lf-groundwire-test", "sk-lf-groundwire-test"
OPENING = {Outcome.PASS: "pass:", Outcome.FAIL: "fail:", Outcome.REVIEW: "needs review:"}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Recorder(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), RecordingHandler)
        self.requests: list[Request] = []
        self.lock = threading.Lock()

    def scores(self) -> list[dict]:
        with self.lock:
            return [score for r in self.requests if r.method == "POST" and r.path == "/api/public/scores"
                    for score in json.loads(r.body)]

    def spans(self) -> list:
        with self.lock:
            exports = [r for r in self.requests if r.path == "/api/public/otel/v1/traces"]
        found = []
        for export in exports:
            message = ExportTraceServiceRequest()
            message.ParseFromString(export.body)
            found += [span for resource in message.resource_spans for scope in resource.scope_spans
                      for span in scope.spans]
        return found

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()


class RecordingHandler(BaseHTTPRequestHandler):
    server: Recorder

    def _record(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        with self.server.lock:
            self.server.requests.append(Request(self.command, self.path.split("?")[0], dict(self.headers), body))
        if self.path.startswith("/api/public/otel/"):
            self._answer(200, b"", "application/x-protobuf")
        elif self.path.startswith("/api/public/scores"):
            self._answer(202, b'{"message": "Accepted"}', "application/json")
        else:
            self._answer(200, b"{}", "application/json")

    def _answer(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = _record

    def log_message(self, *args: object) -> None:  # quiet
        pass


@pytest.fixture(scope="module")
def recorder() -> Iterator[Recorder]:
    server = Recorder()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def provider() -> TracerProvider:
    """A TracerProvider of this module's own: Langfuse would otherwise install one as the process's global one."""
    return TracerProvider()


@pytest.fixture(scope="module")
def langfuse(recorder: Recorder, provider: TracerProvider) -> Iterator[Langfuse]:
    client = Langfuse(public_key=PUBLIC, secret_key=SECRET, base_url=f"http://127.0.0.1:{recorder.server_port}",
                      tracer_provider=provider, environment="test")
    yield client
    client.shutdown()


@pytest.fixture(autouse=True)
def fresh(recorder: Recorder) -> None:
    recorder.clear()


def test_check_and_score_scores_the_current_trace_and_observation(langfuse, recorder, lexical) -> None:
    with langfuse.start_as_current_observation(name="rag") as span:
        assessment = check_and_score(langfuse, BAD, [REFUND], QUESTION, check=AdapterCheck(verifier=lexical))
        trace_id, observation_id = span.trace_id, span.id
    langfuse.flush()
    assert assessment.outcome is Outcome.FAIL
    decision, numeric = sorted(recorder.scores(), key=lambda s: s["name"])  # groundwire_route, groundwire_supported_share
    assert numeric["name"] == "groundwire_supported_share" and numeric["dataType"] == "NUMERIC"
    assert numeric["value"] == 0.5 == assessment.value == assessment.supported_share  # 1 of 2 claims supported
    assert (numeric["traceId"], numeric["observationId"]) == (trace_id, observation_id)
    assert numeric["comment"] == assessment.reason and numeric["comment"].startswith("fail: 1 of 2 claims")
    assert '"Refunds are accepted within 90 days of purchase.": CONTRADICTED' in numeric["comment"]
    meta = numeric["metadata"]
    assert (meta["route"], meta["outcome"], meta["passed"], meta["supported_share"]) == ("reject", "fail", False, 0.5)
    assert numeric["environment"] == "test"
    assert decision["name"] == "groundwire_route" and decision["dataType"] == "CATEGORICAL"
    assert decision["value"] == "reject" and decision["traceId"] == trace_id
    assert decision["comment"] == assessment.reason.splitlines()[0]
    # The observation went out as an OTLP span of the same trace, and both went with the project's keys.
    (rag,) = [s for s in recorder.spans() if s.name == "rag"]
    assert rag.trace_id.hex() == trace_id and rag.span_id.hex() == observation_id
    auth = "Basic " + base64.b64encode(f"{PUBLIC}:{SECRET}".encode()).decode()
    score_posts = [r for r in recorder.requests if r.path == "/api/public/scores"]
    assert score_posts and all(r.headers.get("Authorization") == auth for r in score_posts)


def test_outside_a_trace_a_trace_id_is_required(langfuse, lexical) -> None:
    with pytest.raises(ValueError, match="no trace to score"):
        check_and_score(langfuse, GOOD, [REFUND], check=AdapterCheck(verifier=lexical))


def test_log_scores_sends_the_three_answers_of_the_one_rule(langfuse, recorder, lexical) -> None:
    trace_ids = [Langfuse.create_trace_id(seed=answer) for answer, *_ in CASES]
    frame = pd.DataFrame({"answer": [a for a, *_ in CASES], "context": [[c] for _, c, _, _ in CASES],
                          "question": [q for *_, q, _ in CASES]}, index=trace_ids)
    evaluations = log_scores(langfuse, verify_many(frame, verifier=lexical))
    langfuse.flush()
    sent = {(s["traceId"], s["name"]): s for s in recorder.scores()}
    assert len(sent) == 6 and len(evaluations) == 3
    for trace_id, (answer, context, question, expected) in zip(trace_ids, CASES):
        report = lexical.verify(answer, [context], question=question)
        numeric = sent[trace_id, "groundwire_supported_share"]
        decision = sent[trace_id, "groundwire_route"]
        assert numeric["value"] == report.supported_share  # the one rule's score
        assert numeric["metadata"]["outcome"] == expected.value and numeric["metadata"]["passed"] is (
            expected is Outcome.PASS)
        assert decision["value"] == report.route.value
        assert numeric["comment"].startswith(OPENING[expected]) and "observationId" not in numeric


def test_log_scores_with_claims_and_an_unchecked_row(langfuse, recorder, lexical) -> None:
    trace_ids = [Langfuse.create_trace_id(seed=s) for s in ("bad", "broken")]
    frame = pd.DataFrame({"answer": [BAD, GOOD], "context": [[REFUND], []], "question": [QUESTION, QUESTION]},
                         index=trace_ids)
    results, claims = verify_many(frame, verifier=lexical, claims=True)
    log_scores(langfuse, results, claims=claims, metric="score", observation_ids=["00000000000000a1", None])
    langfuse.flush()
    sent = {(s["traceId"], s["name"]): s for s in recorder.scores()}
    bad = sent[trace_ids[0], "groundwire_score"]  # named after the quantity metric= chose
    assert bad["value"] == lexical.verify(BAD, [REFUND], question=QUESTION).score == bad["metadata"]["score"]
    assert bad["observationId"] == "00000000000000a1"
    assert bad["comment"].splitlines()[1].startswith('- "Refunds are accepted within 90 days of purchase."')
    # the row verify_many could not check: a categorical "error" with its reason, and no number
    assert (trace_ids[1], "groundwire_score") not in sent
    broken = sent[trace_ids[1], "groundwire_route"]
    assert broken["value"] == "error" and broken["comment"].startswith("error: ")
    assert broken["metadata"]["error_code"] == results.loc[trace_ids[1], "error_code"]


def test_langfuses_default_filter_exports_groundwires_spans(langfuse, recorder, lexical) -> None:
    """Langfuse's SDK exports only its own spans, known instrumentations' and spans with a `gen_ai.*` attribute
    (langfuse.span_filter.is_default_export_span): groundwire's verify span reaches Langfuse inside the
    observation it checked, and the GenAI evaluation events are on that observation, with the response's id.
    The client has a tracer provider of its own (not the global one): check_and_score sends groundwire's spans
    through it, with nothing set by the caller."""
    with langfuse.start_as_current_observation(name="rag", as_type="generation") as generation:
        check_and_score(langfuse, BAD, [REFUND], QUESTION, check=AdapterCheck(verifier=lexical),
                        response_id="chatcmpl-7")
    langfuse.flush()
    spans = {span.name: span for span in recorder.spans()}
    verify, rag = spans["groundwire.verify"], spans["rag"]
    assert verify.parent_span_id.hex() == generation.id and verify.trace_id.hex() == generation.trace_id
    attributes = {a.key: a.value for a in verify.attributes}
    assert attributes["gen_ai.evaluation.name"].string_value == "groundwire.grounding"
    assert attributes["gen_ai.evaluation.score.label"].string_value == "reject"
    assert attributes["gen_ai.response.id"].string_value == "chatcmpl-7"
    events = [{a.key: a.value for a in event.attributes} for event in rag.events]
    assert [e["gen_ai.evaluation.score.label"].string_value for e in events
            if e["gen_ai.evaluation.name"].string_value == "groundwire.grounding"] == ["reject"]
    assert {e["gen_ai.response.id"].string_value for e in events} == {"chatcmpl-7"}


def test_use_tracer_provider_sends_groundwires_spans_through_the_callers_provider(langfuse, provider, recorder,
                                                                                   lexical) -> None:
    """A check made outside the adapter (lexical.verify) inside an observation: its span reaches Langfuse once the
    client's provider is given to groundwire, the public way; None goes back to the global provider."""
    with langfuse.start_as_current_observation(name="before"):
        lexical.verify(BAD, [REFUND], question=QUESTION)
    langfuse.flush()
    assert "groundwire.verify" not in {span.name for span in recorder.spans()}  # the global provider: not Langfuse's
    tracing.use_tracer_provider(provider)  # the one given to Langfuse(tracer_provider=...)
    try:
        with langfuse.start_as_current_observation(name="rag") as span:
            lexical.verify(BAD, [REFUND], question=QUESTION)
    finally:
        tracing.use_tracer_provider(None)
    langfuse.flush()
    (verify,) = [s for s in recorder.spans() if s.name == "groundwire.verify"]
    assert verify.parent_span_id.hex() == span.id and verify.trace_id.hex() == span.trace_id


def test_a_disabled_client_scores_nothing_and_says_so(recorder, lexical, monkeypatch, caplog) -> None:
    """`Langfuse()` without keys (local development, CI): the check runs inside its observation and comes back,
    nothing is sent, and a log line says that no score was."""
    for variable in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY"):
        monkeypatch.delenv(variable, raising=False)
    disabled = Langfuse(base_url=f"http://127.0.0.1:{recorder.server_port}")
    caplog.set_level("INFO", logger="groundwire.adapters.langfuse")
    with disabled.start_as_current_observation(name="rag"):
        assessment = check_and_score(disabled, BAD, [REFUND], QUESTION, check=AdapterCheck(verifier=lexical))
    assert assessment.outcome is Outcome.FAIL and assessment.value == 0.5
    frame = pd.DataFrame({"answer": [GOOD], "context": [[REFUND]], "question": [QUESTION]}, index=["t1"])
    (evaluation,) = log_scores(disabled, verify_many(frame, verifier=lexical))
    assert evaluation.target == "t1" and evaluation.passed
    disabled.flush()
    assert recorder.scores() == []
    logged = [r.getMessage() for r in caplog.records if r.name == "groundwire.adapters.langfuse"]
    assert logged == ["Langfuse client is disabled (no keys, or tracing off): fail not scored",
                      "Langfuse client is disabled (no keys, or tracing off): 1 results not scored"]
