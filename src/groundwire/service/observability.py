"""Prometheus metrics and OpenTelemetry tracing for the service.

`/metrics` is served by prometheus-fastapi-instrumentator (requests by handler and status, latency histograms)
plus groundwire's own series on the same per-app registry (so two apps in one process never collide):
answers by route, check latency by endpoint, judge calls and failures, cache lookups, model load time, and the worker
pool's queue, busy workers and busy refusals (`watch_pool`).
When the `otel` extra is installed, FastAPIInstrumentor adds a span per request; groundwire.core.tracing adds
the verify, judge and generate spans inside it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial

from fastapi import FastAPI
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from groundwire.foundation.types import Report
from groundwire.service.workers import BUSY_LIMITS, LANES, WorkerPool


class ServiceMetrics:
    """groundwire's series; `registry` is what /metrics serves."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.routes = Counter("groundwire_routes", "Answers checked, by endpoint and route",
                              ["endpoint", "route"], registry=self.registry)
        # 0.1's name for the same count, kept for one release so that dashboards and alerts can move (issue 57)
        self.decisions = Counter("groundwire_decisions", "Deprecated: groundwire_routes_total{endpoint,route}",
                                 ["endpoint", "decision"], registry=self.registry)
        self.check_seconds = Histogram("groundwire_check_seconds", "Time to check and log one request, by endpoint",
                                       ["endpoint"], registry=self.registry,
                                       buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.judge_calls = Counter("groundwire_judge_calls", "LLM judge calls", registry=self.registry)
        self.judge_failures = Counter("groundwire_judge_failures", "LLM judge calls that failed",
                                      registry=self.registry)
        self.cache_lookups = Counter("groundwire_cache_lookups", "Semantic-cache lookups of /v1/generate",
                                     ["result"], registry=self.registry)
        self.model_load_seconds = Gauge("groundwire_model_load_seconds", "Seconds the verifier model took to load",
                                        registry=self.registry)

    def observe(self, endpoint: str, report: Report, *, seconds: float, extra: Mapping[str, object] | None) -> None:
        """One logged request: its route, its latency, the judge calls its report records, a cache hit."""
        self.routes.labels(endpoint, report.route.value).inc()
        self.decisions.labels(endpoint, report.route.value).inc()
        self.check_seconds.labels(endpoint).observe(seconds)
        if (judge := report.meta.judge) is not None:
            self.judge_calls.inc(judge.calls)
            self.judge_failures.inc(judge.failed_calls)
        if extra is not None and "cached" in extra:
            self.cache_lookups.labels("hit" if extra["cached"] else "miss").inc()

    def watch_pool(self, pool: WorkerPool) -> None:
        """The worker pool's state, read at each scrape: checks waiting, workers busy by lane, and busy refusals by
        the limit they met (no scope names: /metrics is unauthenticated)."""
        waiting = Gauge("groundwire_pool_waiting", "Checks waiting for a worker", registry=self.registry)
        waiting.set_function(lambda: pool.waiting)
        busy = Gauge("groundwire_pool_busy_workers", "Workers running a check, by lane", ["lane"],
                     registry=self.registry)
        for lane in LANES:
            busy.labels(lane).set_function(partial(pool.busy, lane))
        self.registry.register(_BusyRefusals(pool))


class _BusyRefusals(Collector):
    """groundwire_busy_refusals_total{limit}: the pool counts its refusals itself, so that it needs no metrics."""

    def __init__(self, pool: WorkerPool) -> None:
        self.pool = pool

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily("groundwire_busy_refusals", "503 busy refusals, by the limit they met",
                                     labels=["limit"])
        for limit in BUSY_LIMITS:
            family.add_metric([limit], self.pool.refused[limit])
        yield family


def install(app: FastAPI, metrics: ServiceMetrics) -> None:
    """Serve /metrics; trace requests when OpenTelemetry's FastAPI instrumentation is installed."""
    from prometheus_fastapi_instrumentator import Instrumentator

    Instrumentator(registry=metrics.registry, excluded_handlers=["/metrics", "/static"]).instrument(app).expose(
        app, endpoint="/metrics", include_in_schema=False)
    try:
        from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
    except ImportError:  # the otel extra is not installed: no request spans
        return
    FastAPIInstrumentor.instrument_app(app, excluded_urls="metrics,static")
