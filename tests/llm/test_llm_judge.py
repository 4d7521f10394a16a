from __future__ import annotations

import json

import pytest
from scripted_llm import Reply, ScriptedLLMServer

from groundwire.config import LLMConfig
from groundwire.foundation.types import Chunk, Claim, ClaimResult, JudgeSummary, Report, Route, Verdict
from groundwire.llm.client import LLMClient, LLMError
from groundwire.llm.judge import adjudicate, judge_claim, normalise_quote, quote_in_chunk

CHUNKS = [
    Chunk("S1", "Refunds are issued within 14 days of the return.\nShipping is free on orders over $50."),
    Chunk("S2", "The store is open \u201cMonday to Friday\u201d, 9am to 5pm."),
]


def judge_json(quote: str, chunk_id: str | None, verdict: str, reason: str = "because") -> str:
    return json.dumps({"quote": quote, "chunk_id": chunk_id, "verdict": verdict, "reason": reason})


def result(text: str, *, score: float, route: Route, verdict: Verdict = Verdict.NOT_FOUND) -> ClaimResult:
    return ClaimResult(
        claim=Claim(text, (0, len(text)), text),
        verdict=verdict,
        score=score,
        support=score,
        contradiction=None,
        chunk_id="S1",
        evidence=None,
        evidence_span=None,
        checks=(),
        route=route,
    )


def judge_of(report: Report) -> JudgeSummary:
    assert report.meta.judge is not None, "the judge did not run"
    return report.meta.judge


def report(*claims: ClaimResult) -> Report:
    return Report(
        answer=" ".join(c.claim.text for c in claims),
        score=min(c.score for c in claims),
        route=Route.ESCALATE,
        claims=claims,
        abstained=False,
        model_id="lexical",
    )


def test_normalisation_is_only_whitespace_quotes_and_case() -> None:
    assert normalise_quote(" \u201cRefunds\u201d  are\nISSUED ") == '"refunds" are issued'
    assert quote_in_chunk("refunds are   issued within 14 DAYS", CHUNKS[0].text)
    assert quote_in_chunk('open "Monday to Friday"', CHUNKS[1].text)
    # Any other difference, however small, fails: punctuation, a changed number, a paraphrase.
    assert not quote_in_chunk("Refunds are issued within 15 days", CHUNKS[0].text)
    assert not quote_in_chunk("Refunds, are issued within 14 days", CHUNKS[0].text)
    assert not quote_in_chunk("refunds get issued within 14 days", CHUNKS[0].text)
    assert not quote_in_chunk("Refunds", CHUNKS[0].text)  # too short to prove anything


def test_supported_with_a_verbatim_quote(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(judge_json("Refunds are issued within 14 days of the return.", "[S1]", "supported"))
    judgement = judge_claim("Refunds take two weeks.", CHUNKS, client=client)
    assert judgement.verdict is Verdict.SUPPORTED and judgement.finding is None and judgement.chunk_id == "S1"
    request = scripted_llm.requests[0]
    assert request["response_format"] == {"type": "json_object"}
    assert (
        "[S1]" in request["messages"][1]["content"] and "Refunds take two weeks." in request["messages"][1]["content"]
    )


@pytest.mark.parametrize("ruling", ["SUPPORTED", "CONTRADICTED"])
def test_a_verbatim_quote_about_something_else_backs_no_ruling(
    scripted_llm: ScriptedLLMServer, client: LLMClient, ruling: str
) -> None:
    # Verbatim, but it shares no content word with the claim: it can state neither the claim nor its opposite.
    scripted_llm.script(judge_json("Shipping is free on orders over $50.", "S1", ruling))
    judgement = judge_claim("Refunds take two weeks.", CHUNKS, client=client)
    assert (judgement.verdict, judgement.model_verdict) == (Verdict.NOT_FOUND, Verdict(ruling))
    assert judgement.finding is not None and judgement.finding.check == "unrelated_quote"


def test_quote_not_in_the_chunk_is_confabulated_support(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(judge_json("Refunds are issued within 7 days.", "S1", "SUPPORTED"))
    judgement = judge_claim("Refunds take a week.", CHUNKS, client=client)
    assert judgement.verdict is Verdict.NOT_FOUND and judgement.model_verdict is Verdict.SUPPORTED
    assert judgement.finding is not None and judgement.finding.check == "confabulated_support"


def test_quote_from_the_wrong_chunk_is_not_accepted(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(judge_json("Shipping is free on orders over $50.", "S2", "SUPPORTED"))
    judgement = judge_claim("Shipping is free over $50.", CHUNKS, client=client)
    assert judgement.verdict is Verdict.NOT_FOUND and judgement.finding.check == "confabulated_support"


def test_fabricated_chunk_id_is_recorded_separately(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    scripted_llm.script(judge_json("Refunds are issued within 14 days of the return.", "S7", "SUPPORTED"))
    judgement = judge_claim("Refunds take two weeks.", CHUNKS, client=client)
    assert judgement.verdict is Verdict.NOT_FOUND
    assert judgement.finding.check == "fabricated_citation" and "S7" in judgement.finding.detail


@pytest.mark.parametrize("reply", ["SUPPORTED", '{"quote": "x", "verdict": "MAYBE"}', '{"quote": "x"', ""])
def test_unparseable_is_not_found(scripted_llm: ScriptedLLMServer, client: LLMClient, reply: str) -> None:
    scripted_llm.script(reply)
    judgement = judge_claim("Refunds take two weeks.", CHUNKS, client=client)
    assert (judgement.verdict, judgement.reason) == (Verdict.NOT_FOUND, "unparseable")
    assert judgement.completion is not None and judgement.completion.text == reply
    assert judgement.finding.check == "unparseable"


def test_adjudicate_decides_only_escalated_claims(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    accepted = result("Shipping is free on orders over $50.", score=0.95, route=Route.ACCEPT, verdict=Verdict.SUPPORTED)
    band_ok = result("Refunds are issued within 14 days.", score=0.5, route=Route.ESCALATE)
    scripted_llm.script(judge_json("Refunds are issued within 14 days of the return.", "S1", "SUPPORTED"))
    judged = adjudicate(report(accepted, band_ok), CHUNKS, client=client)
    assert len(scripted_llm.requests) == 1
    assert judged.claims[0] == accepted
    second = judged.claims[1]
    assert (second.verdict, second.route, second.decided_by, second.score) == (
        Verdict.SUPPORTED,
        Route.ACCEPT,
        "judge",
        1.0,
    )
    assert second.support == 0.5  # the scorer's own number is kept
    assert CHUNKS[0].text[slice(*second.evidence_span)] == "Refunds are issued within 14 days of the return."
    assert judged.route is Route.ACCEPT and judged.score == pytest.approx(0.95)
    assert judge_of(judged).calls == 1 and judge_of(judged).decided == (1,)
    assert judge_of(judged).completion_tokens > 0


def test_adjudicate_rejects_on_confabulation_and_records_it(scripted_llm: ScriptedLLMServer, client: LLMClient) -> None:
    claims = (
        result("Refunds take 30 days.", score=0.4, route=Route.ESCALATE),
        result("The store opens on Sundays.", score=0.3, route=Route.ESCALATE),
    )
    scripted_llm.script(
        judge_json("Refunds take 30 days.", "S1", "SUPPORTED"),
        judge_json("The store is open Sunday", "S9", "SUPPORTED"),
    )
    judged = adjudicate(report(*claims), CHUNKS, client=client)
    assert [c.verdict for c in judged.claims] == [Verdict.NOT_FOUND, Verdict.NOT_FOUND]
    assert [c.checks[-1].check for c in judged.claims] == ["confabulated_support", "fabricated_citation"]
    assert judged.route is Route.REJECT and judged.score == 0.0
    assert [o.finding for o in judge_of(judged).outcomes] == ["confabulated_support", "fabricated_citation"]


def test_adjudicate_keeps_claim_escalated_when_the_judge_is_down(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.script(Reply(status=503, raw_body="{}"), Reply(status=503, raw_body="{}"))
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", max_retries=1, backoff_s=0.0)) as llm:
        judged = adjudicate(
            report(result("Refunds take 30 days.", score=0.4, route=Route.ESCALATE)), CHUNKS, client=llm
        )
    assert judged.claims[0].route is Route.ESCALATE and judged.route is Route.ESCALATE
    assert any("claim 1 was not judged" in w for w in judged.warnings)
    assert judged.claims[0].checks[-1].check == "judge_unavailable" and judged.claims[0].score == 0.4
    assert judge_of(judged).decided == () and judge_of(judged).not_judged == (0,)
    assert (judge_of(judged).calls, judge_of(judged).failed_calls) == (1, 1)


def test_adjudicate_required_raises_when_the_judge_is_down(scripted_llm: ScriptedLLMServer) -> None:
    scripted_llm.script(Reply(status=401, raw_body='{"error": "bad key"}'))
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", max_retries=0)) as llm, pytest.raises(LLMError):
        adjudicate(report(result("Refunds take 30 days.", score=0.4, route=Route.ESCALATE)), CHUNKS, client=llm,
                   required=True)


@pytest.mark.parametrize("reply", ["SUPPORTED", '{"quote": "x"', "garbage", judge_json("", None, "UNRESOLVED")])
def test_unparseable_reply_leaves_the_claim_escalated(
    scripted_llm: ScriptedLLMServer, client: LLMClient, reply: str
) -> None:
    # Before: garbage turned a 0.43 claim into a REJECT at 0.0. Now it is the same as a failed call.
    scripted_llm.script(reply)
    judged = adjudicate(report(result("Refunds take 30 days.", score=0.43, route=Route.ESCALATE)), CHUNKS,
                        client=client, required=True)
    claim = judged.claims[0]
    assert (claim.route, claim.score, claim.decided_by) == (Route.ESCALATE, 0.43, "scorer")
    assert claim.checks[-1].check == "unparseable" and judged.route is Route.ESCALATE
    assert judge_of(judged).not_judged == (0,) and any("not judged" in w for w in judged.warnings)


def test_the_schema_asks_for_the_quote_before_one_of_three_rulings(scripted_llm: ScriptedLLMServer) -> None:
    # Under schema-constrained decoding the required fields come first: all four are required, in the order the
    # prompt asks for (quote, then ruling), and the ruling is one the judge may give.
    scripted_llm.script(judge_json("Refunds are issued within 14 days of the return.", "S1", "SUPPORTED"))
    with LLMClient(LLMConfig(base_url=scripted_llm.url, model="m", json_mode="json_object_schema")) as llm:
        judge_claim("Refunds are issued within 14 days.", CHUNKS, client=llm)
    schema = scripted_llm.requests[0]["response_format"]["schema"]
    assert schema["required"] == ["quote", "chunk_id", "verdict", "reason"] == list(schema["properties"])
    assert schema["properties"]["verdict"]["enum"] == ["SUPPORTED", "CONTRADICTED", "NOT_FOUND"]


def test_with_a_judge_the_callers_span_gets_the_final_evaluation_once(
    scripted_llm: ScriptedLLMServer, client: LLMClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify escalates, the judge accepts: the model-call span gets one answer evaluation, the judged one."""
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from groundwire import Verifier
    from groundwire.core import tracing
    from groundwire.pipeline import CheckItem, Judge, check
    from groundwire.scoring import get_scorer

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "_get_tracer", lambda: provider.get_tracer("groundwire"))
    hours = "Our support team is available Monday to Friday, 9am to 5pm."
    scripted_llm.script(judge_json(hours, "c0", "SUPPORTED"))
    item = CheckItem("Support is open on weekdays from 9am to 5pm CET.", (Chunk("c0", hours),), response_id="r-1")
    with provider.get_tracer("app").start_as_current_span("chat"):
        report = check(Verifier(get_scorer("lexical")), item, judge=Judge(client))
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert spans["groundwire.verify"].attributes["groundwire.route"] == "escalate"
    assert report.route is Route.ACCEPT == Route(spans["groundwire.judge"].attributes["groundwire.route"])
    answers = [e for e in spans["chat"].events if e.attributes["gen_ai.evaluation.name"] == "groundwire.grounding"]
    assert [(e.attributes["gen_ai.evaluation.score.label"], e.attributes["gen_ai.response.id"]) for e in answers] == [
        ("accept", "r-1")]
    assert not spans["groundwire.verify"].events and not spans["groundwire.judge"].events
