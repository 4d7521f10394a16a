"""One assembly path (issue 18 item 1): every surface builds its verifier in pipeline (the library calls and the
adapters share one per distinct CheckSettings), and checks through pipeline.check / check_many."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import groundwire
from groundwire.adapters.common import AdapterCheck
from groundwire.config import CheckSettings
from groundwire.core.plan import as_chunks
from groundwire.foundation.errors import InputError
from groundwire.foundation.types import Route
from groundwire.pipeline import (
    Checker,
    CheckItem,
    build_verifier,
    check,
    check_many,
    given_or_shared,
    shared_verifier,
)
from groundwire.scoring.lexical import LexicalScorer

CONTEXT = ["The Pro plan costs 19 dollars a month. Refunds take 14 days."]
ANSWER = "The Pro plan costs 19 dollars a month. Refunds take 30 days."


def test_one_shared_verifier_per_distinct_settings() -> None:
    lexical = shared_verifier(CheckSettings(scorer="lexical"))
    assert shared_verifier(CheckSettings(scorer="lexical")) is lexical
    assert given_or_shared(None, CheckSettings(scorer="lexical")).verifier is lexical
    assert AdapterCheck(scorer="lexical").resolve().verifier is lexical  # the adapters share it too
    stricter = shared_verifier(CheckSettings(scorer="lexical", accept_at=0.95))
    assert stricter is not lexical and stricter.accept_at == 0.95
    assert AdapterCheck(scorer="lexical", accept_at=0.95).resolve().verifier is stricter
    assert AdapterCheck(settings=CheckSettings(scorer="lexical", accept_at=0.95)).resolve().verifier is stricter
    as_written = shared_verifier(CheckSettings(scorer="lexical", canonical_figures=False))
    assert as_written is not lexical and lexical.canonical_figures and not as_written.canonical_figures


def test_every_library_call_takes_settings_or_a_verifier() -> None:
    """Issue 46: verify, averify, verify_many, averify_many, the adapters and assert_grounded take one settings=
    (everything [verify] can say) or a verifier=, never both."""
    import pandas as pd

    from groundwire.adapters.common import Outcome
    from groundwire.pytest_plugin import assert_grounded

    lenient = CheckSettings(scorer="lexical", accept_at=0.7)  # NORTH scores 0.75: escalated at the default 0.8
    assert groundwire.verify(NORTH, [CASTLE], scorer="lexical").route is Route.ESCALATE
    assert groundwire.verify(NORTH, [CASTLE], settings=lenient).route is Route.ACCEPT
    assert asyncio.run(groundwire.averify(NORTH, [CASTLE], settings=lenient)).route is Route.ACCEPT
    frame = pd.DataFrame({"answer": [NORTH], "context": [[CASTLE]]})
    assert list(groundwire.verify_many(frame, settings=lenient)["route"]) == ["accept"]
    assert list(asyncio.run(groundwire.averify_many(frame, settings=lenient))["route"]) == ["accept"]
    assert AdapterCheck(settings=lenient).run(NORTH, [CASTLE]).outcome is Outcome.PASS
    assert assert_grounded(NORTH, [CASTLE], settings=lenient).route is Route.ACCEPT
    # The keywords are put over the settings, as the CLI's flags over groundwire.toml.
    assert groundwire.verify(NORTH, [CASTLE], settings=lenient, accept_at=0.8).route is Route.ESCALATE
    with pytest.raises(ValueError, match="either a verifier"):
        groundwire.verify(NORTH, [CASTLE], settings=lenient, verifier=shared_verifier(lenient))


def test_verify_is_the_pipeline_check_with_typed_settings() -> None:
    report = groundwire.verify(ANSWER, CONTEXT, scorer="lexical", accept_at=0.9, reject_at=0.1)
    verifier = build_verifier(CheckSettings(scorer="lexical", accept_at=0.9, reject_at=0.1))
    expected = check(verifier, CheckItem(ANSWER, [groundwire.Chunk("S1", CONTEXT[0])]))
    assert report.to_dict() | {"timings": None} == expected.to_dict() | {"timings": None}
    assert shared_verifier(CheckSettings(scorer="lexical", accept_at=0.9, reject_at=0.1)).accept_at == 0.9
    # A scorer object gets a verifier of its own with the same settings.
    own = groundwire.verify(ANSWER, CONTEXT, scorer=LexicalScorer(), accept_at=0.9, reject_at=0.1)
    assert own.score == report.score and own.route == report.route


def test_bad_settings_are_input_errors() -> None:
    with pytest.raises(ValueError, match="reject_at"):
        groundwire.verify(ANSWER, CONTEXT, scorer="lexical", accept_at=0.2, reject_at=0.5)
    with pytest.raises(InputError):
        groundwire.verify(ANSWER, CONTEXT, scorer="no-such-scorer")
    with pytest.raises(ValueError, match="either a verifier"):
        given_or_shared(shared_verifier(CheckSettings(scorer="lexical")), CheckSettings(scorer="lexical"))


def test_averify_checks_through_the_same_path() -> None:
    report = asyncio.run(groundwire.averify(ANSWER, CONTEXT, scorer="lexical"))
    assert report.score == groundwire.verify(ANSWER, CONTEXT, scorer="lexical").score


# --- one builder: nothing outside pipeline constructs a Verifier (issue 18 item 1) ---------------------------

PACKAGE = Path(groundwire.__file__).parent
BUILDERS = {"pipeline.py", "core/verifier.py"}
"""The only modules that may construct a Verifier: the builder, and the class itself (its doctest)."""


def _assembly_sites(path: Path) -> list[str]:
    """`Verifier(...)` calls and functions named build_verifier in one module, as "path:line what"."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name == "Verifier":
                found.append(f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno} Verifier(")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "build_verifier":
            found.append(f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno} def build_verifier")
    return found


def test_only_pipeline_assembles_a_verifier() -> None:
    sites = [site for path in sorted(PACKAGE.rglob("*.py")) for site in _assembly_sites(path)]
    outside = [site for site in sites if site.split(":")[0] not in BUILDERS]
    assert outside == [], "build the verifier with groundwire.pipeline.build_verifier (or shared_verifier)"
    # The scan sees what it looks for: pipeline's own builder and its one Verifier( call.
    assert {site.split(":")[0] + " " + site.split(" ", 1)[1] for site in sites if site.startswith("pipeline.py")} == {
        "pipeline.py Verifier(", "pipeline.py def build_verifier"}


# --- the commands honour groundwire.toml because they use the one builder ------------------------------------

CASTLE = "The castle faces the harbor."
NORTH = "The castle faces the north harbor."  # lexical score 0.75: escalated at the default accept_at 0.8
LENIENT = '[verify]\nscorer = "lexical"\naccept_at = 0.6\n'
DEFAULT = '[verify]\nscorer = "lexical"\n'


def _groundwire(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("GROUNDWIRE_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "groundwire", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("toml, kept", [(DEFAULT, False), (LENIENT, True)])
def test_repair_honours_accept_at_from_groundwire_toml(tmp_path: Path, toml: str, kept: bool) -> None:
    (tmp_path / "groundwire.toml").write_text(toml)
    (tmp_path / "c.txt").write_text(CASTLE)
    done = _groundwire("repair", "-a", NORTH, "-c", "c.txt", "--no-llm", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    repaired = json.loads(done.stdout)
    assert [a["action"] for a in repaired["actions"]] == (["keep"] if kept else ["drop"])
    assert repaired["abstained"] is not kept


@pytest.mark.parametrize("toml, escalated", [(DEFAULT, 0.5), (LENIENT, 0.0)])
def test_eval_honours_accept_at_from_groundwire_toml(tmp_path: Path, toml: str, escalated: float) -> None:
    (tmp_path / "groundwire.toml").write_text(toml)
    rows = [{"id": "north", "context": [CASTLE], "answer": NORTH, "hallucinated": False},
            {"id": "moon", "context": [CASTLE], "answer": "The castle was built on the moon in 1412.",
             "hallucinated": True}]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = _groundwire("eval", "rows.jsonl", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["routing"]["all"]["escalated"] == escalated


@pytest.mark.parametrize("toml, decision", [(DEFAULT, "escalate"), (LENIENT, "accept")])
def test_the_batch_worker_honours_accept_at_from_groundwire_toml(tmp_path: Path, toml: str, decision: str) -> None:
    (tmp_path / "groundwire.toml").write_text(toml)
    (tmp_path / "logs.jsonl").write_text(json.dumps({"id": "r1", "context": [CASTLE], "answer": NORTH}) + "\n")
    done = _groundwire("batch", "--input", "logs.jsonl", "--output", "out", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(tmp_path / "out").to_pylist()
    assert [(row["id"], row["route"]) for row in rows] == [("r1", decision)]


def test_check_many_reports_a_refused_item_and_goes_on() -> None:
    verifier = shared_verifier(CheckSettings(scorer="lexical"))
    items = [CheckItem(ANSWER, as_chunks(CONTEXT)), CheckItem("  ", as_chunks(CONTEXT)), CheckItem(NORTH, [])]
    done = list(check_many(verifier, items))
    assert [c.item for c in done] == items
    assert done[0].report is not None and done[0].report.to_dict() | {"timings": None} == check(
        verifier, items[0]).to_dict() | {"timings": None}
    assert done[1].report is None and done[1].error is not None and "answer is empty" in done[1].error
    assert done[2].report is None and done[2].error is not None and "context is empty" in done[2].error


def test_the_generator_checks_its_samples_against_the_reports_own_claims() -> None:
    verifier = shared_verifier(CheckSettings(scorer="lexical"))
    checker = Checker(verifier)
    report = checker(ANSWER, as_chunks(CONTEXT))
    claims = [result.claim for result in report.claims]
    # One sample states only the first claim: the claims are not split again from the sample or the answer.
    sample = checker(ANSWER, [groundwire.Chunk("sample1", "The Pro plan costs 19 dollars a month.")], claims=claims)
    assert [r.claim for r in sample.claims] == claims
    assert [r.route.value for r in sample.claims] == ["accept", "reject"]
