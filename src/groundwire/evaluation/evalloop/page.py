"""The eval loop's HTML report: one self-contained page of line charts over time and tables per release and
segment."""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from groundwire.core import cancel
from groundwire.evaluation.charts import line_chart, svg_block
from groundwire.evaluation.evalloop.items import GENERATOR_DRIFT, RETRIEVAL_MISS, UNDETERMINED
from groundwire.evaluation.labels import labels_html

if TYPE_CHECKING:  # pragma: no cover
    from groundwire.evaluation.evalloop.loop import EvalLoopResult

_PLOTTED = (
    "faithfulness",
    "grounded_rate",
    "refusal_rate",
    "escalation_rate",
    "retrieval_hit_rate",
    "non_answer_rate",
    "thumbs_down_rate",
)


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2rem;max-width:1100px}"
    "table{border-collapse:collapse;margin:1rem 0;font-size:.85rem}"
    "td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:right}"
    "th:first-child,td:first-child,td.text{text-align:left}"
    "figure{margin:.5rem 0}figure svg{max-width:100%;height:auto;background:#fafafa;border:1px solid #ddd}"
)
_NO_CLAIM = "(the verifier found no unsupported claim)"
CHART_LEFT_OUT = "<p><em>Chart left out: the call's time budget (serve --time-budget) did not leave time to draw it.</em></p>"


class _ChartTime:
    """The slowest chart drawn in this process, so that a page drawn under a time budget (the service's eval report)
    draws a chart only with twice that left, and answers in time without it otherwise. Before any chart: FIRST_S,
    for the first one loads matplotlib too (1-3 s on a loaded machine)."""

    FIRST_S = 1.5

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.slowest_s: float | None = None

    def leaves_room(self) -> bool:
        left = cancel.remaining()
        return left is None or left > 2 * (self.FIRST_S if self.slowest_s is None else self.slowest_s)

    def took(self, seconds: float) -> None:
        with self._lock:
            self.slowest_s = max(seconds, self.slowest_s or 0.0)


CHART_TIME = _ChartTime()


def render_html(result: EvalLoopResult) -> str:
    """A self-contained page: line charts over time (inline SVG drawn by matplotlib, see charts.py), then
    tables per release and segment."""
    meta = {key: html.escape(str(result.meta.get(key) or "")) for key in ("generated_at", "release", "scope")}
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>groundwire eval loop</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>groundwire eval loop</h1>",
        f"<p>Generated {meta['generated_at']}; release {meta['release'] or 'none'}; "
        f"scope {meta['scope'] or 'all'}.</p>",
    ]
    not_checked = (result.meta.get("evidence") or {}).get("reason")
    if not_checked:  # the run's budget left failures unchecked: said where the figures are read
        parts.append(f"<p><strong>Not every failure was checked:</strong> {html.escape(not_checked)}</p>")
    if result.rolling and result.rolling.get("by_day"):
        parts.append("<h2>Request log: metrics by day</h2>")
        parts.append(_chart(_series(result.rolling["by_day"]), title="rolling sample, by day"))
        parts.append(_claim_density_chart(result.rolling["by_day"]))
    for kind, heading in (("frozen", "Frozen set"), ("rolling", "Rolling sample")):
        runs = {_run_label(run): run["metrics"].get(kind) or {} for run in result.history}
        if any(runs.values()):
            parts.append(f"<h2>{heading}: metrics over eval runs</h2>")
            parts.append(_chart(_series(runs), title=f"{heading.lower()}, per eval run"))
    for name, section in (("Frozen set", result.frozen), ("Rolling sample of the request log", result.rolling)):
        if not section:
            continue
        parts.append(f"<h2>{name}</h2>")
        parts.append(_table({"overall": section["overall"]}, "all"))
        parts.append("<h3>Per release</h3>" + _table(section["by_release"], "release"))
        parts.append("<h3>Per segment</h3>" + _table(section["by_segment"], "segment"))
        if section.get("detection"):
            parts.append("<h3>Detection against gold labels</h3>" + _table({"all": section["detection"]}, ""))
        if section["failure_examples"]:
            rows = "".join(
                f"<tr><td>{html.escape(e['id'])}</td><td>{html.escape(str(e['failure']))}</td>"
                f"<td class='text'>{html.escape(' | '.join(e['unsupported']) or _NO_CLAIM)}</td></tr>"
                for e in section["failure_examples"]
            )
            parts.append(
                f"<h3>Failures</h3><table><tr><th>id</th><th>kind</th><th>unsupported claims</th></tr>{rows}</table>"
            )
    if result.labels:
        parts.append(labels_html(result.labels))
    parts.append("</body></html>")
    return "\n".join(parts)


def _run_label(run: Mapping[str, Any]) -> str:
    return f"#{run['id']} {str(run['created_at'])[:10]} {run.get('release') or ''}".strip()


def _series(points: Mapping[str, Mapping[str, Any]]) -> dict[str, list[tuple[str, float | None]]]:
    return {metric: [(label, values.get(metric)) for label, values in points.items()] for metric in _PLOTTED}


def _chart(series: Mapping[str, Sequence[tuple[str, float | None]]], *, title: str, y_max: float | None = 1.0) -> str:
    """The chart, or, under a time budget that leaves too little for it (`CHART_TIME`), a line that says so."""
    if not CHART_TIME.leaves_room():
        return CHART_LEFT_OUT
    started = time.perf_counter()
    block = svg_block(line_chart(series, title=title, y_max=y_max), label=title)
    CHART_TIME.took(time.perf_counter() - started)
    return block


def _claim_density_chart(by_day: Mapping[str, Mapping[str, Any]]) -> str:
    return _chart(
        {"claim_density": [(day, m.get("claim_density")) for day, m in by_day.items()]},
        title="concrete claims per answer",
        y_max=None,
    )


def _table(groups: Mapping[str, Mapping[str, Any]], label: str) -> str:
    if not groups:
        return "<p>none</p>"
    columns = [k for k in next(iter(groups.values())) if k != "failures"]
    has_failures = any("failures" in m for m in groups.values())
    head = "".join(f"<th>{html.escape(c)}</th>" for c in [label, *columns]) + (
        "<th>miss / drift / undetermined</th>" if has_failures else ""
    )
    rows = []
    for name, m in groups.items():
        cells = "".join(f"<td>{_fmt(m.get(c))}</td>" for c in columns)
        if has_failures:
            f = m.get("failures") or {}
            cells += f"<td>{f.get(RETRIEVAL_MISS, 0)} / {f.get(GENERATOR_DRIFT, 0)} / {f.get(UNDETERMINED, 0)}</td>"
        rows.append(f"<tr><td>{html.escape(name)}</td>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _fmt(value: Any) -> str:
    if value is None:
        return "&ndash;"
    if isinstance(value, float):
        return f"{value:.3f}"
    return html.escape(str(value))
