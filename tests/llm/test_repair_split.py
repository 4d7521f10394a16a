"""Repair keeps what is supported (issue 37): a compound claim with a supported part and an unsupported one is split
at its coordination, each part verified as the answer was, and the supported part kept; the other is dropped (or,
with an LLM, edited as a claim of its own), never adding anything. Before, "The plan costs $49 and includes priority
phone support" against a context with the price and no phone support was repaired to NOT_IN_CONTEXT.

The adapters' fix paths (Guardrails on_fail="fix", LlamaIndex ground_response / GroundedQueryEngine) are tested on
the same example in tests/adapters."""

from __future__ import annotations

import json

import pytest
from scripted_llm import ScriptedLLMServer

from groundwire.cli.main import run_cli
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import REFUSAL_TOKEN, Chunk, Route
from groundwire.llm.client import LLMClient
from groundwire.llm.repair import conjuncts, repair
from groundwire.pipeline import Checker
from groundwire.scoring import get_scorer

CONTEXT = "The plan costs $49 per month and includes email support."
COMPOUND = "The plan costs $49 and includes priority phone support."
CHUNKS = [Chunk("S1", CONTEXT)]


@pytest.fixture(scope="module", params=["lexical", "bundled"])
def verifier(request: pytest.FixtureRequest) -> Verifier:
    return Verifier(get_scorer("lexical")) if request.param == "lexical" else Verifier(get_scorer())


@pytest.mark.parametrize(("claim", "parts"), [
    (COMPOUND, ["The plan costs $49.", "The plan includes priority phone support."]),
    ("The plan costs $49 but does not include phone support.",
     ["The plan costs $49.", "The plan does not include phone support."]),
    ("Shipping takes 5 days and costs $10.", ["Shipping takes 5 days.", "Shipping costs $10."]),
    ("Standard shipping to EU countries takes 3 to 5 business days and costs 25 euros.",
     ["Standard shipping to EU countries takes 3 to 5 business days.", "Standard shipping to EU countries costs 25 euros."]),
    ("The warranty covers parts and also includes labour.", ["The warranty covers parts.", "The warranty also includes labour."]),
    ("Refunds are issued within 14 days and shipping is free.", ["Refunds are issued within 14 days.", "Shipping is free."]),
    ("The plan costs $49 and the team answers within 2 hours.", ["The plan costs $49.", "The team answers within 2 hours."]),
])
def test_a_compound_claim_splits_into_claims_of_its_own(claim: str, parts: list[str]) -> None:
    assert conjuncts(claim) == parts


@pytest.mark.parametrize("claim", [
    "This plan includes email and phone support.",  # coordinated nouns: one claim
    "Refunds and exchanges are accepted within 30 days.",
    "The store sells shoes and boots made of leather.",  # "boots" is no verb
    "Procter and Gamble sells soap and toothpaste.",
    "Support is open between 9am and 5pm on weekdays.",
    "He was born in 1950 and died in 2010.",  # "was ... and died" reads like "was founded ... and acquired"
    "The Pro plan, which costs $49, includes phone support.",
])
def test_what_the_rules_cannot_read_stays_whole(claim: str) -> None:
    assert conjuncts(claim) == [claim]


def test_offline_the_supported_part_is_kept_and_the_other_dropped(verifier: Verifier) -> None:
    report = verifier.verify(COMPOUND, CHUNKS)
    assert len(report.claims) == 1 and report.route is not Route.ACCEPT  # one claim, and not accepted whole
    repaired = repair(report, CHUNKS, check=Checker(verifier))
    assert not repaired.abstained and repaired.answer == "The plan costs $49 [S1]."
    assert repaired.report.route is Route.ACCEPT and repaired.surviving_share == 1.0
    (action,) = repaired.actions
    assert action.action == "edit" and action.edited == "The plan costs $49."
    assert [(part.claim, part.action) for part in action.parts] == [
        ("The plan costs $49.", "keep"), ("The plan includes priority phone support.", "drop")]
    assert "split at its coordination" in action.reason and "no LLM configured" in action.reason
    uncited = repair(report, CHUNKS, check=Checker(verifier), cite=False).answer
    assert uncited == "The plan costs $49."
    json.dumps(repaired.to_dict())  # the parts travel in the JSON the CLI and the service send


def test_the_rest_of_the_answer_is_kept_as_before(verifier: Verifier) -> None:
    answer = f"Refunds are not offered. {COMPOUND}"
    chunks = [Chunk("S1", CONTEXT), Chunk("S2", "Refunds are accepted within 30 days of purchase.")]
    repaired = repair(verifier.verify(answer, chunks), chunks, check=Checker(verifier), min_surviving_share=0.5)
    assert "$49" in repaired.answer and "phone" not in repaired.answer and "not offered" not in repaired.answer


def test_no_supported_part_drops_the_claim_whole(verifier: Verifier) -> None:
    report = verifier.verify("The plan costs $99 and includes priority phone support.", CHUNKS)
    repaired = repair(report, CHUNKS, check=Checker(verifier))
    assert repaired.abstained and repaired.answer == REFUSAL_TOKEN
    assert repaired.actions[0].action == "drop" and repaired.actions[0].parts == ()


def test_with_an_llm_the_whole_edit_comes_first_and_the_split_catches_its_failure(
    scripted_llm: ScriptedLLMServer, client: LLMClient
) -> None:
    lexical = Verifier(get_scorer("lexical"))
    report = lexical.verify(COMPOUND, CHUNKS)
    # The whole-claim edit adds a fact ("24/7"): dropped. The split then keeps the price and asks for an edit of
    # the phone-support part alone, which comes back as the context has it.
    scripted_llm.script(json.dumps({"edited": "The plan costs $49 and includes email support 24/7."}),
                        json.dumps({"edited": "The plan includes email support."}))
    repaired = repair(report, CHUNKS, check=Checker(lexical), client=client)
    assert repaired.answer == "The plan costs $49 [S1]. The plan includes email support [S1]."
    assert "phone" not in repaired.answer and repaired.report.route is Route.ACCEPT
    (action,) = repaired.actions
    assert action.reason.startswith("whole-claim edit dropped: the edit adds content")
    assert [part.action for part in action.parts] == ["keep", "edit"]
    claims = [request["messages"][1]["content"] for request in scripted_llm.requests]
    assert COMPOUND in claims[0] and "The plan includes priority phone support." in claims[1] and len(claims) == 2


def test_the_repair_command(tmp_path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plan.md").write_text(CONTEXT, encoding="utf-8")
    assert run_cli(["repair", "-a", COMPOUND, "-c", str(tmp_path / "plan.md"), "--scorer", "lexical", "--no-llm",
                    "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert "$49" in result["answer"] and "phone" not in result["answer"] and not result["abstained"]
    assert [part["action"] for part in result["actions"][0]["parts"]] == ["keep", "drop"]
