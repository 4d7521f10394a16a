"""What `groundwire eval` writes besides its table: `--predictions` (one JSON row per answer, for error
analysis) and `--html` (a self-contained page: ROC and precision-recall curves, and score histograms of
hallucinated and faithful answers with the accept and reject thresholds drawn and the escalation band shaded,
overall and per task)."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from groundwire.evaluation.charts import (
    LABEL_COLOURS,
    ROUTE_COLOURS,
    curve_colours,
    pr_chart,
    roc_chart,
    score_histogram,
    svg_block,
)
from groundwire.evaluation.evaluate import EvalSummary, RowOutcome
from groundwire.evaluation.metrics import precision_recall_curve, roc_curve
from groundwire.evaluation.operating import RoutingRates
from groundwire.foundation.types import Verdict

Thresholds = Callable[[str | None], tuple[float, float]]
"""(accept_at, reject_at) for a task (None = pooled): Verifier.thresholds_for."""


def prediction(outcome: RowOutcome) -> dict[str, Any]:
    """One answer: its label, the verifier's score and route, and the claims it did not find supported."""
    row, report = outcome.row, outcome.report
    out: dict[str, Any] = {"id": row.id, "line": row.line, "task": row.task, "source": row.source,
                           "hallucinated": row.hallucinated}
    if report is None:
        return out | {"error": outcome.error}
    return out | {
        "score": report.score,
        "route": report.route.value,
        "flagged": not report.grounded,
        "supported_share": report.supported_share,
        "n_claims": len(report.claims),
        "unsupported": [{"claim": c.claim.text, "verdict": c.verdict.value, "score": c.score,
                         "checks": [f.check for f in c.checks]}
                        for c in report.claims if c.verdict is not Verdict.SUPPORTED],
        "error": None,
    }


def write_predictions(outcomes: Sequence[RowOutcome], path: Path) -> None:
    with path.open("w", encoding="utf-8") as sink:
        for outcome in outcomes:
            sink.write(json.dumps(prediction(outcome), ensure_ascii=False) + "\n")


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2rem;max-width:1400px;color:#111}"
    "table{border-collapse:collapse;margin:1rem 0;font-size:.85rem}"
    "td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}th:first-child,td:first-child{text-align:left}"
    ".charts{display:flex;flex-wrap:wrap;gap:1rem}figure{margin:0}"
    "figure svg{width:420px;height:auto;border:1px solid #ddd;background:#fff}"
)


def render_html(summary: EvalSummary, outcomes: Sequence[RowOutcome], thresholds: Thresholds) -> str:
    """The page: the metrics table, then charts. With several tasks, one ROC and one precision-recall chart
    compare them, and each task has its own section; a task that holds every answer would only repeat the
    "All answers" charts, so it has none. Each curve, label and route keeps one colour on the whole page
    (listed in the page's `chart-colours` JSON)."""
    labelled = [o for o in outcomes if o.report is not None and o.row.hallucinated is not None]
    groups: dict[str, list[RowOutcome]] = {"all": labelled}
    for task in summary.per_task:
        items = [o for o in labelled if o.row.task == task]
        if len(items) < len(labelled):
            groups[task] = items
    metrics = {"all": summary.overall, **summary.per_task}
    curves = {}
    for name, items in groups.items():
        labels = [bool(o.row.hallucinated) for o in items]
        if any(labels) and not all(labels):
            scores = [o.report.score for o in items if o.report is not None]
            curves[name] = (roc_curve(labels, scores), precision_recall_curve(labels, scores), sum(labels) / len(labels))
    colours = curve_colours(list(groups))
    compared = len(curves) > 1  # the "all" curves are drawn in the comparison; else in the "All answers" section
    title = f"{Path(summary.file).name} — {summary.model_id}"
    legend = {"curves": colours, "labels": LABEL_COLOURS, "routes": ROUTE_COLOURS}
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>groundwire eval: {html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>groundwire eval: {html.escape(title)}</h1>",
        f"<p>{summary.overall.n} labelled answers ({summary.overall.positives} hallucinated); "
        f"{summary.unlabelled} unlabelled; {len(summary.errors)} could not be checked; {summary.seconds:.1f} s.</p>",
        _metrics_table(metrics, summary.routing),
        # the colours as data, so a reader (or a test) can tell what each stroke stands for; "</" cannot end it
        "<script type='application/json' id='chart-colours'>"
        + json.dumps(legend, ensure_ascii=False).replace("</", "<\\/") + "</script>",
    ]
    if compared:
        parts.append("<h2>All tasks</h2><div class='charts'>")
        parts.append(svg_block(roc_chart({n: (roc, metrics[n].auroc) for n, (roc, _, _) in curves.items()},
                                         colours=colours, key="roc-tasks", title="ROC, per task"),
                               label="ROC curves per task"))
        parts.append(svg_block(pr_chart({n: (pr, rate) for n, (_, pr, rate) in curves.items()}, colours=colours,
                                        key="pr-tasks", title="Precision-recall, per task"),
                               label="precision-recall curves per task"))
        parts.append("</div>")
    for name, items in groups.items():
        accept_at, reject_at = thresholds(None if name == "all" else name)
        hallucinated = [o.report.score for o in items if o.report is not None and o.row.hallucinated]
        faithful = [o.report.score for o in items if o.report is not None and not o.row.hallucinated]
        heading = "All answers" if name == "all" else f"Task: {name}"
        if name == "all" and len(summary.per_task) == 1:
            heading += f" (one task: {next(iter(summary.per_task))})"
        parts.append(f"<h2>{html.escape(heading)}</h2><div class='charts'>")
        parts.append(svg_block(score_histogram(hallucinated, faithful, accept_at=accept_at, reject_at=reject_at,
                                               key=f"hist-{name}", title=f"answer scores: {name}"),
                               label=f"score histogram {name}"))
        if name in curves and (name != "all" or not compared):
            roc, pr, rate = curves[name]
            parts.append(svg_block(roc_chart({name: (roc, metrics[name].auroc)}, colours=colours, key=f"roc-{name}",
                                             title=f"ROC: {name}"), label=f"ROC {name}"))
            parts.append(svg_block(pr_chart({name: (pr, rate)}, colours=colours, key=f"pr-{name}",
                                            title=f"Precision-recall: {name}"), label=f"precision-recall {name}"))
        parts.append("</div>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _metrics_table(metrics: dict[str, Any], routing: dict[str, RoutingRates]) -> str:
    columns = ("task", "n", "hallucinated", "balanced acc", "F1 (halluc.)", "AUROC", "false accept", "false reject",
               "escalated")
    head = "".join(f"<th>{c}</th>" for c in columns)
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{m.n}</td><td>{m.positives}</td><td>{_num(m.balanced_accuracy)}</td>"
        f"<td>{_num(m.f1_hallucinated)}</td><td>{_num(m.auroc)}</td>{_rates(routing.get(name))}</tr>"
        for name, m in metrics.items()
    )
    note = ("<p>false accept: hallucinated answers routed ACCEPT; false reject: faithful answers routed REJECT; "
            "escalated: answers sent to the judge.</p>")
    return f"<table><tr>{head}</tr>{rows}</table>{note}"


def _rates(rates: RoutingRates | None) -> str:
    if rates is None:
        return "<td>–</td>" * 3
    return "".join(f"<td>{_num(v)}</td>" for v in (rates.false_accept, rates.false_reject, rates.escalated))


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"
