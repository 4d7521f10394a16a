from __future__ import annotations

import json

import pytest
from scripted_llm import ScriptedLLMServer

from groundwire.core.novelty import added_content
from groundwire.core.verifier import Verifier
from groundwire.foundation.types import REFUSAL_TOKEN, Chunk, Route
from groundwire.llm.client import LLMClient
from groundwire.llm.repair import repair
from groundwire.pipeline import Checker
from groundwire.scoring import get_scorer

CHUNKS = [
    Chunk("S1", "Refunds are issued within 14 days of the return. Shipping is free on orders over $50."),
    Chunk("S2", "The store is open Monday to Friday, 9am to 5pm."),
]
SUPPORTED = "Refunds are issued within 14 days [S1]."
BAND = "The store is open on Sundays [S2]."  # the lexical scorer puts this in the escalation band
MISCITED = "Shipping is free on orders over $50 [S2]."
UNSUPPORTED = "Our CEO is Jane Doe."


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    return Verifier(get_scorer("lexical"))


def routes(verifier: Verifier, answer: str) -> list[Route]:
    return [c.route for c in verifier.verify(answer, CHUNKS).claims]


def test_fixture_answers_land_where_the_tests_assume(verifier: Verifier) -> None:
    assert routes(verifier, f"{SUPPORTED} {BAND} {UNSUPPORTED}") == [Route.ACCEPT, Route.ESCALATE, Route.REJECT]


def test_without_llm_unsupported_sentences_are_dropped(verifier: Verifier) -> None:
    report = verifier.verify(f"{SUPPORTED} {BAND} {MISCITED} {UNSUPPORTED}", CHUNKS)
    repaired = repair(report, CHUNKS, check=Checker(verifier))
    assert [a.action for a in repaired.actions] == ["keep", "drop", "keep", "drop"]
    # The kept sentence keeps its words; the miscited one is re-cited to the chunk that supports it.
    assert repaired.answer == "Refunds are issued within 14 days [S1]. Shipping is free on orders over $50 [S1]."
    assert repaired.surviving_share == 0.5 and not repaired.abstained
    assert repaired.report.route is Route.ACCEPT and repaired.report.findings == ()
    assert repaired.original is report


def test_without_citing_no_marker_is_added(verifier: Verifier) -> None:
    # For chunks whose ids the reader never saw (the LlamaIndex adapter's nodes): the miscited sentence is
    # written out without a marker rather than re-cited, and the kept sentence keeps the writer's own.
    uncited = "Shipping is free on orders over $50."
    report = verifier.verify(f"{SUPPORTED} {UNSUPPORTED} {MISCITED} {uncited}", CHUNKS)
    repaired = repair(report, CHUNKS, check=Checker(verifier), cite=False)
    assert repaired.answer == f"{SUPPORTED} {MISCITED} {uncited}"
    recited = repair(report, CHUNKS, check=Checker(verifier)).answer
    assert recited == f"{SUPPORTED} Shipping is free on orders over $50 [S1]. Shipping is free on orders over $50 [S1]."


def test_abstains_below_the_minimum_share(verifier: Verifier) -> None:
    report = verifier.verify(f"{SUPPORTED} {BAND} {UNSUPPORTED}", CHUNKS)
    default = repair(report, CHUNKS, check=Checker(verifier), min_surviving_share=0.5)
    assert default.abstained and default.answer == REFUSAL_TOKEN and default.report.abstained
    message = "The sources don't support a complete answer."
    configured = repair(report, CHUNKS, check=Checker(verifier), min_surviving_share=0.5, abstain_message=message)
    assert configured.answer == message
    lenient = repair(report, CHUNKS, check=Checker(verifier), min_surviving_share=0.3)
    assert not lenient.abstained and lenient.answer == SUPPORTED


def test_middle_band_claim_is_edited_and_reverified(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    scripted_llm.script(json.dumps({"edited": "The store is open Monday to Friday."}))
    report = verifier.verify(f"{SUPPORTED} {BAND}", CHUNKS)
    repaired = repair(report, CHUNKS, check=Checker(verifier), client=client)
    assert [a.action for a in repaired.actions] == ["keep", "edit"]
    assert repaired.answer == "Refunds are issued within 14 days [S1]. The store is open Monday to Friday [S2]."
    assert repaired.report.route is Route.ACCEPT
    request = scripted_llm.requests[0]["messages"][1]["content"]
    assert "The store is open on Sundays." in request and "[S2]" in request and "Refunds" not in request


def test_edit_that_adds_a_fact_is_dropped(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    scripted_llm.script(json.dumps({"edited": "The store is open Monday to Friday, and on Sundays until 8pm."}))
    report = verifier.verify(f"{SUPPORTED} {BAND}", CHUNKS)
    repaired = repair(report, CHUNKS, check=Checker(verifier), client=client, min_surviving_share=0.5)
    edit = repaired.actions[1]
    assert edit.action == "drop" and "8pm" in edit.reason
    assert repaired.answer == SUPPORTED


def test_edit_that_does_not_verify_is_dropped(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    # Every word is from the claim or the context, but the scorer does not accept the result.
    scripted_llm.script(json.dumps({"edited": "Refunds are open on Sundays."}))
    report = verifier.verify(f"{SUPPORTED} {BAND}", CHUNKS)
    repaired = repair(report, CHUNKS, check=Checker(verifier), client=client)
    assert repaired.actions[1].action == "drop" and "did not verify" in repaired.actions[1].reason


def test_edit_is_reverified_under_the_answers_task(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    # Lexical scores the claim 0.4 and the edit 0.5: both escalated under the pooled pair (0.8 / 0.2); under
    # the summary pair (0.45 / 0.1) the claim is still escalated and the edit is accepted.
    claim, edit = "Refunds are open on Sundays.", "The store is open on Sundays."
    verifier = Verifier(get_scorer("lexical"))
    verifier.task_thresholds = {"summary": (0.45, 0.1)}
    for task, action in (("summary", "edit"), (None, "drop")):
        scripted_llm.script(json.dumps({"edited": edit}))
        report = verifier.verify(claim, CHUNKS, task=task)
        assert [c.route for c in report.claims] == [Route.ESCALATE]
        repaired = repair(report, CHUNKS, check=Checker(verifier), client=client, min_surviving_share=0.0)
        assert repaired.actions[0].action == action, (task, repaired.actions[0])


@pytest.mark.parametrize("reply", ["Sure, here it is: The store is open.", json.dumps({"edited": ""})])
def test_unusable_edit_is_dropped(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier, reply: str
) -> None:
    scripted_llm.script(reply)
    report = verifier.verify(f"{SUPPORTED} {BAND}", CHUNKS)
    repaired = repair(report, CHUNKS, check=Checker(verifier), client=client)
    assert repaired.actions[1].action == "drop"
    assert repaired.answer == SUPPORTED


def test_added_content_sees_new_words_and_figures() -> None:
    context = CHUNKS[1].text
    assert added_content("The store is open on Sundays.", "The store is open Monday to Friday.", context) == []
    assert len(added_content("The store is open on Sundays.", "The store is open daily.", context)) == 1
    assert "8pm" in added_content("The store is open.", "The store is open until 8pm.", context)


def test_abstained_or_claimless_reports_pass_through(verifier: Verifier) -> None:
    report = verifier.verify(REFUSAL_TOKEN, CHUNKS)
    repaired = repair(report, CHUNKS, check=Checker(verifier))
    assert repaired.answer == REFUSAL_TOKEN and repaired.abstained and repaired.actions == ()


def test_lists_stay_lists(verifier: Verifier) -> None:
    answer = f"- {SUPPORTED}\n- {UNSUPPORTED}\n- Shipping is free on orders over $50 [S1]."
    repaired = repair(verifier.verify(answer, CHUNKS), CHUNKS, check=Checker(verifier), min_surviving_share=0.5)
    assert [a.action for a in repaired.actions] == ["keep", "drop", "keep"]
    assert repaired.answer == f"- {SUPPORTED}\n- Shipping is free on orders over $50 [S1]."
