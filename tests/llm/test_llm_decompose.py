from __future__ import annotations

import json

from scripted_llm import Reply, ScriptedLLMServer

from groundwire.config import LLMConfig
from groundwire.core.claims import RuleDecomposer
from groundwire.core.verifier import Verifier
from groundwire.llm.client import LLMClient
from groundwire.llm.decompose import LLMDecomposer
from groundwire.scoring import get_scorer

ANSWER = "Hello! The plan costs $10 a month and includes 5 GB of storage [S1]. It renews every year [S2]."
CHUNKS = ["The plan costs $10 a month. Storage: 5 GB.", "Plans renew every year."]


def test_claims_are_mapped_back_to_their_spans(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(
        json.dumps(
            {
                "claims": [
                    "The plan costs $10 a month",
                    "The plan includes 5 GB of storage.",
                    "The plan renews every year [S2].",
                    "The company was founded in 1999.",  # shares nothing with the answer: invented, dropped
                ]
            }
        )
    )
    claims = LLMDecomposer(client).decompose(ANSWER, question="What does the plan cost?")
    assert [c.text for c in claims] == [
        "The plan costs $10 a month.",
        "The plan includes 5 GB of storage.",
        "The plan renews every year.",
    ]
    first, second, third = claims
    assert ANSWER[slice(*first.span)] == "The plan costs $10 a month"
    assert first.cited_ids == ("S1",)
    # Not verbatim in the answer: mapped to the sentence it overlaps most, with that sentence's citation.
    assert ANSWER[slice(*second.span)] == second.sentence and "5 GB" in second.sentence
    assert third.cited_ids == ("S2",) and ANSWER[slice(*third.span)] == "It renews every year [S2]."
    assert "What does the plan cost?" in scripted_llm.requests[0]["messages"][1]["content"]


def test_malformed_reply_falls_back_to_rules(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script('{"claims": "The plan costs $10"}', "not json at all", json.dumps({"claims": []}))
    expected = RuleDecomposer().decompose(ANSWER)
    for _ in range(3):
        assert LLMDecomposer(client).decompose(ANSWER) == expected
    assert len(expected) >= 2


def test_endpoint_down_falls_back_to_rules(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.script(Reply(status=500, raw_body="{}"), Reply(status=500, raw_body="{}"))
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", max_retries=1, backoff_s=0.0)) as llm:
        assert LLMDecomposer(llm).decompose(ANSWER) == RuleDecomposer().decompose(ANSWER)


def test_verifier_runs_on_llm_claims(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(json.dumps({"claims": ["The plan costs $10 a month.", "The plan renews every month."]}))
    verifier = Verifier(get_scorer("lexical"), decomposer=LLMDecomposer(client))
    report = verifier.verify("The plan costs $10 a month and renews every month.", CHUNKS)
    assert [c.claim.text for c in report.claims] == ["The plan costs $10 a month.", "The plan renews every month."]
    assert report.claims[0].score > report.claims[1].score


def test_a_claim_that_adds_to_the_answer_is_dropped(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    # It shares "plan" with the answer, but "Acme" and "launched" are the decomposer's, not the answer's: checked
    # against the context it would reject an answer that never said it.
    scripted_llm.script(json.dumps({"claims": [
        "The plan costs $10 a month.", "The plan includes 5 GB of storage.", "The plan renews every year.",
        "The plan was launched by Acme in 2020.",
    ]}))  # fmt: skip
    claims = LLMDecomposer(client).decompose(ANSWER)
    assert all("Acme" not in c.text for c in claims)
    # The sentence it was placed in (the one it overlaps most) is split by the rules; the other keeps its claim.
    assert [c.text for c in claims] == [
        "The plan costs $10 a month and includes 5 GB of storage.", "The plan renews every year."
    ]  # fmt: skip


def test_a_sentence_the_model_leaves_out_is_split_by_the_rules(
    scripted_llm: ScriptedLLMServer, client: LLMClient
) -> None:
    # The model returns claims for the first sentence only: the second must still be checked, or an unsupported
    # sentence the model skipped would be accepted unseen.
    scripted_llm.script(json.dumps({"claims": ["The plan costs $10 a month.", "The plan includes 5 GB of storage."]}))
    claims = LLMDecomposer(client).decompose(ANSWER)
    rules = RuleDecomposer().decompose(ANSWER)
    second_sentence = [c for c in rules if "renews" in c.text]
    assert second_sentence and all(c in claims for c in second_sentence)
    assert [c.text for c in claims[:2]] == ["The plan costs $10 a month.", "The plan includes 5 GB of storage."]
    assert [c.span for c in claims] == sorted(c.span for c in claims)


def test_a_sentence_with_an_invented_claim_is_split_by_the_rules(
    scripted_llm: ScriptedLLMServer, client: LLMClient
) -> None:
    # "gigabytes" is not the answer's word, so that claim goes; the sentence's other claim does not cover its
    # storage part, so the whole sentence is the rules' to split (else "5 GB" would go unchecked).
    scripted_llm.script(json.dumps({"claims": [
        "The plan costs $10 a month.", "The plan includes 5 gigabytes of storage.", "The plan renews every year.",
    ]}))  # fmt: skip
    claims = LLMDecomposer(client).decompose(ANSWER)
    rules = RuleDecomposer().decompose(ANSWER)
    first_sentence = [c for c in rules if "costs" in c.sentence]
    assert first_sentence and all(c in claims for c in first_sentence)
    assert any("5 GB" in c.text for c in claims)
    assert "The plan renews every year." in [c.text for c in claims]


def test_a_sentence_whose_claims_leave_part_of_it_out_is_split_by_the_rules(
    scripted_llm: ScriptedLLMServer, client: LLMClient
) -> None:
    # The price alone stands for "costs $10 a month and includes 5 GB of storage": the storage would go unchecked.
    scripted_llm.script(json.dumps({"claims": ["The plan costs $10 a month.", "The plan renews every year."]}))
    claims = LLMDecomposer(client).decompose(ANSWER)
    assert [c.text for c in claims] == [
        "The plan costs $10 a month and includes 5 GB of storage.", "The plan renews every year."
    ]  # fmt: skip
