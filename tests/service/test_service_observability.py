"""/metrics (Prometheus text, scraped and parsed) and OpenTelemetry spans (in-memory exporter)."""

from __future__ import annotations

import pytest
from service_common import ALPHA

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families

CHUNKS = [{"id": "S1", "text": "Refunds are accepted within 30 days of purchase."}]


def scrape(client) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics as {(name, sorted labels): value}."""
    response = client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.text) for s in family.samples}


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_count_requests_routes_and_latency(client) -> None:
    before = scrape(client)
    for answer in ("Refunds are accepted within 30 days of purchase.", "Refunds are accepted within 90 days."):
        assert client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "chunks": CHUNKS}).status_code == 200
    assert client.post("/v1/verify", headers=ALPHA, json={"answer": "", "chunks": CHUNKS}).status_code == 422
    samples = scrape(client)
    assert value(samples, "groundwire_routes_total", endpoint="verify", route="accept") == 1
    assert value(samples, "groundwire_routes_total", endpoint="verify", route="reject") == 1
    # 0.1's series, counted beside it for one release
    assert value(samples, "groundwire_decisions_total", endpoint="verify", decision="accept") == 1
    assert value(samples, "groundwire_decisions_total", endpoint="verify", decision="reject") == 1
    assert value(samples, "groundwire_check_seconds_count", endpoint="verify") == 2
    ok = value(samples, "http_requests_total", handler="/v1/verify", method="POST", status="2xx")
    bad = value(samples, "http_requests_total", handler="/v1/verify", method="POST", status="4xx")
    assert (ok, bad) == (2, 1)
    assert value(before, "http_requests_total", handler="/v1/verify", method="POST", status="2xx") == 0
    latency = [v for (name, labels), v in samples.items()
               if name == "http_request_duration_seconds_count" and ("handler", "/v1/verify") in labels]
    assert sum(latency) == 3
    assert value(samples, "groundwire_model_load_seconds") > 0
    assert ("groundwire_judge_calls_total", ()) in samples and ("groundwire_judge_failures_total", ()) in samples
    assert not any(labels and ("handler", "/metrics") in labels for _, labels in samples)  # scrapes not counted


def test_spans_for_requests_and_verify(settings) -> None:
    pytest.importorskip("opentelemetry.sdk")
    pytest.importorskip("opentelemetry.instrumentation.fastapi")
    from fastapi.testclient import TestClient
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from groundwire.core import tracing
    from groundwire.service import create_app

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # once per process; later tests only add spans to this exporter
    tracing.use_tracer_provider(None)  # look the global provider's tracer up again: this one
    app = create_app(settings)
    with TestClient(app) as client:
        exporter.clear()
        answer = "Refunds are accepted within 90 days."
        assert client.post("/v1/verify", headers=ALPHA, json={"answer": answer, "chunks": CHUNKS}).status_code == 200
    spans = {span.name: span for span in exporter.get_finished_spans()}
    verify = spans["groundwire.verify"]
    assert verify.attributes["groundwire.route"] == "reject" and verify.attributes["groundwire.claims"] == 1
    assert answer not in str(dict(verify.attributes))  # no user text on spans
    request = next(span for name, span in spans.items() if "/v1/verify" in name and span.parent is None)
    assert verify.parent is not None and verify.context.trace_id == request.context.trace_id
