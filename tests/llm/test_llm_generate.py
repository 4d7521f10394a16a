from __future__ import annotations

import dataclasses
import logging
import math

import pytest
from scripted_llm import Reply, ScriptedLLMServer

from groundwire.config import GenerateConfig, PolicyConfig
from groundwire.core.verifier import Verifier
from groundwire.foundation.textutil import content_words
from groundwire.foundation.types import REFUSAL_TOKEN, Chunk, Route, Verdict
from groundwire.llm.client import Completion, LLMClient, TokenLogprob
from groundwire.llm.generate import Generator, false_sufficiency, low_confidence_spans
from groundwire.pipeline import Checker
from groundwire.scoring import get_scorer

CHUNKS = [
    Chunk(
        "S1",
        "Refunds are issued within 14 days of the return. Shipping is free on orders over $50.",
        doc_id="policy.md",
        page=2,
    ),
    Chunk("S2", "# Hours\nThe store is open Monday to Friday, 9am to 5pm.", doc_id="hours.md"),
]
QUESTION = "How long do refunds take?"
GOOD = "Refunds are issued within 14 days [S1]."
BAND = "The store is open on Sundays [S2]."  # lexical score 0.5: the escalation band
INVENTED = "Refunds are instant and come with a gift card from our CEO Jane Doe."


@pytest.fixture(scope="module")
def verifier() -> Verifier:
    return Verifier(get_scorer("lexical"))


def generator(client: LLMClient, verifier: Verifier, **settings: object) -> Generator:
    policy = settings.pop("policy", PolicyConfig())
    expensive = settings.pop("expensive_model", None)
    retriever = settings.pop("retriever", None)
    self_rag = bool(settings.pop("self_rag", False))
    return Generator(
        client=client,
        checker=Checker(verifier),
        settings=GenerateConfig(**settings),
        policy=policy,
        expensive_model=expensive,
        retriever=retriever,
        self_rag=self_rag,
    )


class KeywordRetriever:
    """A real (tiny) retriever over an in-memory corpus: ranks passages by shared content words."""

    def __init__(self, corpus: list[Chunk]) -> None:
        self.corpus = corpus
        self.queries: list[str] = []

    def retrieve(self, query: str, *, k: int) -> list[Chunk]:
        self.queries.append(query)
        words = set(content_words(query))
        ranked = sorted(self.corpus, key=lambda c: -len(words & set(content_words(c.text))))
        return [c for c in ranked[:k] if words & set(content_words(c.text))]


def test_first_attempt_accepted(scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier) -> None:
    scripted_llm.script(GOOD)
    result = generator(client, verifier).generate(QUESTION, CHUNKS)
    assert result.answer == GOOD and result.outcome.action == "accept" and not result.fallback
    assert [(a.strength, a.action) for a in result.attempts] == [("standard", "accept")]
    (attempt,) = result.to_dict()["attempts"]  # the routing is `route`; 0.1's `decision` beside it for one release
    assert attempt["route"] == attempt["decision"] == result.attempts[0].route == result.report.route.value
    with pytest.warns(DeprecationWarning, match="Attempt.route"):
        assert result.attempts[0].decision == "accept"
    system, user = (m["content"] for m in scripted_llm.requests[0]["messages"])
    assert REFUSAL_TOKEN in system and "[S1] (policy.md, page 2)" in user and '[S2] (hours.md, section "Hours")' in user
    assert user.endswith(f"Question: {QUESTION}")


def test_ladder_reaches_its_fallback(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier, caplog: pytest.LogCaptureFixture
) -> None:
    scripted_llm.script(INVENTED, f"{GOOD} {INVENTED}", "Refunds take 14 days [S9].")
    with caplog.at_level(logging.INFO, logger="groundwire.llm.generate"):
        result = generator(client, verifier).generate(QUESTION, CHUNKS)
    assert result.fallback and result.answer == REFUSAL_TOKEN and result.report.abstained
    assert [a.strength for a in result.attempts] == ["standard", "strict", "very_strict"]
    assert all(a.action == "reject" for a in result.attempts)
    systems = [r["messages"][0]["content"] for r in scripted_llm.requests]
    assert "Strict grounding" not in systems[0] and "Strict grounding" in systems[1]
    assert "Very strict grounding" in systems[2]
    assert sum("generate attempt" in r.message for r in caplog.records) == 3
    assert any("fallback" in r.message for r in caplog.records)


def test_configured_fallback_message(scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier) -> None:
    scripted_llm.script(INVENTED)
    message = "The sources don't support a complete answer."
    result = generator(client, verifier, strengths=("standard",), fallback_answer=message).generate(QUESTION, CHUNKS)
    assert result.fallback and result.answer == message and len(result.attempts) == 1


def test_fabricated_citation_fails_an_attempt_then_strict_passes(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    scripted_llm.script("Refunds are issued within 14 days [S7].", GOOD)
    result = generator(client, verifier).generate(QUESTION, CHUNKS)
    assert [a.action for a in result.attempts] == ["reject", "accept"]
    assert result.answer == GOOD and result.attempts[1].strength == "strict"


def test_an_answer_that_states_nothing_is_not_delivered(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    # Seen from SmolLM2-135M: a lead-in with no content. Verification alone scores it 1.0 (no claims).
    scripted_llm.script("The answer to this question is:", GOOD)
    result = generator(client, verifier).generate(QUESTION, CHUNKS)
    assert verifier.verify("The answer to this question is:", CHUNKS).score == 1.0
    assert [(a.action, a.findings) for a in result.attempts] == [("reject", ("no_answer",)), ("accept", ())]
    assert result.answer == GOOD


def test_refusal_is_delivered(scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier) -> None:
    scripted_llm.script(f"{REFUSAL_TOKEN}.")  # a trailing period is still the bare token
    result = generator(client, verifier).generate("Who is the CEO?", CHUNKS)
    assert result.outcome.action == "abstain" and result.answer == REFUSAL_TOKEN and not result.fallback


def test_answer_claiming_sufficiency_is_flagged(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    scripted_llm.script(INVENTED, GOOD)
    result = generator(client, verifier, strengths=("standard",)).generate("Who is the CEO?", CHUNKS)
    assert "false_sufficiency" in result.attempts[0].findings and result.fallback
    supported = generator(client, verifier, strengths=("standard",)).generate(QUESTION, CHUNKS)
    assert "false_sufficiency" not in supported.attempts[0].findings
    # A claim still in the escalation band is undecided, not rejected: no false sufficiency yet.
    assert false_sufficiency(verifier.verify(BAND, CHUNKS), min_supported_share=0.5) is None
    finding = false_sufficiency(verifier.verify(f"{GOOD} {INVENTED}", CHUNKS), min_supported_share=0.9)
    assert finding is not None and "rejects 1" in finding.detail


def test_confidence_routing_escalates_to_the_expensive_model(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier, caplog: pytest.LogCaptureFixture
) -> None:
    scripted_llm.script(INVENTED, GOOD)
    with caplog.at_level(logging.WARNING, logger="groundwire.llm.generate"):
        result = generator(client, verifier, expensive_model="big-model", escalate_below=0.6).generate(QUESTION, CHUNKS)
    assert [r["model"] for r in scripted_llm.requests] == ["scripted", "big-model"]
    assert [(a.model, a.strength) for a in result.attempts] == [("scripted", "standard"), ("big-model", "standard")]
    assert len(result.escalations) == 1
    escalation = result.escalations[0]
    assert (escalation.from_model, escalation.to_model) == ("scripted", "big-model")
    assert escalation.reason.startswith(f"groundedness {result.attempts[0].score:.2f} < 0.6")
    assert result.attempts[0].score < 0.6
    assert any("escalating scripted -> big-model" in r.message for r in caplog.records)
    assert result.answer == GOOD


def test_disclaimer_policy_returns_the_answer_with_a_caveat(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    scripted_llm.script(BAND)
    policy = PolicyConfig(name="disclaimer", disclaimer_band=(0.4, 0.9), disclaimer="Check the sources.")
    result = generator(client, verifier, policy=policy).generate("When is the store open?", CHUNKS)
    assert result.outcome.action == "disclaim"
    assert result.answer == f"{BAND}\n\nCheck the sources."
    assert len(scripted_llm.requests) == 1


def test_disclaimer_never_covers_a_rejected_answer(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    # Scores 1.0 on its words, but cites a chunk that was never retrieved: rejected, so no caveat can save it.
    scripted_llm.script("Refunds are issued within 14 days [S7].", GOOD)
    policy = PolicyConfig(name="disclaimer", disclaimer_band=(0.4, 0.9))
    result = generator(client, verifier, policy=policy).generate(QUESTION, CHUNKS)
    assert [a.action for a in result.attempts] == ["reject", "accept"] and result.answer == GOOD


def test_strict_policy_does_not_take_the_band(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    scripted_llm.script(BAND)
    result = generator(client, verifier, strengths=("standard",), policy=PolicyConfig(name="strict")).generate(
        "When is the store open?", CHUNKS
    )
    assert result.fallback and result.attempts[0].action == "reject"


def test_consistency_sampling_measures_agreement_per_claim(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    two_claims = "Refunds are issued within 14 days [S1]. Shipping is free on orders over $50 [S1]."
    scripted_llm.script(
        two_claims,
        "Refunds are issued within 14 days.",  # agrees on claim 1 only
        "Refunds are issued within 14 days, and shipping is free on orders over $50.",  # agrees on both
        REFUSAL_TOKEN,  # states nothing: disagrees with both
    )
    result = generator(client, verifier, samples=4, sample_temperature=0.9).generate(QUESTION, CHUNKS)
    assert [r.get("temperature") for r in scripted_llm.requests] == [0.0, 0.9, 0.9, 0.9]
    consistency = result.report.meta.consistency
    assert consistency is not None and consistency.samples == 4 and consistency.agreement == (0.6667, 0.3333)
    assert [c.features["consistency"] for c in result.report.claims] == [0.6667, 0.3333]
    assert [c.checks[-1].check if c.checks else None for c in result.report.claims][1] == "inconsistent_across_samples"


def test_low_confidence_spans_are_marked(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    tokens = [
        ("Refunds", -0.01),
        (" are", -0.01),
        (" issued", -0.02),
        (" within", -0.05),
        (" 14", math.log(0.1)),
        (" days", math.log(0.2)),
        (" [S1].", -0.01),
    ]
    scripted_llm.script(Reply(content="".join(t for t, _ in tokens), logprobs=tokens))
    result = generator(client, verifier, low_confidence_prob=0.3).generate(QUESTION, CHUNKS)
    assert scripted_llm.requests[0]["logprobs"] is True
    spans = result.report.meta.low_confidence_spans or ()
    assert [(s.text, s.min_prob) for s in spans] == [("14 days", 0.1)]
    claim = result.report.claims[0]
    assert claim.checks[-1].check == "low_confidence_tokens" and claim.features["min_token_prob"] == 0.1


def test_low_confidence_spans_ignore_missing_logprobs() -> None:
    completion = Completion("Hello world", "m", "stop", 1, 2, 0.1, 1, None)
    assert low_confidence_spans(completion, "Hello world", threshold=0.5) == []
    completion = dataclasses.replace(completion, logprobs=(TokenLogprob("Hello", -3.0), TokenLogprob(" world", 0.0)))
    assert low_confidence_spans(completion, "Hello world", threshold=0.5)[0].text == "Hello"
    # A special token absent from the text takes no characters and shifts nothing after it.
    completion = dataclasses.replace(
        completion, logprobs=(TokenLogprob("<s>", -5.0), TokenLogprob("Hello", 0.0), TokenLogprob(" world", -3.0))
    )
    assert [s.text for s in low_confidence_spans(completion, "Hello world", threshold=0.5)] == ["world"]


def test_active_retrieval_on_a_low_confidence_sentence(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    warranty = Chunk("W1", "Every laptop carries a two year warranty.")
    retriever = KeywordRetriever([warranty, Chunk("X1", "Gift cards never expire.")])
    first = [
        ("Laptops", -0.01),
        (" have", -0.01),
        (" a", -0.01),
        (" one", math.log(0.05)),
        (" year", -0.1),
        (" warranty", -0.01),
        (".", -0.01),
    ]
    scripted_llm.script(
        Reply(content="".join(t for t, _ in first), logprobs=first), "Every laptop carries a two year warranty [W1]."
    )
    result = generator(client, verifier, active_retrieval_rounds=2, retriever=retriever).generate(
        "What warranty do laptops have?", CHUNKS
    )
    # FLARE's masked query: the question plus the tentative sentence without its low-confidence token.
    assert retriever.queries[0] == "What warranty do laptops have? Laptops have a year warranty."
    assert [c.id for c in result.chunks] == ["S1", "S2", "W1"]
    assert "[W1]" in scripted_llm.requests[1]["messages"][1]["content"]
    assert result.outcome.action == "accept" and result.attempts[0].retrievals == 1


def test_self_rag_reflection_tokens(scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier) -> None:
    warranty = Chunk("W1", "Every laptop carries a two year warranty.")
    retriever = KeywordRetriever([warranty])
    scripted_llm.script(
        "[Retrieval]",  # the model asks for evidence before answering
        "[Retrieval]<paragraph>Every laptop carries a two year warranty.</paragraph>[Relevant]"
        "Every laptop carries a two year warranty [W1].[Fully supported][Utility:5]",
    )
    result = generator(client, verifier, retriever=retriever, self_rag=True).generate(
        "What warranty do laptops have?", CHUNKS
    )
    assert "### Instruction:" in scripted_llm.requests[0]["messages"][0]["content"]
    assert len(retriever.queries) == 1 and "<paragraph>" in scripted_llm.requests[1]["messages"][0]["content"]
    assert result.answer == "Every laptop carries a two year warranty [W1]."
    segment = (result.report.meta.self_rag or ())[0]
    assert (segment.is_sup, segment.is_rel, segment.is_use) == ("fully", "relevant", 5)
    assert segment.verifier == (Verdict.SUPPORTED,)
    assert result.report.claims[0].features["selfrag_is_sup"] == 1.0


def test_chain_of_thought_answer_is_extracted(
    scripted_llm: ScriptedLLMServer, client: LLMClient, verifier: Verifier
) -> None:
    scripted_llm.script(f"<evidence>[S1] Refunds are issued within 14 days of the return.</evidence>\nAnswer: {GOOD}")
    result = generator(client, verifier, strengths=("chain_of_thought",)).generate(QUESTION, CHUNKS)
    assert result.answer == GOOD and result.report.route is Route.ACCEPT
    assert "<evidence>" in scripted_llm.requests[0]["messages"][0]["content"]
