"""The pytest plugin, run in a separate pytest process (pytester): `assert_grounded` passes a grounded answer
and fails a fabricated or escalated one with the unsupported claims in the failure text; the fixture honours
--groundwire-scorer. The plugin is loaded with `-p groundwire.pytest_plugin`, because the `pytest11` entry point
registers only when groundwire is (re)installed; the entry point is checked against pyproject.toml."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SUITE = '''
from groundwire.pytest_plugin import assert_grounded

POLICY = ["Refunds are accepted within 30 days of purchase. Shipping to EU countries takes 3 to 5 business days "
          "and costs 15 euros. Support answers email on weekdays between 9 am and 5 pm."]


def test_faithful():
    report = assert_grounded("Refunds are accepted within 30 days of purchase.", POLICY, scorer="lexical")
    assert report.grounded and report.claims


def test_fabricated():
    assert_grounded("Refunds are accepted within 30 days. Shipping to EU countries costs 25 euros.", POLICY,
                    scorer="lexical")


def test_fixture_faithful(assert_grounded):
    assert assert_grounded("Support answers email on weekdays.", POLICY).model_id == "lexical-baseline"


def test_fixture_plausible_but_unsupported(assert_grounded):
    assert_grounded("Support is open on weekdays from 9am to 5pm CET.", POLICY)
'''


def test_grounded_answers_pass_and_the_others_fail_listing_their_claims(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_answers=SUITE)
    # -p no:deepeval: DeepEval's own plugin would wrap the inner run (the repo's pyproject turns it off too)
    outcome = pytester.runpytest_subprocess("-p", "groundwire.pytest_plugin", "-p", "no:deepeval",
                                            "-p", "no:cacheprovider", "--groundwire-scorer", "lexical", "-rA")
    outcome.assert_outcomes(passed=2, failed=2)
    outcome.stdout.fnmatch_lines(["PASSED test_answers.py::test_faithful", "PASSED test_answers.py::test_fixture_faithful",
                                  "FAILED test_answers.py::test_fabricated*",
                                  "FAILED test_answers.py::test_fixture_plausible_but_unsupported*"])
    # a fabricated figure: rejected, and the failure names the claim, its verdict, the check and the evidence
    outcome.stdout.fnmatch_lines([
        "*NotGroundedError: the answer is not grounded in its chunks",
        "*decision REJECT by lexical-baseline, answer score 0.20 (accept >= 0.8, reject <= 0.2); "
        "1 of 2 claims not supported",
        '*- "Shipping to EU countries costs 25 euros.": CONTRADICTED, score 0.20',
        "*check figure_conflict: money '25' is not in the context*",
        '*best evidence [[]S1]: "Shipping to EU countries takes 3 to 5 business days and costs 15 euros."',
    ])
    # plausible but unsupported: escalated, which a test cannot settle, so it fails and says why
    outcome.stdout.fnmatch_lines([
        "*NotGroundedError: the answer was escalated: the check could not settle it, and a test has no judge",
        "*decision ESCALATE by lexical-baseline*1 of 1 claims not supported",
        '*- "Support is open on weekdays from 9am to 5pm CET.": UNRESOLVED*',
        '*best evidence [[]S1]: "Support answers email on weekdays between 9 am and 5 pm."',
    ])
    text = outcome.stdout.str()
    assert '"Refunds are accepted within 30 days.": ' not in text  # the supported claim is not listed
    assert "checker.verify" not in text  # the traceback stops at the test's own line


def test_the_entry_point_names_the_plugin_module() -> None:
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    entry_points = project["project"]["entry-points"]["pytest11"]
    assert entry_points == {"groundwire.pytest_plugin": "groundwire.pytest_plugin"}
    module = importlib.import_module(entry_points["groundwire.pytest_plugin"])
    assert callable(module.assert_grounded) and callable(module.pytest_addoption)
