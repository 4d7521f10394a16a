"""`groundwire eval --html/--predictions`: the report's charts render in headless chromium (screenshot in
tests/artifacts/eval/), and the predictions file has one row per answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium import needs_chromium, start_chromium
from typer.testing import CliRunner

from groundwire import Verifier
from groundwire.cli.main import app

pytest.importorskip("matplotlib")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "eval"

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
    verifier = Verifier("lexical")
    for row, predicted in zip(rows, lines, strict=False):
        report = verifier.verify(row["answer"], row["context"], task=row["task"])
        assert predicted["score"] == pytest.approx(report.score) and predicted["decision"] == report.decision.value
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
    accept_at, reject_at = Verifier("lexical").thresholds_for("qa")
    assert f"accept ≥ {accept_at:.2f}" in page and f"reject ≤ {reject_at:.2f}" in page


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
