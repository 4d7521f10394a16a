"""answer + chunks -> Report: claims, deterministic checks, one batched pair matrix, aggregation, verdicts, routing.

Aggregation is written once here, whatever the scorer: a claim's support is the max over every window of
every chunk, its score the max over its windows of each window's score capped by that window's own check findings
(the argmax is its citation; core.verdicts.best_window), and the answer's score is the min over its claims. Adding
a chunk can therefore never lower a claim's score (with a combiner: never by a check's cap), and adding a claim can
never raise the answer's.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Never

import numpy as np

from groundwire.core.batched import score_in_batches
from groundwire.core.cancel import awaited, checkpoint
from groundwire.core.cascade import run_later
from groundwire.core.checks import validate_opt_ins
from groundwire.core.checks.citations import validate_output
from groundwire.core.checks.context import ContextIndex
from groundwire.core.claim_state import (
    ClaimState,
    Matrix,
    Scoring,
    claim_note,
    describe,
    window_caps,
)
from groundwire.core.claims import Decomposer, RuleDecomposer, StoppingDecomposer, claimless, sentences
from groundwire.core.figures import canonical_text
from groundwire.core.meaning import Alignment, align
from groundwire.core.memo import remembered
from groundwire.core.plan import Plan, Workload, as_chunks
from groundwire.core.pruning import Pruner
from groundwire.core.routing import Router
from groundwire.core.settings import CheckSettings, moved_settings_error
from groundwire.core.spans import unsupported_spans
from groundwire.core.structured import rendered_chunk
from groundwire.core.tracing import traced
from groundwire.core.verdicts import best_window, claim_verdict, decided_by
from groundwire.core.windows import claim_windows
from groundwire.foundation.errors import ErrorCode, InputError
from groundwire.foundation.textutil import content_words, language_warnings
from groundwire.foundation.types import (
    REFUSAL_TOKEN,
    Chunk,
    Claim,
    ClaimResult,
    DecidedBy,
    Report,
    ReportMeta,
    Route,
    SkippedSentence,
    Thresholds,
    Verdict,
    ordered,
)
from groundwire.scoring import get_scorer
from groundwire.scoring.base import Combiner, Scorer, StagedScorer, calibration_of
from groundwire.scoring.combiner import calibration_key, threshold_keys
from groundwire.scoring.embedder import Embedder, default_embedder
from groundwire.scoring.lexical import LexicalScorer

DEFAULT_ACCEPT_AT = 0.8
DEFAULT_REJECT_AT = 0.2
NO_CLAIMS_SCORE = 1.0
"""An answer with no checkable claims asserts nothing unsupported: it scores 1.0, with a warning. It is accepted
when it declines to answer (a refusal: claims.REFUSAL_REASONS), and escalated otherwise (decided: rejected)."""
STRUCTURED_TASK = "data2text"
"""The task a verify() call is taken to be when a chunk is a JSON record and no task is given."""


_VERIFIER_KEYWORDS = ("scorer", "settings", "decomposer", "combiner", "pruner", "embedder", "escalate_to", "after")


class Verifier:
    """Verifies any number of answers with the scorer it is given (loaded once by the caller), as `settings` say.

    >>> from groundwire.scoring import get_scorer
    >>> verifier = Verifier(get_scorer("lexical"), CheckSettings(accept_at=0.85))
    >>> report = verifier.verify("The plan costs $10.", ["The plan costs $10 a month."])
    >>> report.route.value
    'accept'

    It receives a scorer and objects, and resolves no names: `pipeline.build_verifier(settings)` does (the scorer and
    the cascade's by `scoring.get_scorer`, the pruner, an LLM decomposer), and is how every surface builds one. A name,
    or no scorer, is deprecated: it warns, and `get_scorer` resolves it as `Verifier(get_scorer(name))` would.
    """

    def __init__(
        self,
        scorer: Scorer | str | None = None,
        settings: CheckSettings | None = None,
        *,
        decomposer: Decomposer | None = None,
        combiner: Combiner | None = None,
        pruner: Pruner | None = None,
        embedder: Embedder | None = None,
        escalate_to: Verifier | None = None,
        after: str | None = None,
        **moved: Never,
    ) -> None:
        """`settings`: the check's settings (default `CheckSettings()`); of its names, this reads none: `scorer` is
        the scorer given, and decomposer = "llm", `pruner` and `cascade` need their objects here (`decomposer`,
        `pruner`, `escalate_to`), which build_verifier makes. `combiner` and `embedder` replace the scorer's
        calibrated combiner and the shared embedder; `after`: the first stage's model id, for a cascade's second."""
        if moved:  # the settings keywords of release 0.1 (CHANGELOG.md), or another: the one rule's TypeError
            raise moved_settings_error(moved, _VERIFIER_KEYWORDS)
        self.settings = settings = CheckSettings() if settings is None else settings
        """What the check reads (thresholds, routing, citations, figures, meaning, opt-in checks) as given."""
        given = {"decomposer": decomposer, "pruner": pruner, "cascade": escalate_to}
        if missing := [part for part in sorted(settings.named_parts()) if given[part] is None]:
            raise ValueError(
                f"the settings name a {' and a '.join(missing)} this verifier was not given: build it with "
                "groundwire.pipeline.build_verifier(settings), which resolves them"
            )
        self.scorer: Scorer = _named_scorer(scorer) if scorer is None or isinstance(scorer, str) else scorer
        # As a cascade's second stage (`after`: the first stage's model id), the scorer's calibration for that.
        staged = self.scorer.calibration_after(after) if after and isinstance(self.scorer, StagedScorer) else None
        calibration = staged or calibration_of(self.scorer)
        self.calibrated_after = after if staged is not None else None
        """The first stage's model id when this verifier runs a second-stage calibration, else None."""
        calibrated = calibration.thresholds or (DEFAULT_ACCEPT_AT, DEFAULT_REJECT_AT)
        self.accept_at, self.reject_at = ordered(
            (
                calibrated[0] if settings.accept_at is None else settings.accept_at,
                calibrated[1] if settings.reject_at is None else settings.reject_at,
            )
        )
        self.decomposer: Decomposer = decomposer or RuleDecomposer()
        self.combiner: Combiner | None = combiner if combiner is not None else calibration.combiner
        self.pruner = pruner
        self.require_citations = settings.require_citations
        """Flag answer sentences without a citation marker on every verify() call that does not say otherwise."""
        # Thresholds calibrated per task type apply only while the caller has not set thresholds explicitly.
        explicit = settings.accept_at is not None or settings.reject_at is not None
        self.task_thresholds: Mapping[str, Thresholds] = {} if explicit else dict(calibration.task_thresholds)
        rejects = [self.reject_at, *(pair[1] for pair in self.task_thresholds.values())]
        chosen = calibration.decide_at if settings.decide_at is None else settings.decide_at
        router = Router.of(settings.route, chosen, reject_ats=rejects, cascade=escalate_to is not None)
        self.router = replace(router, reject_needs_finding=calibration.reject_needs_finding)
        """Three-way, or decided at `decide_at` (the caller's, else the calibrated one), with the reject guard: `route`."""
        self.lexical_baseline = LexicalScorer()
        """Scores the `lexical_support` feature the combiners were fitted on: part of the features, not a choice."""
        self.canonical_figures = settings.canonical_figures
        """The scorer and the overlap features see every figure in one spelling in window and claim alike
        (core.figures): "3,600" as "3600", "five" as "5". On by default since calibration v6 (docs/how-it-works.md)."""
        recorded = calibration.canonical_figures
        self.calibration_warning: str | None = (
            f"the scorer's calibration was fitted with canonical_figures = {str(recorded).lower()}, and this check "
            f"reads figures with canonical_figures = {str(self.canonical_figures).lower()}: its scores and "
            "thresholds do not match; recalibrate (`groundwire train combiner`) or use the calibrated setting"
            if recorded is not None and recorded != self.canonical_figures and combiner is None
            else None
        )
        """Set when the figures are read otherwise than the calibration was fitted; every report carries it."""
        self.meaning = bool(calibration.meaning) if settings.meaning is None else settings.meaning
        """Align each claim to its best evidence sentence by meaning (core.meaning): the paraphrase gate, the
        citation, and the combiner's meaning features. None: as the scorer's calibration was fitted."""
        self._embedder = embedder
        self.checks_on = frozenset({"entities"} if settings.entities else ())
        """The opt-in claim checks this verifier runs (`ClaimCheck.opt_in`: "entities", spaCy's names and roles)."""
        validate_opt_ins(self.checks_on)
        self.escalate_to = escalate_to
        """The cascade's next stage (a larger model, issue 19): an answer this verifier escalates is checked again by
        it, with the same claims and its own windows and thresholds, and its report is the answer's. The stages
        are listed in the report's extra["cascade"]. None: no cascade."""

    def thresholds_for(self, task: str | None) -> Thresholds:
        """(accept_at, reject_at) for an answer of this task: its own calibration where the scorer has one."""
        return next(
            (self.task_thresholds[key] for key in threshold_keys(task) if key in self.task_thresholds),
            (self.accept_at, self.reject_at),
        )

    @property
    def model_id(self) -> str:
        """The scorer's model id, which every report names."""
        return self.scorer.model_id

    def route(self, score: float | None, thresholds: Thresholds | None = None, *, doubtful: bool = False) -> Route:
        """The one routing rule, for a claim and an answer (`core.routing.Router.route`): three ways, or decided.
        `score` None: not scored; `doubtful`: the score alone may not accept it (never ACCEPT)."""
        return self.router.route(score, thresholds or (self.accept_at, self.reject_at), doubtful=doubtful)

    def workload(self, answer: str, chunks: Sequence[Chunk | str], *, question: str | None = None) -> Workload:
        """Count the claims, windows and pairs `verify` would score, without scoring (`plan(...).workload`)."""
        if not answer.strip():
            return Workload(0, 0, 0)
        return self.plan(answer, chunks, question=question).workload

    def plan(
        self,
        answer: str,
        chunks: Sequence[Chunk | str],
        *,
        question: str | None = None,
        max_claims: int | None = None,
        claims: Sequence[Claim] | None = None,
    ) -> Plan:
        """Split the answer into claims and the context into windows, without scoring: what `run` executes, and
        what a caller reads to refuse a request that costs more than it allows before paying for it.

        With `max_claims`, an answer with more claims than that gets an incomplete plan (no windows, it cannot run),
        and a decomposer that can stop early (the rule-based one) stops splitting at max_claims + 1 claims.
        `claims`: the answer's claims, split already (the generator checks one report's claims against other
        samples): they are used as given, and the decomposer is not called."""
        return self._plan_read(answer, tuple(as_chunks(chunks)), question, max_claims, claims)

    def plan_after(self, earlier: Plan) -> Plan:
        """This stage's plan of the claims and chunks (read already) an earlier stage of the cascade planned."""
        return self._plan_read(earlier.answer, earlier.context, earlier.question, None, earlier.claims)

    def _plan_read(
        self,
        answer: str,
        context: tuple[Chunk, ...],
        question: str | None,
        max_claims: int | None,
        claims: Sequence[Claim] | None,
    ) -> Plan:  # `plan`, of chunks read already (`as_chunks`)
        started = time.perf_counter()
        if not answer or not answer.strip():
            raise InputError(
                "the answer is empty: pass the model's answer text (or NOT_IN_CONTEXT for an abstention)",
                code=ErrorCode.EMPTY_ANSWER,
            )
        timings: dict[str, float] = {}
        if answer.strip() == REFUSAL_TOKEN:
            return Plan(
                answer,
                question,
                context,
                context,
                (),
                (),
                np.zeros((0, 0), dtype=bool),
                complete=True,
                timings=timings,
                abstained=True,
            )
        # The answer is split into sentences once, here: everything after reads plan.sentences.
        within = True  # no split limit was passed
        if claims is None and isinstance(self.decomposer, StoppingDecomposer):
            split = self.decomposer.split(answer, question=question, limit=max_claims)
            claims, within, found = split.claims, split.complete, split.sentences
        else:
            claims = list(claims) if claims is not None else self.decomposer.decompose(answer, question=question)
            found = sentences(answer)
        timings["decompose"] = time.perf_counter() - started
        over = not within or (max_claims is not None and len(claims) > max_claims)
        if not claims or over:  # nothing to window: no claims, or a plan the caller will refuse
            return Plan(
                answer,
                question,
                context,
                context,
                tuple(claims),
                (),
                np.zeros((len(claims), 0), dtype=bool),
                complete=not over,
                timings=timings,
                sentences=found,
            )
        mark = time.perf_counter()
        scoring_context = tuple(rendered_chunk(chunk) for chunk in context)
        windows, allowed = claim_windows(claims, scoring_context, self.scorer.max_tokens, self.scorer.count_tokens)
        timings["windows"] = time.perf_counter() - mark
        return Plan(
            answer,
            question,
            context,
            scoring_context,
            tuple(claims),
            tuple(windows),
            allowed,
            complete=True,
            timings=timings,
            sentences=found,
        )

    def verify(
        self,
        answer: str,
        chunks: Sequence[Chunk | str],
        *,
        question: str | None = None,
        require_citations: bool | None = None,
        task: str | None = None,
    ) -> Report:
        """Verify one answer against its chunks: `run(plan(answer, chunks, question=question))`.

        `task` ("qa", "summary", "data2text", "dialogue", "claim") selects the combiner and thresholds
        calibrated for that kind of answer, where the scorer has them ("summary/long" for an answer of 4 or
        more claims; `combiner.calibration_key`); without it, a context holding a JSON record is taken as
        "data2text" and anything else gets the pooled calibration. `require_citations` None: the verifier's own.
        """
        return self.run(self.plan(answer, chunks, question=question), require_citations=require_citations, task=task)

    @traced("groundwire.verify")
    def run(self, plan: Plan, *, require_citations: bool | None = None, task: str | None = None) -> Report:
        """Execute a plan made by `plan` (see `verify` for the options): checks, the one scoring call, verdicts;
        then, for an answer this stage escalates, the next stage of the cascade (`escalate_to`), if there is one."""
        report = self._run_stage(plan, require_citations=require_citations, task=task)
        if report.route is not Route.ESCALATE or self.escalate_to is None:
            return report
        return run_later(self.escalate_to, report, plan, require_citations=require_citations, task=task)

    def _run_stage(self, plan: Plan, *, require_citations: bool | None, task: str | None) -> Report:
        if not plan.complete:
            raise ValueError(
                "this plan stopped at its claim limit (claims, or sentences per claim allowed): it cannot be run"
            )
        started = time.perf_counter() - sum(plan.timings.values())
        answer, question, context = plan.answer, plan.question, list(plan.context)
        citations = self.require_citations if require_citations is None else require_citations
        findings = tuple(validate_output(answer, context, plan.sentences, require_citations=citations))
        warnings = language_warnings(answer, [c.text for c in context]) + self.router.warnings
        if self.calibration_warning is not None:
            warnings += (self.calibration_warning,)
        timings: dict[str, float] = {key: value for key, value in plan.timings.items() if key != "windows"}

        def finished(
            score: float,
            route: Route,
            claims: Sequence[ClaimResult] = (),
            *,
            abstained: bool = False,
            meta: ReportMeta | None = None,
        ) -> Report:
            timings["total"] = time.perf_counter() - started
            return Report(
                answer=answer,
                score=score,
                route=route,
                claims=tuple(claims),
                abstained=abstained,
                model_id=self.model_id,
                timings=timings,
                findings=findings,
                warnings=warnings,
                question=question,
                meta=meta or ReportMeta(),
            )

        if plan.abstained:
            return finished(NO_CLAIMS_SCORE, Route.ACCEPT, abstained=True)
        claims = list(plan.claims)
        # A bare answer ("1959") is a claim although its sentence alone would be skipped.
        skipped = tuple(
            SkippedSentence(s.text, s.skip_reason)
            for s in plan.sentences
            if s.skip_reason and not any(c.span[0] < s.span[1] and s.span[0] < c.span[1] for c in claims)
        )
        if not claims:
            # Nothing is asserted (score 1.0), but only a refusal is safe to accept unseen (claims.declines).
            declines, warning = claimless(s.reason for s in skipped)
            warnings += (warning,)
            # An answer citing a passage nobody retrieved, or misusing the refusal token, is never accepted outright.
            route = self.route(NO_CLAIMS_SCORE, doubtful=bool(findings) or not declines)
            return finished(NO_CLAIMS_SCORE, route, meta=ReportMeta(skipped=skipped))
        # JSON records are checked as one statement per line; evidence spans then index the rendered text.
        scoring_context = list(plan.scoring_context)
        rendered = {new.id: new.text for old, new in zip(context, scoring_context, strict=True) if new is not old}
        if task is None and rendered:
            task = STRUCTURED_TASK
        calibration = calibration_key(task, len(claims))
        thresholds = self.thresholds_for(calibration)
        results, (windows, pairs_scored) = self._verify_claims(
            answer,
            plan,
            timings=timings,
            task=calibration,
            thresholds=thresholds,
        )
        meta = ReportMeta(
            task=task,
            calibration=calibration,
            thresholds=self.router.described(thresholds),  # with the decide_at of a decided check
            skipped=skipped,
            windows=windows,
            pairs_scored=pairs_scored,
            rendered_chunks=rendered or None,
        )
        # A claim the model could not see at all has no score to take the min of: it is left out of the
        # answer score, and the answer can then at best be escalated (in decide mode, rejected).
        scored = [r.score for r in results if r.support is not None or r.decided_by is DecidedBy.CHECKS]
        score = min(scored, default=NO_CLAIMS_SCORE)
        if len(scored) < len(results):
            warnings += (
                f"{len(results) - len(scored)} claim(s) could not be scored; the answer score covers the rest",
            )
        # Accepted only when every claim is, fully scored, and no citation finding stands against the answer.
        doubtful = bool(findings) or any(not r.scored or r.route is not Route.ACCEPT for r in results)
        unfounded = self.router.unfounded(calibration, any(r.route is Route.REJECT for r in results))  # reject guard
        route = self.router.route(score, thresholds, doubtful=doubtful, unfounded=unfounded)
        return finished(score, route, results, meta=meta)

    def _verify_claims(
        self, answer: str, plan: Plan, *, timings: dict[str, float], task: str | None, thresholds: Thresholds
    ) -> tuple[list[ClaimResult], tuple[int, int]]:
        """The claims' results, and the windows and (window, claim) pairs scored. The plan's `scoring_context` is
        what is scored (JSON records rendered to statements); its `context` the chunks as given."""
        claims, context, retrieved = list(plan.claims), list(plan.scoring_context), list(plan.context)
        states = [ClaimState(position, claim) for position, claim in enumerate(claims)]
        chunk_ids = [chunk.id for chunk in context]
        mark = time.perf_counter()
        index = ContextIndex.shared(context, sources=retrieved)
        for state in states:
            state.read_figures(index)
            state.run_checks(index, chunk_ids, opted_in=self.checks_on)
        timings["checks"] = time.perf_counter() - mark
        timings["windows"] = plan.timings.get("windows", 0.0)
        windows, allowed = list(plan.windows), plan.allowed

        mark = time.perf_counter()
        compared_claims = [self.compared(claim.text) for claim in claims]
        compared_windows = [self._compared_step(window.text) for window in windows]
        matrix = self._score_matrix(compared_claims, compared_windows, allowed)
        timings["score"] = time.perf_counter() - mark

        mark = time.perf_counter()
        context_words = frozenset(w for chunk in context for w in content_words(chunk.text))
        scoring = Scoring(
            matrix=matrix,
            windows=windows,
            context=context,
            chunk_ids=chunk_ids,
            thresholds=thresholds,
            context_words=context_words,
            compared_claims=compared_claims,
            compared_windows=compared_windows,
            compared_context_words=frozenset(
                w for chunk in context for w in content_words(self._compared_step(chunk.text))
            )
            if self.canonical_figures
            else context_words,
        )
        lexical = self._lexical_support(compared_claims, compared_windows, allowed, matrix)
        scorable_rows = [bool(allowed[position].any()) for position in range(len(claims))]
        alignments = self._align([claim.text for claim in claims], context, timings)
        for state, scorable in zip(states, scorable_rows, strict=True):
            state.scorable = scorable
            aligned = alignments[state.position]
            described = partial(
                describe,
                state,
                meaning=self.meaning,
                scoring=scoring,
                aligned=aligned,
                lexical_support=float(lexical[state.position]),
                n_claims=len(claims),
            )
            state.readings = state.read_windows(
                aligned, scoring, allowed[state.position], index, describe=described, opted_in=self.checks_on
            )
        if self.combiner is not None:  # one call for every reading of every claim
            every = [reading for state in states for reading in state.readings]
            calibrated = self.combiner.predict([reading.features for reading in every], task=task)
            for reading, value in zip(every, calibrated, strict=True):
                reading.calibrated = float(value)
        guarded = self.router.asks_finding(task)  # the reject guard: a claim is rejected only on a finding
        results = [self._claim_result(state, scoring, guarded) for state in states]
        results = [
            r
            if r.verdict is Verdict.SUPPORTED
            else replace(r, unsupported_spans=unsupported_spans(answer, r.claim.span, scoring.context_words))
            for r in results
        ]
        timings["aggregate"] = time.perf_counter() - mark
        return results, (len(windows), matrix.pairs_scored)

    def _align(self, claims: list[str], context: list[Chunk], timings: dict[str, float]) -> list[Alignment | None]:
        """Each claim's best evidence sentence by meaning, when the meaning layer is on (one embedding call)."""
        if not self.meaning:
            return [None] * len(claims)
        mark = time.perf_counter()
        if self._embedder is None:  # the process's shared all-MiniLM-L6-v2, loaded on the first check that needs it
            self._embedder = awaited(default_embedder)  # under a time budget, a long load stops the check only
        aligned = align(claims, context, self._embedder)
        timings["meaning"] = time.perf_counter() - mark
        return aligned

    def compared(self, text: str) -> str:
        """A text as the model and the lexical features compare it: with `canonical_figures`, every figure in one
        spelling ("3,600" and "3600", "12 kilometres" and "12 km" read alike), else as written. Checks, evidence
        and unsupported spans keep the text as written."""
        # Once for every check of a task on one context (repair's: core.memo).
        return remembered("canonical_text", text, partial(canonical_text, text)) if self.canonical_figures else text

    def _compared_step(self, text: str) -> str:
        """`compared`, as one step of a check that stops at its time budget (core.cancel)."""
        checkpoint()
        return self.compared(text)

    def _lexical_support(
        self, claims: list[str], windows: list[str], allowed: np.ndarray, matrix: Matrix
    ) -> np.ndarray:
        """Per claim, the lexical baseline's best score over the claim's own windows: a combiner feature that
        catches novel names and figures a small model reads past. Cheap next to a model call."""
        if isinstance(self.scorer, LexicalScorer):  # its own matrix already holds these scores
            return matrix.support.max(axis=1) if matrix.support.size else np.zeros(len(claims))
        rows, cols = np.nonzero(allowed)
        best = np.zeros(len(claims), dtype=np.float32)
        if len(rows):
            pairs = [(windows[j], claims[i]) for i, j in zip(rows, cols, strict=True)]
            scores = score_in_batches(self.lexical_baseline, pairs)
            np.maximum.at(best, rows, scores.support)
        return best

    def _score_matrix(self, claims: list[str], premises: list[str], allowed: np.ndarray) -> Matrix:
        """Claims and window texts as compared (`compared`)."""
        keep = allowed.copy()
        if self.pruner is not None:
            keep &= np.asarray(self.pruner.keep(claims, premises), dtype=bool)
        rows, cols = np.nonzero(keep)
        pairs = [(premises[j], claims[i]) for i, j in zip(rows, cols, strict=True)]
        scores = score_in_batches(self.scorer, pairs)  # one batched call, or batches that fit the time budget
        support = np.zeros(keep.shape, dtype=np.float32)
        support[rows, cols] = scores.support
        contradiction = None
        if scores.contradiction is not None:
            contradiction = np.zeros(keep.shape, dtype=np.float32)
            contradiction[rows, cols] = scores.contradiction
        truncated = np.zeros(len(claims), dtype=bool)
        if scores.truncated is not None:
            np.logical_or.at(truncated, rows, scores.truncated)
        return Matrix(support, contradiction, truncated, len(pairs))

    def _claim_result(self, state: ClaimState, scoring: Scoring, guarded: bool) -> ClaimResult:
        matrix, thresholds, position = scoring.matrix, scoring.thresholds, state.position
        support = float(matrix.support[position].max()) if state.scorable else None
        contradiction = None
        # An unscorable claim's row holds no scores, only the matrix's zeros (or no windows at all): its
        # contradiction is unknown, not 0. A scorable claim has at least one window.
        if state.scorable and matrix.contradiction is not None:
            contradiction = float(matrix.contradiction[position].max())
        fully_scored = state.scorable and not bool(matrix.truncated[position])
        note = claim_note(state.claim.text, fully_scored=fully_scored, scorable=state.scorable)

        # The score: each reading's (the combiner's, else the model's support at its window) capped by its own
        # findings, the max over the readings; the chosen reading's evidence and findings become the claim's.
        readings = state.readings
        scores = [r.calibrated if r.calibrated is not None else r.features["support"] for r in readings]
        score, chosen = best_window(scores, [window_caps(r.features) for r in readings], thresholds)
        state.choose(readings[chosen])
        hard = state.hard_verdicts
        if copied := state.verbatim and support is not None:  # SUPPORTED, whatever the model made of it (verbatim.py)
            score, route, verdict = 1.0, self.route(1.0, thresholds), Verdict.SUPPORTED
        else:
            # Not scored and no finding: unknown, not unsupported (a person or the judge should look; decide mode
            # rejects it). Scored only in part, or negated against its evidence: never accepted outright (the
            # negation cap keeps such a claim below accept_at; decide mode, with no one to look, rejects it).
            unknown = support is None and not hard
            doubtful, unfounded = not fully_scored or state.signalled, guarded and not state.found_against
            route = self.router.route(None if unknown else score, thresholds, doubtful=doubtful, unfounded=unfounded)
            # A negation flip is the claim's own signal of a contradiction the figures cannot show.
            figures_match = state.figures_match and not state.signalled
            verdict = claim_verdict(route, support or 0.0, contradiction, findings=hard, figures_match=figures_match)
        cited = state.evidence if support is not None else None
        return ClaimResult(
            claim=state.claim,
            verdict=verdict,
            score=float(score),
            support=support,
            contradiction=contradiction,
            chunk_id=cited.chunk.id if cited is not None else None,
            evidence_span=cited.span if cited is not None else None,
            evidence=cited.text if cited is not None else None,
            checks=tuple(finding for _, finding in state.findings),
            route=route,
            scored=fully_scored,
            decided_by=decided_by(copied=copied, hard=bool(hard), paraphrase=state.paraphrase, route=route),
            note=note,
            features=state.features,
            other_windows=state.other_windows,
        )


def _named_scorer(name: str | None) -> Scorer:
    """The deprecated `Verifier(name)` and `Verifier()`: warn, then resolve the name with `scoring.get_scorer`."""
    given, call = ("", "get_scorer()") if name is None else (repr(name), f"get_scorer({name!r})")
    instead = f"Verifier({call}) (from groundwire.scoring import get_scorer), or pipeline.build_verifier(settings)"
    warnings.warn(f"Verifier({given}) is deprecated: write {instead}", DeprecationWarning, stacklevel=3)
    return get_scorer(name)
