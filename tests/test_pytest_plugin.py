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
    report = assert_grounded("Refunds are accepted within 30 days of purchase.", POLICY)
    assert report.grounded and report.claims and report.model_id.startswith("groundwire-verifier")


def test_fabricated():
    assert_grounded("Refunds are accepted within 30 days. Shipping to EU countries costs 25 euros.", POLICY)


def test_fixture_faithful(assert_grounded):
    assert assert_grounded("Refunds are accepted within 30 days of purchase.", POLICY).model_id == MODEL


def test_fixture_unsupported(assert_grounded):
    assert_grounded("Refunds are accepted within 30 days of purchase. Support also offers priority phone support.",
                    POLICY)
'''
PLUGIN = ("-p", "groundwire.pytest_plugin", "-p", "no:deepeval", "-p", "no:cacheprovider", "-rA")
# -p no:deepeval: DeepEval's own plugin would wrap the inner run (the repo's pyproject turns it off too)


def test_grounded_answers_pass_and_the_others_fail_listing_their_claims(pytester: pytest.Pytester,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_answers=SUITE.replace("MODEL", '"groundwire-verifier-v2"'))
    # No bytecode cached: pysbd's modules compile afresh, as in a fresh environment, where they warned (issue 49).
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(pytester.path / "pycache"))
    outcome = pytester.runpytest_subprocess(*PLUGIN, "-W", "always")  # the default scorer: the bundled model
    outcome.assert_outcomes(passed=2, failed=2)
    outcome.stdout.fnmatch_lines(["PASSED test_answers.py::test_faithful", "PASSED test_answers.py::test_fixture_faithful",
                                  "FAILED test_answers.py::test_fabricated*",
                                  "FAILED test_answers.py::test_fixture_unsupported*"])
    # a fabricated figure: rejected, and the failure names the claim, its verdict, the check and the evidence
    outcome.stdout.fnmatch_lines([
        "*NotGroundedError: the answer is not grounded in its chunks",
        "*decision REJECT by groundwire-verifier-v2, answer score 0.00 (accept >= *, reject <= *); "
        "1 of 2 claims not supported",
        '*- "Shipping to EU countries costs 25 euros.": CONTRADICTED, score 0.00',
        "*check figure_conflict: money '25' is not in the context*",
        '*best evidence [[]S1]: "Shipping to EU countries takes 3 to 5 business days and costs 15 euros."',
    ])
    # unsupported, no figure to catch (the lexical scorer accepts it): escalated, which a test cannot settle
    outcome.stdout.fnmatch_lines([
        "*NotGroundedError: the answer was escalated: the check could not settle it, and a test has no judge",
        "*decision ESCALATE by groundwire-verifier-v2*1 of 2 claims not supported",
        '*- "Support also offers priority phone support.": UNRESOLVED*',
    ])
    text = outcome.stdout.str()
    assert '"Refunds are accepted within 30 days.": ' not in text  # the supported claim is not listed
    assert "checker.verify" not in text  # the traceback stops at the test's own line
    assert "invalid escape sequence" not in text and "pysbd" not in text  # no warning of pysbd's escapes


def test_the_fixture_checks_with_the_scorer_the_command_line_names(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_answers=SUITE.replace("MODEL", '"lexical-baseline"'))
    outcome = pytester.runpytest_subprocess(*PLUGIN, "--groundwire-scorer", "lexical", "-k", "fixture_faithful")
    outcome.assert_outcomes(passed=1, deselected=3)


def test_the_entry_point_names_the_plugin_module() -> None:
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    entry_points = project["project"]["entry-points"]["pytest11"]
    assert entry_points == {"groundwire.pytest_plugin": "groundwire.pytest_plugin"}
    module = importlib.import_module(entry_points["groundwire.pytest_plugin"])
    assert callable(module.assert_grounded) and callable(module.pytest_addoption)
