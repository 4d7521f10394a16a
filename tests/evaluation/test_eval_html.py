"""`groundwire eval --html/--predictions`: the report's charts render in headless chromium (screenshot in
tests/artifacts/eval/), draw each chart once (one task: no repeated section), keep one colour per curve,
label and route, shade the escalation band and keep a reject line at 0.00 clear of the y axis (read from the
SVG's element ids); and the predictions file has one row per answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chromium import needs_chromium, start_chromium
from groundwire import Verifier
from groundwire.cli.main import app
from groundwire.core.explain import format_threshold
from groundwire.scoring import get_scorer

pytest.importorskip("matplotlib")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "eval"

POLICY = ["Refunds are accepted within 30 days of purchase. Shipping to EU countries takes 3 to 5 business days "
          "and costs 15 euros. Support answers email on weekdays between 9 am and 5 pm."]
FAITHFUL = ["Refunds are accepted within 30 days of purchase.", "Shipping to EU countries costs 15 euros.",
            "Support answers email on weekdays.", "Shipping to EU countries takes 3 to 5 business days."]
HALLUCINATED = ["Refunds are accepted within 90 days of purchase.", "Shipping to EU countries costs 25 euros.",
                "Support answers the phone on weekends.", "Shipping is free and takes one day."]


def _rows() -> list[dict]:
    rows = []
    for task in ("qa", "summary"):
        for label, answers in ((False, FAITHFUL), (True, HALLUCINATED)):
            rows += [{"id": f"{task}-{label}-{i}", "task": task, "context": POLICY, "answer": a, "hallucinated": label}
                     for i, a in enumerate(answers)]
    return rows


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[dict]]:
    folder = tmp_path_factory.mktemp("eval-html")
    data = folder / "labelled.jsonl"
    rows = _rows()
    data.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"id": "broken", "context": ["x"], "answer": ""}\n')
    page, predictions = folder / "report.html", folder / "predictions.jsonl"
    result = CliRunner().invoke(app, ["eval", str(data), "--scorer", "lexical", "--html", str(page),
                                      "--predictions", str(predictions)])
    assert result.exit_code == 0, result.output
    return page, predictions, rows


def test_predictions_have_one_row_per_answer(written: tuple[Path, Path, list[dict]]) -> None:
    _, predictions, rows = written
    lines = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert [p["id"] for p in lines] == [r["id"] for r in rows] + ["broken"]
    verifier = Verifier(get_scorer("lexical"))
    for row, predicted in zip(rows, lines, strict=False):
        report = verifier.verify(row["answer"], row["context"], task=row["task"])
        assert predicted["score"] == pytest.approx(report.score) and predicted["route"] == report.route.value
        assert predicted["hallucinated"] == row["hallucinated"]
        assert len(predicted["unsupported"]) == sum(c.verdict.value != "SUPPORTED" for c in report.claims)
    assert "empty" in lines[-1]["error"]


def test_html_report_has_curves_and_histograms_per_task(written: tuple[Path, Path, list[dict]]) -> None:
    page = written[0].read_text()
    for heading in ("All answers", "Task: qa", "Task: summary"):
        assert f"<h2>{heading}</h2>" in page
    # overall ROC + PR, then per task: a histogram, a ROC and a PR; plus the overall histogram
    assert page.count("<svg") == 2 + 1 + 2 * 3
    assert page.count("aria-label='score histogram") == 3
    accept_at, reject_at = Verifier(get_scorer("lexical")).thresholds_for("qa")
    assert f"accept ≥ {format_threshold(accept_at)}" in page and f"reject ≤ {format_threshold(reject_at)}" in page


@needs_chromium
def test_html_report_renders_in_chromium(written: tuple[Path, Path, list[dict]], tmp_path: Path) -> None:
    pytest.importorskip("selenium")
    driver = start_chromium(tmp_path / "profile", window="1400,2200")
    try:
        driver.get(written[0].as_uri())
        figures = driver.find_elements("css selector", "figure svg")
        assert len(figures) == 9
        for svg in figures:  # every chart is laid out at a visible size
            size = svg.size
            assert size["width"] > 300 and size["height"] > 200, size
        assert driver.find_element("tag name", "h1").text.startswith("groundwire eval: labelled.jsonl")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "eval-report.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 20_000
    finally:
        driver.quit()


def _colours(page: str) -> dict[str, dict[str, str]]:
    found = re.search(r"<script type='application/json' id='chart-colours'>(.*?)</script>", page)
    assert found, "the page lists its chart colours"
    return json.loads(found.group(1))


def _style(page: str, element_id: str) -> list[str]:
    """The style of the first path in every element with this id (one per chart that draws it)."""
    return re.findall(rf'<g id="{re.escape(element_id)}">\s*<path d="[^"]*"[^>]*? style="([^"]*)"', page)


def _x(page: str, element_id: str) -> float:
    found = re.search(rf'<g id="{re.escape(element_id)}">\s*<path d="M ([0-9.]+) ', page)
    assert found, element_id
    return float(found.group(1))


@pytest.fixture(scope="module")
def one_task(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A file with a single task, checked with the reject threshold at 0.00 (a line on the frame's edge)."""
    folder = tmp_path_factory.mktemp("eval-html-one")
    data = folder / "qa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _rows() if r["task"] == "qa"))
    page = folder / "report.html"
    result = CliRunner().invoke(app, ["eval", str(data), "--scorer", "lexical", "--reject-at", "0.0",
                                      "--html", str(page)])
    assert result.exit_code == 0, result.output
    return page.read_text()


def test_one_task_draws_each_chart_once(one_task: str) -> None:
    # one histogram, one ROC and one precision-recall chart: the task's section would repeat "All answers"
    assert one_task.count("<svg") == 3
    labels = re.findall(r"<figure role='img' aria-label='([^']*)'>", one_task)
    assert labels == ["score histogram all", "ROC all", "precision-recall all"]
    assert "<h2>All answers (one task: qa)</h2>" in one_task and "Task: qa" not in one_task
    assert "<h2>All tasks</h2>" not in one_task


def test_reject_line_at_zero_stands_clear_of_the_y_axis(one_task: str) -> None:
    assert "reject ≤ 0.0<" in one_task and "reject 0.0<" in one_task  # legend entry and the label beside the line
    gap = _x(one_task, "hist-all:reject-line") - _x(one_task, "hist-all:y-axis")
    assert gap > 5, f"the reject line is drawn {gap:.1f} px from the y axis"


def test_escalation_band_is_a_shaded_band_between_the_thresholds(one_task: str,
                                                                  written: tuple[Path, Path, list[dict]]) -> None:
    for page, key in ((one_task, "hist-all"), (written[0].read_text(), "hist-qa")):
        routes = _colours(page)["routes"]
        (style,) = _style(page, f"{key}:escalation-band")
        assert f"fill: {routes['ESCALATE']}" in style and "opacity: 0.18" in style
        band = re.search(rf'<g id="{key}:escalation-band">\s*<path d="M ([0-9.]+) [0-9.]+ \s*L ([0-9.]+) ', page)
        assert band
        left, right = float(band.group(1)), float(band.group(2))
        assert left == pytest.approx(_x(page, f"{key}:reject-line"), abs=0.01)
        assert right == pytest.approx(_x(page, f"{key}:accept-line"), abs=0.01) and right - left > 50
        assert f"stroke: {routes['REJECT']}" in _style(page, f"{key}:reject-line")[0]
        assert f"stroke: {routes['ACCEPT']}" in _style(page, f"{key}:accept-line")[0]


def test_each_curve_keeps_one_colour_across_sections(written: tuple[Path, Path, list[dict]]) -> None:
    page = written[0].read_text()
    curves = _colours(page)["curves"]
    assert set(curves) == {"all", "qa", "summary"} and len(set(curves.values())) == 3
    assert not set(curves.values()) & set(_colours(page)["labels"].values())  # a curve never looks like a label
    for name, colour in curves.items():
        charts = {"all": ("roc-tasks", "pr-tasks")}.get(name, ("roc-tasks", "pr-tasks", f"roc-{name}", f"pr-{name}"))
        styles = [style for chart in charts for style in _style(page, f"{chart}:curve:{name}")]
        assert len(styles) == len(charts), name
        assert all(f"stroke: {colour}" in style for style in styles), (name, styles)
