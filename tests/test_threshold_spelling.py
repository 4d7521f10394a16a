"""One spelling for thresholds (issue 37): the bundled model's accept_at is stored as 0.8314 (config.json), and every
surface that prints it prints 0.8314, not 0.831 (the CLI's footer) or 0.83 (the failure message, the adapters'
reasons, the eval report's chart); all of them through `format_threshold`."""

from __future__ import annotations

import json

import pytest

from groundwire import Verifier
from groundwire.cli.main import run_cli
from groundwire.core.explain import decision_line, format_threshold
from groundwire.pytest_plugin import NotGroundedError, assert_grounded
from groundwire.scoring import get_scorer

POLICY = "Refunds are accepted within 30 days of purchase. Shipping takes 5 business days."
FABRICATED = "Refunds are accepted within 90 days of purchase."


@pytest.fixture(scope="module")
def bundled() -> Verifier:
    return Verifier(get_scorer())


def test_the_bundled_thresholds_are_the_stored_ones(bundled: Verifier) -> None:
    assert bundled.thresholds_for(None) == (0.8314, 0.0)
    assert format_threshold(0.8314) == "0.8314" and format_threshold(0.8) == "0.8" and format_threshold(0) == "0.0"


def test_the_cli_table_footer(tmp_path, capsys) -> None:
    context = tmp_path / "policy.md"
    context.write_text(POLICY, encoding="utf-8")
    run_cli(["check", "--context", str(context), "--answer", FABRICATED])
    footer = " ".join(capsys.readouterr().out.split())
    assert "accept >= 0.8314, reject <= 0.0;" in footer
    run_cli(["check", "--context", str(context), "--answer", FABRICATED, "--json"])
    assert json.loads(capsys.readouterr().out)["meta"]["thresholds"] == {"accept_at": 0.8314, "reject_at": 0.0, "decide_at": None}


def test_assert_grounded_failure_and_the_decision_line(bundled: Verifier) -> None:
    with pytest.raises(NotGroundedError) as failure:
        assert_grounded(FABRICATED, [POLICY], verifier=bundled)
    assert "(accept >= 0.8314, reject <= 0.0)" in str(failure.value)
    assert "(accept >= 0.8314, reject <= 0.0)" in decision_line(failure.value.report, bundled.thresholds_for(None))


def test_the_eval_reports_histogram_labels() -> None:
    pytest.importorskip("matplotlib")
    from groundwire.evaluation.charts import score_histogram

    svg = score_histogram([0.1, 0.5], [0.9, 0.8], accept_at=0.8314, reject_at=0.0, key="hist-all", title="all")
    assert "accept ≥ 0.8314" in svg and "accept 0.8314" in svg and "escalate 0.0–0.8314" in svg
    assert "0.83<" not in svg and "0.83 " not in svg
