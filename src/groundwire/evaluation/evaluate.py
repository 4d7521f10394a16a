"""Run the verifier over a grounding-eval JSONL file and measure how well it flags hallucinated answers."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from groundwire.core.verifier import Verifier
from groundwire.data.rows import EvalRow
from groundwire.evaluation.metrics import DetectionMetrics, detection_metrics
from groundwire.evaluation.operating import RoutingRates, rates_of_routes
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.types import Chunk, Report, Route
from groundwire.pipeline import CheckItem, check_many


@dataclass(frozen=True, slots=True)
class RowOutcome:
    row: EvalRow
    report: Report | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class EvalSummary:
    file: str
    model_id: str
    overall: DetectionMetrics
    per_task: dict[str, DetectionMetrics]
    seconds: float
    errors: list[dict[str, Any]] = field(default_factory=list)
    unlabelled: int = 0
    routing: dict[str, RoutingRates] = field(default_factory=dict)
    """False-accept, false-reject and escalation rates per task and for "all", from the reports' decisions."""
    scored: list[tuple[bool, float]] = field(default_factory=list, repr=False)
    """(hallucinated, score) of every labelled answer, for re-deriving thresholds (`--target-far`)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file, "model_id": self.model_id, "seconds": round(self.seconds, 3),
            "overall": self.overall.to_dict(), "per_task": {k: v.to_dict() for k, v in self.per_task.items()},
            "errors": self.errors, "unlabelled": self.unlabelled,
            "routing": {k: v.to_dict() for k, v in self.routing.items()},
        }

    def final_line(self) -> str:
        m, r = self.overall, self.routing.get("all")
        rates = "" if r is None else (f" false_accept={_fmt(r.false_accept)} false_reject={_fmt(r.false_reject)}"
                                      f" escalated={_fmt(r.escalated)}")
        return (f"balanced_accuracy={_fmt(m.balanced_accuracy)} f1={_fmt(m.f1_hallucinated)} auroc={_fmt(m.auroc)}"
                f"{rates} n={m.n}")


def row_chunks(row: EvalRow) -> list[Chunk]:
    return list(row.chunks)


def verify_rows(rows: Iterable[EvalRow], verifier: Verifier) -> Iterator[RowOutcome]:
    """Verify each row through `pipeline.check_many`; a row that cannot be checked is reported with its id, never
    dropped."""
    rows = list(rows)
    items = (CheckItem(row.answer, row_chunks(row), question=row.question, task=row.task) for row in rows)
    for row, checked in zip(rows, check_many(verifier, items), strict=True):
        yield RowOutcome(row, checked.report, checked.error)


def evaluate(
    rows: Iterable[EvalRow], verifier: Verifier, *, file: str = "", on_row: Callable[[RowOutcome], None] | None = None
) -> EvalSummary:
    started = time.perf_counter()
    by_task: dict[str, list[tuple[bool, float, Route]]] = defaultdict(list)
    errors: list[dict[str, Any]] = []
    unlabelled = 0
    for outcome in verify_rows(rows, verifier):
        if on_row is not None:
            on_row(outcome)
        if outcome.report is None:
            errors.append({"id": outcome.row.id, "line": outcome.row.line, "error": outcome.error})
        elif outcome.row.hallucinated is None:
            unlabelled += 1
        else:
            report = outcome.report
            by_task[outcome.row.task].append(
                (outcome.row.hallucinated, report.score, report.route)
            )
    labelled = [item for items in by_task.values() for item in items]
    if not labelled:
        raise InputError(f"{file or 'input'}: no labelled rows to evaluate ('hallucinated' must be true or false)",
                         code=ErrorCode.NO_ROWS)
    return EvalSummary(
        file=file,
        model_id=verifier.model_id,
        overall=_metrics(labelled),
        per_task={task: _metrics(items) for task, items in sorted(by_task.items())},
        seconds=time.perf_counter() - started,
        errors=errors,
        unlabelled=unlabelled,
        routing={task: _rates(items) for task, items in [*sorted(by_task.items()), ("all", labelled)]},
        scored=[(label, score) for label, score, _ in labelled],
    )


def _metrics(items: list[tuple[bool, float, Route]]) -> DetectionMetrics:
    labels, scores, routes = zip(*items, strict=True)
    return detection_metrics(labels, scores, [route is not Route.ACCEPT for route in routes])


def _rates(items: list[tuple[bool, float, Route]]) -> RoutingRates:
    labels, _, routes = zip(*items, strict=True)
    return rates_of_routes(labels, [r is Route.ACCEPT for r in routes], [r is Route.REJECT for r in routes])


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
