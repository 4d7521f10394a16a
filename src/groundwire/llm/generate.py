"""Grounded generation: generate -> output validators -> verify, with retries that tighten grounding.

One call of `Generator.generate(question, chunks)`:

1. Ask the model (prompts.generation_messages at the current grounding strength).
2. Optionally (FLARE-style active retrieval) look for a sentence with low-probability tokens, retrieve
   on it through the `Retriever`, and regenerate with the added passages.
3. Run the output validators, verify through the `AnswerCheck` it is handed (`pipeline.Checker`: the one check
   path), flag low-confidence spans from token logprobs,
   and flag an answer that claims sufficiency over an insufficient context.
4. Apply the answer policy. A delivered answer (accept, disclaim, abstain) ends the loop. Otherwise:
   when the score is below `escalate_below` and an expensive model is configured, the same strength is
   retried on the expensive model (confidence routing, logged with the reason); else the next strength
   is tried (standard -> strict -> very strict). When every strength fails, the hard fallback answer is
   returned.
5. Optionally, consistency sampling: N samples at a temperature, agreement measured claim by claim by
   the verifier (each other sample used as the premise), not by another LLM call.

Every attempt and escalation is logged (logger "groundwire.llm.generate") and kept in the result.
"""

from __future__ import annotations

import dataclasses
import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from groundwire.config import Config, GenerateConfig, PolicyConfig, load_config
from groundwire.core.cancel import checkpoint
from groundwire.core.explain import format_threshold
from groundwire.core.plan import as_chunks
from groundwire.core.tracing import traced
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.textutil import sentence_spans
from groundwire.foundation.types import (
    REFUSAL_TOKEN,
    AnswerCheck,
    Chunk,
    Consistency,
    Finding,
    LowConfidenceSpan,
    Report,
    Route,
    SelfRagSegment,
    Verdict,
)
from groundwire.llm import prompts
from groundwire.llm.client import Completion, LLMClient, TokenLogprob
from groundwire.llm.policy import DELIVERED, PolicyOutcome, apply_policy
from groundwire.llm.prompts import Strength
from groundwire.llm.selfrag import IS_SUP_SCORE, Reflection, parse_reflection

log = logging.getLogger("groundwire.llm.generate")

BLOCKING_CHECKS = frozenset(
    {"empty_answer", "refusal_token_not_alone", "fabricated_citation", "false_sufficiency", "no_answer"}
)
"""Answer-level findings that fail an attempt whatever the score."""


@runtime_checkable
class Retriever(Protocol):
    def retrieve(self, query: str, *, k: int) -> list[Chunk]:
        """Up to k passages for the query. Ids must be stable: a passage already in the context is skipped."""
        ...


@dataclass(frozen=True, slots=True)
class Attempt:
    number: int
    strength: str
    model: str
    answer: str
    score: float
    route: str
    """The attempt's routing (accept, escalate, reject); `decision` in 0.1, and beside `route` in `to_dict` for one
    release."""
    action: str
    """The policy's action on this attempt: accept, disclaim, abstain, escalate or reject."""
    reason: str
    retrievals: int = 0
    findings: tuple[str, ...] = ()
    """Names of the answer-level findings (fabricated_citation, false_sufficiency...)."""

    @property
    def decision(self) -> str:
        """Deprecated (0.1's name): `route`."""
        warnings.warn("Attempt.decision is deprecated: read Attempt.route", DeprecationWarning, stacklevel=2)
        return self.route

    def to_dict(self) -> dict[str, Any]:
        """As JSON, with the route also under `decision`, its 0.1 name, for one release (issue 57)."""
        return dataclasses.asdict(self) | {"decision": self.route}


@dataclass(frozen=True, slots=True)
class Escalation:
    from_model: str
    to_model: str
    reason: str


@dataclass(frozen=True, slots=True)
class Generation:
    question: str
    answer: str
    """What to show the user: the policy's answer (with a caveat when disclaimed) or the fallback."""
    report: Report
    """Verification of the chosen answer (of the fallback when every attempt failed)."""
    outcome: PolicyOutcome
    attempts: tuple[Attempt, ...]
    escalations: tuple[Escalation, ...] = ()
    fallback: bool = False
    chunks: tuple[Chunk, ...] = ()
    """The final context, including passages added by active retrieval."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "action": self.outcome.action,
            "reason": self.outcome.reason,
            "fallback": self.fallback,
            "attempts": [attempt.to_dict() for attempt in self.attempts],
            "escalations": [dataclasses.asdict(e) for e in self.escalations],
            "report": self.report.to_dict(),
            "retrieved": [c.id for c in self.chunks],
        }


@dataclass
class Generator:
    client: LLMClient
    checker: AnswerCheck
    settings: GenerateConfig = field(default_factory=GenerateConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    expensive_model: str | None = None
    retriever: Retriever | None = None
    self_rag: bool = False

    @classmethod
    def from_config(
        cls, config: Config, *, client: LLMClient, checker: AnswerCheck, retriever: Retriever | None = None
    ) -> Generator:
        return cls(
            client=client,
            checker=checker,
            settings=config.generate,
            policy=config.policy,
            expensive_model=config.llm.expensive_model,
            retriever=retriever,
            self_rag=config.llm.self_rag,
        )

    @traced("groundwire.generate")
    def generate(self, question: str, chunks: Sequence[Chunk | str]) -> Generation:
        if not question or not question.strip():
            raise InputError("the question is empty: pass the user's question", code=ErrorCode.EMPTY_QUESTION)
        context = as_chunks(chunks)
        models = [self.client.config.model] + ([self.expensive_model] if self.expensive_model else [])
        tier = 0
        attempts: list[Attempt] = []
        escalations: list[Escalation] = []
        strengths = [Strength(name) for name in self.settings.strengths]
        step = 0
        while step < len(strengths):
            checkpoint()  # the attempts share a service request's time budget, and stop once its caller has gone
            strength, model = strengths[step], models[tier]
            result = self._attempt(question, context, strength=strength, model=model, number=len(attempts) + 1)
            context = result.context
            attempts.append(result.attempt)
            log.info(
                "generate attempt %d strength=%s model=%s score=%.2f action=%s: %s",
                len(attempts),
                strength.value,
                model,
                result.report.score,
                result.outcome.action,
                result.outcome.reason,
            )
            if result.outcome.action in DELIVERED:
                report = self._consistency(question, context, result, strength=strength, model=model)
                return Generation(
                    question,
                    result.outcome.answer,
                    report,
                    result.outcome,
                    tuple(attempts),
                    tuple(escalations),
                    False,
                    tuple(context),
                )
            if result.report.score < self.settings.escalate_below and tier + 1 < len(models):
                reason = (
                    f"groundedness {result.report.score:.2f} < {format_threshold(self.settings.escalate_below)} "
                    f"at strength {strength.value}"
                )
                escalations.append(Escalation(model, models[tier + 1], reason))
                log.warning("generate: escalating %s -> %s: %s", model, models[tier + 1], reason)
                tier += 1
                continue
            step += 1
        return self._fallback(question, context, attempts, escalations)

    # --- one attempt -------------------------------------------------------------------------------

    def _attempt(
        self, question: str, context: list[Chunk], *, strength: Strength, model: str, number: int
    ) -> _AttemptResult:
        completion, answer, reflection = self._complete(question, context, strength=strength, model=model)
        retrievals = 0
        while retrievals < self._retrieval_rounds() and self.retriever is not None:
            query = self._retrieval_query(question, answer, completion, reflection)
            added = self._retrieve(query, context) if query else []
            if not added:
                break
            retrievals += 1
            context = context + added
            log.info("generate: retrieval round %d on %r added %s", retrievals, query, [c.id for c in added])
            completion, answer, reflection = self._complete(question, context, strength=strength, model=model)
        checkpoint()
        report = self._check(question, answer, context, completion, reflection)
        outcome = apply_policy(report, config=self.policy, fallback=self.settings.fallback_answer)
        attempt = Attempt(
            number,
            strength.value,
            model,
            answer,
            report.score,
            report.route.value,
            outcome.action,
            outcome.reason,
            retrievals,
            tuple(f.check for f in report.findings),
        )
        return _AttemptResult(attempt, report, outcome, context, completion)

    def _complete(
        self, question: str, context: list[Chunk], *, strength: Strength, model: str, temperature: float | None = None
    ) -> tuple[Completion, str, Reflection | None]:
        build = prompts.selfrag_messages if self.self_rag else prompts.generation_messages
        completion = self.client.chat(
            build(question, context, strength=strength),
            purpose="generate",
            model=model,
            temperature=temperature,
            logprobs=self.settings.low_confidence_prob > 0,
        )
        if self.self_rag:
            reflection = parse_reflection(completion.text)
            return completion, _normalise_refusal(reflection.text), reflection
        text = completion.text.strip()
        answer = prompts.extract_cot_answer(text) if strength is Strength.CHAIN_OF_THOUGHT else text
        return completion, _normalise_refusal(answer), None

    def _retrieval_rounds(self) -> int:
        # A Self-RAG model asks for retrieval itself; give it at least one round when a retriever exists.
        return max(self.settings.active_retrieval_rounds, 1 if self.self_rag else 0)

    def _retrieval_query(
        self, question: str, answer: str, completion: Completion, reflection: Reflection | None
    ) -> str | None:
        if reflection is not None:
            return f"{question} {answer}".strip() if reflection.wants_retrieval else None
        spans = low_confidence_spans(completion, answer, threshold=self.settings.low_confidence_prob)
        for start, end in sentence_spans(answer):
            inside = [s for s in spans if start <= s.start < end]
            if inside:
                # FLARE's masked query: the tentative sentence without its low-confidence tokens.
                sentence = answer[start:end]
                for span in sorted(inside, key=lambda s: -s.start):
                    a, b = span.start - start, span.end - start
                    sentence = sentence[:a] + " " + sentence[b:]
                return " ".join(f"{question} {sentence}".split())
        return None

    def _retrieve(self, query: str, context: list[Chunk]) -> list[Chunk]:
        assert self.retriever is not None
        known = {chunk.id for chunk in context}
        texts = {chunk.text for chunk in context}
        added: list[Chunk] = []
        for chunk in self.retriever.retrieve(query, k=self.settings.retrieve_k):
            if chunk.id not in known and chunk.text not in texts:
                added.append(chunk)
                known.add(chunk.id)
        return added

    def _check(
        self, question: str, answer: str, context: list[Chunk], completion: Completion, reflection: Reflection | None
    ) -> Report:
        if not answer.strip():
            return _empty_report(answer, question, self.checker.model_id)
        report = self.checker(answer, context, question=question)  # runs the output validators too
        sufficiency = false_sufficiency(report, min_supported_share=self.settings.insufficient_below)
        findings = [sufficiency] if sufficiency else []
        if not report.abstained and not report.claims:
            # Verification scores a claimless answer 1.0 (it asserts nothing), but as a generated answer it
            # answers nothing either: "The answer to this question is:" must not be delivered.
            findings.append(Finding("no_answer", f"the answer states nothing checkable and is not {REFUSAL_TOKEN}"))
        report = mark_low_confidence(
            report, low_confidence_spans(completion, answer, threshold=self.settings.low_confidence_prob)
        )
        if reflection is not None:
            report = carry_reflection(report, reflection)
        blocking = [f for f in (*report.findings, *findings) if f.check in BLOCKING_CHECKS]
        route = Route.REJECT if blocking and report.route is not Route.REJECT and not report.abstained else report.route
        return dataclasses.replace(report, findings=report.findings + tuple(findings), route=route)

    # --- consistency and fallback ------------------------------------------------------------------

    def _consistency(
        self, question: str, context: list[Chunk], chosen: _AttemptResult, *, strength: Strength, model: str
    ) -> Report:
        report = chosen.report
        if self.settings.samples <= 1 or report.abstained or not report.claims:
            return report
        others = [
            self._complete(
                question, context, strength=strength, model=model, temperature=self.settings.sample_temperature
            )[1]
            for _ in range(self.settings.samples - 1)
        ]
        agreement = claim_agreement(report, others, checker=self.checker)
        claims = tuple(
            dataclasses.replace(
                result,
                features={**result.features, "consistency": share},
                checks=result.checks
                + (
                    (
                        Finding(
                            "inconsistent_across_samples", f"only {share:.0%} of {len(others)} other samples state this"
                        ),
                    )
                    if share < 0.5
                    else ()
                ),
            )
            for result, share in zip(report.claims, agreement, strict=True)
        )
        consistency = Consistency(len(others) + 1, tuple(agreement), sum(agreement) / len(agreement))
        return dataclasses.replace(report, claims=claims, meta=dataclasses.replace(report.meta, consistency=consistency))

    def _fallback(
        self, question: str, context: list[Chunk], attempts: list[Attempt], escalations: list[Escalation]
    ) -> Generation:
        answer = self.settings.fallback_answer
        log.warning("generate: every attempt failed (%d); returning the fallback answer", len(attempts))
        report = Report(
            answer=answer,
            score=1.0,
            route=Route.ACCEPT,
            claims=(),
            abstained=True,
            model_id=self.checker.model_id,
            question=question,
            warnings=(f"fallback after {len(attempts)} failed attempts",),
        )
        outcome = PolicyOutcome("abstain", answer, f"no attempt passed in {len(attempts)} tries")
        return Generation(question, answer, report, outcome, tuple(attempts), tuple(escalations), True, tuple(context))


@dataclass(frozen=True, slots=True)
class _AttemptResult:
    attempt: Attempt
    report: Report
    outcome: PolicyOutcome
    context: list[Chunk]
    completion: Completion


def generate(
    question: str,
    chunks: Sequence[Chunk | str],
    *,
    client: LLMClient,
    checker: AnswerCheck,
    config: Config | None = None,
    retriever: Retriever | None = None,
) -> Generation:
    """Grounded generation with the settings of groundwire.toml (or `config`)."""
    config = load_config() if config is None else config
    return Generator.from_config(config, client=client, checker=checker, retriever=retriever).generate(
        question, chunks
    )


# --- signals -------------------------------------------------------------------------------------------


def false_sufficiency(report: Report, *, min_supported_share: float) -> Finding | None:
    """An answer (not an abstention) most of whose claims the context rejects: by answering, it claims the
    context was sufficient, and it was not; it should have said NOT_IN_CONTEXT. Claims still in the
    escalation band are undecided, not rejected, and do not count against it."""
    if report.abstained or not report.claims:
        return None
    rejected = sum(result.route is Route.REJECT for result in report.claims)
    standing = len(report.claims) - rejected
    if standing / len(report.claims) >= min_supported_share:
        return None
    return Finding(
        "false_sufficiency",
        f"the answer asserts {len(report.claims)} claims and the context rejects {rejected}; "
        f"it should have answered {REFUSAL_TOKEN}",
        Verdict.NOT_FOUND,
    )


def low_confidence_spans(completion: Completion, answer: str, *, threshold: float) -> list[LowConfidenceSpan]:
    """Character spans of `answer` made of tokens whose probability is below `threshold`, merged per word run."""
    if not completion.logprobs or threshold <= 0:
        return []
    offsets = _token_offsets(completion.text, completion.logprobs)
    shift = completion.text.find(answer) if answer else -1
    runs: list[tuple[int, int, float]] = []  # (start, end, min_prob)
    for (start, end), token in zip(offsets, completion.logprobs, strict=True):
        if token.prob >= threshold or not token.token.strip() or shift < 0 or end <= start:
            continue
        start, end = start - shift, end - shift
        if start < 0 or end > len(answer):
            continue
        start += len(answer[start:end]) - len(answer[start:end].lstrip())
        if runs and start - runs[-1][1] <= 1:
            runs[-1] = (runs[-1][0], end, min(runs[-1][2], token.prob))
        else:
            runs.append((start, end, token.prob))
    return [LowConfidenceSpan(start, end, round(min_prob, 4), answer[start:end]) for start, end, min_prob in runs]


def _token_offsets(text: str, tokens: Sequence[TokenLogprob]) -> list[tuple[int, int]]:
    # Tokens normally concatenate to the text; where one does not, search forward for it. A token that is not
    # in the text at all (a special token the server kept out of the content) gets an empty span.
    offsets: list[tuple[int, int]] = []
    cursor = 0
    for token in tokens:
        at = text.find(token.token, cursor) if token.token else -1
        if at < 0:
            offsets.append((cursor, cursor))
            continue
        offsets.append((at, at + len(token.token)))
        cursor = at + len(token.token)
    return offsets


def mark_low_confidence(report: Report, spans: list[LowConfidenceSpan]) -> Report:
    """Record low-confidence spans in the report and as a finding on each claim they fall in."""
    if not spans:
        return report
    claims = []
    for result in report.claims:
        start, end = result.claim.span
        inside = [s for s in spans if s.start < end and s.end > start]
        if inside:
            detail = ", ".join(f"{s.text!r} (p={s.min_prob:.2f})" for s in inside)
            result = dataclasses.replace(
                result,
                checks=result.checks + (Finding("low_confidence_tokens", detail),),
                features={**result.features, "min_token_prob": min(s.min_prob for s in inside)},
            )
        claims.append(result)
    meta = dataclasses.replace(report.meta, low_confidence_spans=tuple(spans))
    return dataclasses.replace(report, claims=tuple(claims), meta=meta)


def carry_reflection(report: Report, reflection: Reflection) -> Report:
    """Put Self-RAG's own [IsSup] next to the verifier's verdict, per claim and per segment."""
    segments: list[SelfRagSegment] = []
    claims = list(report.claims)
    for segment in reflection.segments:
        if not segment.text:
            continue
        start, end = segment.span
        overlapping = [i for i, r in enumerate(claims) if r.claim.span[0] < end and r.claim.span[1] > start]
        for i in overlapping:
            if segment.is_sup is not None:
                claims[i] = dataclasses.replace(
                    claims[i], features={**claims[i].features, "selfrag_is_sup": IS_SUP_SCORE[segment.is_sup]}
                )
        verdicts = tuple(claims[i].verdict for i in overlapping)
        segments.append(
            SelfRagSegment(
                segment.text, segment.span, segment.retrieve, segment.is_rel, segment.is_sup, segment.is_use, verdicts
            )
        )
    meta = dataclasses.replace(report.meta, self_rag=tuple(segments))
    return dataclasses.replace(report, claims=tuple(claims), meta=meta)


def claim_agreement(report: Report, samples: Sequence[str], *, checker: AnswerCheck) -> list[float]:
    """Per claim of `report`, the share of other samples that state it (the check, each sample as premise)."""
    if not samples:
        return [1.0 for _ in report.claims]
    # The same check, but of the report's own claims: no second decomposition (LLM or not).
    claims = [r.claim for r in report.claims]
    votes = [0] * len(report.claims)
    for number, sample in enumerate(samples, start=1):
        if not sample.strip():
            continue  # an empty sample states nothing: it disagrees with every claim
        check = checker(report.answer, [Chunk(id=f"sample{number}", text=sample)], claims=claims)
        for i, result in enumerate(check.claims):
            votes[i] += result.route is Route.ACCEPT
    return [round(v / len(samples), 4) for v in votes]


def _normalise_refusal(answer: str) -> str:
    # "NOT_IN_CONTEXT." or "`NOT_IN_CONTEXT`" is the refusal token, dressed; anything more is not.
    return REFUSAL_TOKEN if answer.strip(" \t\n.`'\"*") == REFUSAL_TOKEN else answer


def _empty_report(answer: str, question: str, model_id: str) -> Report:
    return Report(
        answer=answer,
        score=0.0,
        route=Route.REJECT,
        claims=(),
        abstained=False,
        model_id=model_id,
        findings=(Finding("empty_answer", "the model returned an empty answer", Verdict.NOT_FOUND),),
        question=question,
    )
