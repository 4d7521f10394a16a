"""The per-process state of the service and what every endpoint shares: context, review rule, request log.

One Runtime per app. It holds what must exist once per process (the verifier model, the store,
the cache, the LLM client). Endpoints live in actions.py (verify, repair, ingest, feedback),
generation.py (generate) and history.py (the log, the review queue, the eval loop).
"""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from groundwire.calibration.adapt import Targets
from groundwire.calibration.learn import Learned
from groundwire.config import Config
from groundwire.core import cancel
from groundwire.core.cascade import plan_cascade
from groundwire.core.claims import RuleDecomposer, sentences
from groundwire.core.plan import Plan
from groundwire.core.verifier import Verifier
from groundwire.data.cache import SemanticCache
from groundwire.data.provenance import render_context
from groundwire.data.store import RequestRecord, Store
from groundwire.evaluation.evalloop import EvalLoopResult
from groundwire.evaluation.labels import LabelsSection
from groundwire.foundation.errors import ErrorCode
from groundwire.foundation.types import Chunk, Claim, Report
from groundwire.llm.client import LLMClient, client_from_config
from groundwire.pipeline import CheckItem, build_verifier, check
from groundwire.redact import redact_data
from groundwire.service import models
from groundwire.service.errors import ServiceError
from groundwire.service.evalcache import EvalCache
from groundwire.service.learning import Learner, RefitJob, judge_settlement, refit_in_process, refit_labels
from groundwire.service.limits import HasText, WorkBudget, enforce_plan_limits, enforce_work_limits, text_chars
from groundwire.service.observability import ServiceMetrics
from groundwire.service.profiles import ScopeProfiles
from groundwire.service.review import flagged, review_reasons
from groundwire.service.settings import ServiceSettings
from groundwire.service.workers import require_small

ContextBody = models.VerifyRequest | models.GenerateRequest
T = TypeVar("T")


class Runtime:
    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self.model_loads = 0
        self.metrics = ServiceMetrics()
        self.llm: LLMClient | None = None
        """The LLM client when the service runs with --llm, else None."""
        self._verifier: Verifier | None = None
        self._store: Store | None = None
        self._config: Config | None = None
        self._cache: SemanticCache | None = None
        self._profiles = ScopeProfiles(settings.profiles, settings.check) if settings.profiles is not None else None
        self.learner = (Learner(settings.learn_every, self._profiles.folder_for, self._refit)
                        if self._profiles is not None and settings.learn else None)
        """The background refitter of `serve --learn` (service/learning.py); None without it."""
        self._mismatched: list[str] = []
        self._lock = threading.Lock()
        self.eval_cache: EvalCache[EvalLoopResult] = EvalCache()
        """Eval-loop results per release and scope (see evalcache.py)."""
        self.labels_cache: EvalCache[LabelsSection] = EvalCache()
        """The eval loop's labels sections per scope, until a verdict is added (history.eval_labels)."""

    # lifecycle --------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Load the model and open the store; called once when the app starts."""
        with self._lock:
            if self._config is None:
                self._config = self.settings.config if self.settings.config is not None else Config()
            if self.settings.use_llm and self.llm is None:
                self.llm = client_from_config(self._config)
            if self._verifier is None:
                # Shared by the request threads: verify() is thread-safe (per-thread sentence segmenters).
                loading = time.perf_counter()
                verifier = build_verifier(self.settings.check, client=self.llm)
                _warm(verifier)
                if self._profiles is not None:
                    self._mismatched = self._profiles.load_all(verifier, refit_mismatched=self.learner is not None)
                self._verifier = verifier
                self.metrics.model_load_seconds.set(time.perf_counter() - loading)
                self.model_loads += 1
            if self._store is None:
                self._store = Store(self.settings.db_url)
            if self.learner is not None:  # profiles of another model: refitted from their labels, in the background
                for scope in self._mismatched:
                    self.learner.start(scope)
                self._mismatched = []
            if self._cache is None:
                self._cache = SemanticCache(threshold=self.settings.cache_threshold)
                if self.llm is not None:  # /v1/generate reads each question: load the embedder and guard now
                    self._cache.warm()

    def close(self) -> None:
        if self.learner is not None:  # a refit under way finishes before the store closes (or is cut off after 10 s)
            self.learner.wait(timeout=10.0)
        if self.llm is not None:
            self.llm.close()
            self.llm = None
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def verifier(self) -> Verifier:
        return _ready(self._verifier)

    def verifier_for(self, scope: str) -> Verifier:
        """The verifier that routes this scope's checks: its own profile's (serve --profiles), else the service's."""
        return self.verifier if self._profiles is None else self._profiles.verifier_for(scope, self.verifier)

    def verdict_added(self, scope: str) -> None:
        """A reviewer's verdict was recorded in `scope`: counted toward its next refit (`serve --learn`)."""
        if self.learner is not None:
            self.learner.verdict_added(scope)

    def judge_label(self, request_id: str, report: Report, *, scope: str) -> None:
        """With `--judge-labels`: the judge's settlement of this logged answer kept as a label of kind judge (none
        when it settled nothing), counted toward the scope's next refit (service/learning.py)."""
        llm = self.llm
        settled = judge_settlement(report) if self.settings.judge_labels and llm is not None else None
        if settled is None or llm is None:
            return
        self.store.add_judge_label(request_id, scope=scope, faithful=settled.faithful, judge=llm.config.model,
                                   unfaithful_claims=settled.unfaithful_claims)
        self.verdict_added(scope)

    def _refit(self, scope: str, folder: Path) -> Learned:
        """The refit `serve --learn` runs in the background: the scope's logged labels, adapt's fit, the guard; in a
        process of its own (learning.refit_in_process), so that no request waits for the interpreter lock
        while it runs (bench/refit_time.py: in a thread of the server, p95 of small verifies 11 -> 65 ms)."""
        targets = Targets(far=self.settings.refit_target_far, frr=self.settings.refit_target_frr,
                          confidence=self.settings.refit_confidence)
        job = RefitJob(self.settings.db_url, scope, folder, self.settings.check, targets,
                       use=refit_labels(self.settings.judge_labels), judge_weight=self.settings.judge_weight,
                       judge_error=self.settings.judge_error)
        # spawn, not fork: the server's threads and open connections must not be copied into the child
        with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
            return pool.submit(refit_in_process, job).result()

    def profile_folder(self, scope: str) -> Path | None:
        """The scope's profile folder under `serve --profiles`; None without --profiles or without a profile."""
        return None if self._profiles is None else self._profiles.folder_of(scope)

    @property
    def store(self) -> Store:
        return _ready(self._store)

    @property
    def cache(self) -> SemanticCache:
        return _ready(self._cache)

    @property
    def config(self) -> Config:
        return _ready(self._config)

    def health(self) -> models.HealthResponse:
        return models.HealthResponse(
            status="ok",
            model_id=self.verifier.model_id,
            model_form=form if isinstance(form := getattr(self.verifier.scorer, "form", None), str) else None,
            model_loads=self.model_loads,
            release=self.settings.release,
            store=self.store.engine.dialect.name,
        )

    # shared by the endpoints ------------------------------------------------------------------------------

    def sent(self, body: ContextBody) -> list[Chunk] | None:
        """Run at the route, on the event loop: the chunks the body sent, converted once, and held to the work limits
        (413 at once, before the check is queued: no worker is needed to refuse it); None for a body that names
        ingested documents (doc_ids), which `context` reads on the worker and holds to the limits there."""
        if body.chunks is None:
            return None
        chunks = [Chunk(id=c.id, text=c.text, doc_id=c.doc_id, page=c.page, type=c.type) for c in body.chunks]
        enforce_work_limits(self.settings, chunks, getattr(body, "answer", None))
        return chunks

    def looks_small(self, body: models.VerifyRequest, sent: Sequence[Chunk] | None, *,
                    calls_llm: bool = False) -> bool:
        """Whether a verify or repair may be small enough for a reserved worker (service/workers.py): it calls no LLM
        (the judge, `calls_llm`: repair's edits) and its answer and the chunks it `sent` hold at most small_chars
        characters. Ingested documents are read on the worker, where `context` checks their length; `plan` then
        checks the pairs."""
        return not (body.judge or calls_llm) and self._small_text(body.answer, sent or [])

    def context(self, body: ContextBody, sent: list[Chunk] | None, *, scope: str) -> tuple[list[Chunk], str]:
        """The chunks to check against and the context as it is logged (`chunks_of`). Ingested documents are held to
        the work limits here (413; the route held sent chunks to them), and on a reserved worker, a context longer
        than small_chars ends the check here (`require_small`)."""
        chunks, logged = self.chunks_of(body, sent, scope=scope)
        if sent is None:
            answer = getattr(body, "answer", None)
            enforce_work_limits(self.settings, chunks, answer)
            require_small(self._small_text(answer, chunks))
        return chunks, logged

    def chunks_of(self, body: ContextBody, sent: list[Chunk] | None, *, scope: str) -> tuple[list[Chunk], str]:
        """The chunks to check against (`sent`, as the route converted them, else the chunks of the ingested
        documents the body names, read here) and the context as it is logged; no limit is checked here (`context`
        checks them)."""
        if sent is not None:
            # Logged exactly as the caller sent it.
            return sent, json.dumps([c.model_dump(exclude_unset=True) for c in body.chunks or ()], ensure_ascii=False)
        doc_ids = list(dict.fromkeys(body.doc_ids or ()))
        found = self.store.passages(scope=scope, doc_ids=doc_ids)
        missing = sorted(set(doc_ids) - {p.doc_id for p in found})
        if missing:
            # Another scope's documents look exactly like documents that do not exist.
            raise ServiceError(ErrorCode.DOCUMENT_NOT_FOUND, "No ingested document with these ids in your scope.",
                               details={"doc_ids": missing})
        return [p.as_chunk() for p in found], render_context(found)

    def _small_text(self, answer: str | None, chunks: Sequence[HasText]) -> bool:
        """The answer and its chunks hold at most small_chars characters: a check that may be small."""
        return len(answer or "") + text_chars(chunks) <= self.settings.small_chars

    def plan(self, verifier: Verifier, answer: str, chunks: Sequence[Chunk], *, question: str | None,
             claims: Sequence[Claim] | None = None, budget: WorkBudget | None = None) -> Plan:
        """The answer's plan by `verifier` (the scope's, which then runs it), every stage of its cascade planned
        ahead (`core.cascade.plan_cascade`: a cascade's later stage scores the same claims against windows of its own
        model's size, so an escalated answer must fit the limits there too); 413 naming max_claims or max_pairs
        when a stage would score more than allowed, or more than is left of `budget`, before the next stage is
        planned and before anything is scored. On a reserved worker, a plan of more than small_pairs pairs (all
        stages) ends the check there (`require_small`), before anything is scored."""
        pairs = 0

        def admit(stage: Plan) -> None:
            nonlocal pairs
            enforce_plan_limits(self.settings, stage)
            pairs += stage.workload.pairs

        plan = plan_cascade(verifier, answer, chunks, question=question, max_claims=self.settings.max_claims,
                            claims=claims, admit=admit)
        # With a budget (repair's own checks), what the earlier checks spent counts too: a repair whose parts add up to
        # more than a small check leaves the reserved worker for a main one.
        require_small(pairs + (budget.spent if budget is not None else 0) <= self.settings.small_pairs)
        if budget is not None:
            budget.spend(pairs)
        return plan

    def review(self, request_id: str, *texts: str | None, score: float | None, route: str | None,
               findings: Sequence[str] = (),
               failure: str | None = None) -> models.Review:
        """The review-queue verdict (service/review.py): the routing's (escalated, audit by the request id), then the
        score, question and answer, the answer-level checks that fired, and the error of a request that failed
        after its answer was accepted (`failure`)."""
        settings = self.settings
        flags = flagged(score=score, texts=texts, findings=findings, failure=failure,
                        threshold=settings.review_threshold, patterns=settings.high_risk_patterns)
        reasons = review_reasons(request_id=request_id, route=route, score=score, flags=flags,
                                 audit_share=settings.review_audit_share)
        return models.Review(queued=bool(reasons), reasons=[text for _, text in reasons])

    def require_llm(self, what: str) -> LLMClient:
        if self.llm is None:
            raise ServiceError(ErrorCode.LLM_NOT_CONFIGURED,
                               f"{what} needs an LLM endpoint: start the service with --llm and set [llm] in "
                               "groundwire.toml (or GROUNDWIRE_LLM_BASE_URL).")
        return self.llm

    def judge_client(self) -> LLMClient:
        """The judge's endpoint. Asking a service without one for the judge is the request's error (422): the
        same request without `judge` is answered, and a 5xx would send clients into retries that cannot help."""
        if self.llm is None:
            raise ServiceError(ErrorCode.JUDGE_NOT_AVAILABLE,
                               "judge=true needs an LLM endpoint, and this service was started without one "
                               "(--llm); send the request without judge, or ask the operator to configure [llm].")
        return self.llm

    def model_ids(self, report: Report) -> dict[str, str]:
        ids = {"scorer": report.model_id}
        if self.llm is not None:
            ids["llm"] = self.llm.config.model
        return ids

    def log(self, report: Report, out: Mapping[str, object], *, kind: str, scope: str, context: str,
            body: ContextBody, chunks: Sequence[Chunk], started: float, response: str | None = None,
            extra: dict[str, object] | None = None, dumped: dict[str, Any] | None = None) -> None:
        """Write the request-log row for `out` (the response body as plain data); committed before this returns.
        `dumped`: the report as the response holds it (`models.report_json`, serialised once), which the row keeps;
        None: the row serialises it (`Report.to_dict()`)."""
        scores = {c.id: c.score for c in (body.chunks or ())}
        # The task the caller named (it picked the calibration): a labelled row read back from the log keeps it.
        task = {"task": body.task} if isinstance(body, models.VerifyRequest) and body.task else {}
        record = RequestRecord.from_report(
            report,
            scope=scope,
            context=context,
            query=body.question,
            response=response,
            retrieved=[(c.id, scores.get(c.id)) for c in chunks],
            kind=kind,
            latency_ms=(time.perf_counter() - started) * 1000.0,
            model_ids=self.model_ids(report),
            release=self.settings.release,
            # The response body, so the page can show a logged request exactly as it was answered. Its report is
            # the row's `report` column, stored once (history.get_request puts it back).
            extra={"body": {key: value for key, value in out.items() if key != "report"}, **task, **(extra or {})},
            dumped=dumped,
        )
        # No key at rest: a key the caller put in its question, answer, chunks or any other field is not stored.
        redacted = redact_data(replace(record, id=str(out["request_id"])))
        # Past its time budget the caller has been answered 504 (workers.WorkerPool): no row for a result no one
        # got. From here on the caller waits for this row instead (core.cancel: commit).
        cancel.commit()
        self.store.log_request(redacted)
        self.judge_label(str(out["request_id"]), report, scope=scope)
        self.metrics.observe(kind, report, seconds=time.perf_counter() - started, extra=extra)


_WARM_ANSWER = "The service is warm, and it answers at once."
_WARM_CHUNK = Chunk(id="S1", text="The service is warm. It answers at once.")


def _warm(verifier: Verifier) -> None:
    """One check before the service reports ready: the scorer's first inference (onnxruntime allocates and plans
    on its first run), the sentence splitter's import and the lexical baseline are paid here, not by the first
    request. With an LLM decomposer only the scorer and the splitter are warmed: start-up makes no LLM call."""
    if isinstance(verifier.decomposer, RuleDecomposer):
        check(verifier, CheckItem(_WARM_ANSWER, [_WARM_CHUNK]))
    else:
        sentences(_WARM_ANSWER)
        verifier.scorer.score([(_WARM_CHUNK.text, _WARM_ANSWER)])


def _ready(value: T | None) -> T:
    if value is None:
        raise ServiceError(ErrorCode.NOT_READY, "The service is not started (or is shutting down); retry in a moment.")
    return value
