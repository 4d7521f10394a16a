"""The claim-level case set (tests/fixtures/claim_cases.jsonl): its shape, and what must hold whatever the scorer.

The pass-rate target is bench/claim_cases.py's to report, not a test's to assert.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from groundwire.core.verifier import Verifier
from groundwire.evaluation.claim_cases import ClaimCase, decided, kinds, load_cases, pass_rates, run_case
from groundwire.foundation.types import Verdict
from groundwire.scoring import get_scorer
from groundwire.scoring.onnx import bundled_path

CASES = load_cases(Path(__file__).parents[1] / "fixtures" / "claim_cases.jsonl")
FINDING_OF_CHECK = {"figures": "figure_conflict", "roles": "role_conflict", "certainty": "certainty_added"}
FORMATS = ("number_format", "unit_format", "date_format")


def test_the_set_covers_every_kind_of_the_taxonomy() -> None:
    assert len(CASES) >= 80
    assert len({case.id for case in CASES}) == len(CASES)
    assert set(kinds(CASES)) == {
        "paraphrase", "number_format", "unit_format", "date_format", "entity_swap", "role_swap", "negation",
        "hedge", "long_chunk_end", "second_chunk",
    }  # fmt: skip
    assert {case.expected for case in CASES} == {Verdict.SUPPORTED, Verdict.CONTRADICTED, Verdict.NOT_FOUND}
    assert all(sum(case.kind == kind for case in CASES) >= 8 for kind in kinds(CASES))
    assert any(len(case.chunks[0].split()) > 800 for case in CASES if case.kind == "long_chunk_end")
    assert all(len(case.chunks) >= 2 for case in CASES if case.kind == "second_chunk")


@pytest.mark.parametrize("case", [c for c in CASES if c.check], ids=lambda c: c.id)
def test_a_case_a_deterministic_check_decides_passes_with_any_scorer(case: ClaimCase) -> None:
    result = run_case(Verifier(get_scorer("lexical")), case)
    assert result.verdict is case.expected
    assert FINDING_OF_CHECK[case.check or ""] in result.checks


def test_pass_rates_count_every_case_once() -> None:
    verifier = Verifier(get_scorer("lexical"))
    rates = pass_rates(run_case(verifier, case) for case in CASES[:12])
    assert rates["overall"][1] == 12
    assert sum(total for kind, (_, total) in rates.items() if kind != "overall") == 12


def test_decided_counts_only_committed_verdicts() -> None:
    verifier = Verifier(get_scorer("lexical"))
    results = [run_case(verifier, case) for case in CASES]
    total, committed, right = decided(results)
    unresolved = sum(r.verdict is Verdict.UNRESOLVED for r in results)
    assert (total, committed) == (len(CASES), len(CASES) - unresolved)
    assert 0 < unresolved < len(CASES)
    # Every passed case is a committed one (no case expects UNRESOLVED), so the passes are the right commitments.
    assert right == sum(r.passed for r in results)


@pytest.mark.skipif(not (bundled_path() / "config.json").is_file(), reason="no bundled model")
def test_a_reformatted_figure_is_never_contradicted_by_the_model() -> None:
    """Issue 21: "3600" against "3,600" must not be CONTRADICTED; the figure check matches them."""
    verifier = Verifier(get_scorer())
    same = [c for c in CASES if c.kind in FORMATS and c.expected is Verdict.SUPPORTED]
    assert len(same) >= 15
    assert [c.id for c in same if run_case(verifier, c).verdict is Verdict.CONTRADICTED] == []


def test_a_case_is_checked_as_the_task_given() -> None:
    # With the "claim" key accepting anything above 0.01, the supported cases the pooled pair leaves unresolved
    # are accepted: the task reaches verify().
    verifier = Verifier(get_scorer("lexical"))
    verifier.task_thresholds = {"claim": (0.01, 0.0)}
    supported = [c for c in CASES if c.expected is Verdict.SUPPORTED]
    unresolved = [c for c in supported if run_case(verifier, c).verdict is Verdict.UNRESOLVED]
    assert unresolved
    assert {run_case(verifier, c, task="claim").verdict for c in unresolved} == {Verdict.SUPPORTED}
