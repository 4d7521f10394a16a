"""OpenTelemetry spans around groundwire's steps (verify, judge, generate), when opentelemetry-api is installed
(the `otel` extra). Without it, or without a configured SDK, `traced` costs one dictionary lookup per call.
Spans carry the answer's score, decision and claim count; never the answer or context text."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@functools.cache
def _get_tracer() -> Any:
    """The tracer, looked up once (None when opentelemetry is not installed); `cache_clear()` looks again."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer("groundwire")


def traced(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Run the function inside a span `name`; a result with score / decision / claims is summarised on it."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            tracer = _get_tracer()
            if tracer is None:
                return function(*args, **kwargs)
            with tracer.start_as_current_span(name) as span:
                result = function(*args, **kwargs)
                for key, value in _summary(result).items():
                    span.set_attribute(f"groundwire.{key}", value)
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
